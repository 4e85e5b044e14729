// Code files and learnings through the SDK's real Client over stdio against the built CLI, for both backends,
// in a storage folder of this file's own (and the same folder again after a restart).
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BackendKind, RunResult } from '../../src/engine/types';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';

const storageRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-stores-mcp-'));
after(() => fs.rmSync(storageRoot, { recursive: true, force: true }));

const text = (raw: CallToolResult) => raw.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
/** The text for a reader, before the JSON of the structured content. */
const firstText = (raw: CallToolResult) => (raw.content[0] as { text: string }).text;

for (const backend of ['pyodide', 'python'] as BackendKind[]) {
  describe(`code files and learnings over stdio — ${backend}`, () => {
    const storage = path.join(storageRoot, backend);
    let conn: StdioConnection;
    const connect = async () => {
      conn = await connectStdio(['--storage', storage, '--backend', backend]);
    };
    const call = async (
      name: string,
      args: Record<string, unknown>,
      options: { onprogress?: (p: { message?: string }) => void } = {},
    ) =>
      (await conn.client.callTool({ name, arguments: args }, undefined, {
        timeout: 120_000,
        ...options,
      })) as CallToolResult;
    const structured = <T = Record<string, unknown>>(raw: CallToolResult) => raw.structuredContent as T;

    before(connect);
    after(async () => {
      await conn?.close();
    });

    test('lists the store tools with their schemas, and run_python takes a file', async () => {
      const { tools } = await conn.client.listTools();
      const required = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema.required ?? []]));
      assert.deepEqual(required.code_file, ['action', 'filename']);
      assert.deepEqual(required.learnings, ['action']);
      for (const name of ['code_file', 'learnings']) {
        assert.ok((tools.find((t) => t.name === name)?.description ?? '').length > 20, `${name} is described`);
      }
      assert.ok(tools.find((t) => t.name === 'run_python')?.inputSchema.properties?.file, 'run_python has file');
    });

    test('a file built with create and appends runs exactly like its concatenated code', async () => {
      const chunks = [
        'def area(r):\n    return 3.14159 * r * r\n',
        'total = 0\nfor r in range(1, 4):\n    total += area(r)\n',
        "import sys\nprint(f'total={total:.3f}')\nprint('done', file=sys.stderr)\n",
      ];
      const created = await call('code_file', { action: 'create', filename: 'circles.py', content: chunks[0] });
      assert.equal(created.isError, undefined);
      const { mtime, ...written } = structured(created);
      assert.deepEqual(written, { filename: 'circles.py', bytes_written: chunks[0].length, size: chunks[0].length });
      assert.ok(!Number.isNaN(Date.parse(String(mtime))));
      assert.equal(firstText(created), `wrote ${chunks[0].length} bytes to circles.py (now ${chunks[0].length} bytes)`);
      for (const chunk of chunks.slice(1))
        await call('code_file', { action: 'append', filename: 'circles.py', content: chunk });

      const fromFile = await call('run_python', { file: 'circles.py', session: 'from-file' });
      const direct = await runPython(conn.client, { code: chunks.join(''), backend, session: 'direct' });
      const result = structured<RunResult>(fromFile);
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.equal(result.stdout, 'total=43.982\n');
      assert.equal(result.backend, backend);
      assert.equal(result.session, 'from-file');
      for (const key of ['success', 'stdout', 'stderr', 'diagnostics'] as const)
        assert.deepEqual(result[key], direct.result[key], key);
      assert.equal(
        firstText(fromFile).split('\n[ok in')[0],
        firstText(direct.raw).split('\n[ok in')[0],
        'the same text rendering',
      );

      const globals = await runPython(conn.client, { code: 'print(area(2))', backend, session: 'from-file' });
      assert.equal(globals.result.stdout, '12.56636\n', 'the file ran in the named session, whose globals persist');
    });

    test('a failing file fails like code does, and its output streams as progress', async () => {
      // The pause keeps the progress out of the response's pipe read: the SDK client handles notifications a
      // microtask late, so a notification read together with the response is dropped.
      await call('code_file', {
        action: 'create',
        filename: 'fails.py',
        content: 'import time\nprint("before", flush=True)\ntime.sleep(0.05)\n{}["missing"]\n',
      });
      const progress: string[] = [];
      const raw = await call(
        'run_python',
        { file: 'fails.py', backend, timeout_s: 60 },
        { onprogress: (p) => progress.push(p.message ?? '') },
      );
      const result = structured<RunResult>(raw);
      assert.equal(raw.isError, true);
      assert.equal(result.diagnostics?.error_type, 'RuntimeError');
      assert.match(result.diagnostics?.message ?? '', /^KeyError: 'missing'/);
      assert.equal(result.stdout, 'before\n');
      assert.ok(progress.join('').includes('before'), `progress carried the output: ${JSON.stringify(progress)}`);
    });

    test('code_file read round-trips the content', async () => {
      const content = '# ünïcode ✓\nrows = [1, 2, 3]\n\n\tprint(rows)  \n';
      await call('code_file', { action: 'create', filename: 'notes.md', content });
      const raw = await call('code_file', { action: 'read', filename: 'notes.md' });
      assert.equal(firstText(raw), content);
      assert.equal(structured(raw).content, content);
      assert.equal(structured(raw).size, Buffer.byteLength(content));
    });

    test('traversal, absolute paths and bad names are refused with a clear error, and the server keeps serving', async () => {
      for (const [tool, args] of [
        ['code_file', { action: 'create', content: 'pwned' }],
        ['code_file', { action: 'read' }],
        ['run_python', {}],
      ] as const) {
        for (const filename of ['../../etc/passwd', '/etc/passwd']) {
          const raw = await call(tool, { ...args, [tool === 'run_python' ? 'file' : 'filename']: filename });
          assert.equal(raw.isError, true, `${tool} ${filename}`);
          assert.match(
            text(raw),
            /^\[INVALID_ARGUMENT\] filename ".*" must be a plain name without folders or path separators/,
          );
          assert.equal(raw.structuredContent, undefined, 'nothing ran: no result to structure');
        }
      }
      assert.match(
        text(await call('code_file', { action: 'create', filename: 'tool.exe', content: '' })),
        /must end in one of \.py/,
      );
      assert.match(text(await call('code_file', { action: 'append', filename: 'x.py' })), /append needs content/);
      assert.match(
        text(await call('run_python', { file: 'missing.py' })),
        /no code file named "missing.py" \(the code files are: .*circles\.py/,
      );
      assert.match(text(await call('run_python', { file: 'notes.md' })), /only \.py files run/);
      assert.match(
        text(await call('run_python', { file: 'circles.py', code: 'print(1)' })),
        /give either code or file, not both/,
      );
      assert.match(
        text(await call('code_file', { action: 'overwrite', filename: 'x.py', content: 'y' })),
        /Invalid arguments for tool code_file/,
      );
      assert.equal(fs.existsSync(path.join(storage, 'etc')), false);
      const { result } = await runPython(conn.client, { code: 'print("still serving")', backend });
      assert.equal(result.stdout, 'still serving\n');
    });

    test('a learning is stored, attached as a hint to a matching failed run, and found by search', async () => {
      const added = await call('learnings', {
        action: 'add',
        kind: 'error',
        error_pattern: "KeyError: 'price'",
        failed_approach: 'row["price"]',
        successful_approach: 'use row.get("price", 0.0): some rows have no price',
        tags: ['dict', 'Pricing'],
      });
      assert.equal(added.isError, undefined);
      const {
        updated,
        learnings: [learning],
        total: stored,
      } = structured<{
        updated: boolean;
        total: number;
        learnings: { id: string; tags: string[]; use_count: number }[];
      }>(added);
      const { id } = learning;
      assert.match(id, /^[0-9a-f]{8}$/);
      assert.equal(updated, false);
      assert.equal(stored, 1);
      assert.deepEqual(learning.tags, ['dict', 'pricing']);
      assert.equal(firstText(added), `saved learning ${id}`);

      const failed = await runPython(conn.client, { code: 'row = {"name": "tea"}\ncost = row["price"]', backend });
      assert.equal(failed.result.success, false);
      assert.deepEqual(failed.result.diagnostics?.hints, [
        'Past fix for KeyError: \'price\': use row.get("price", 0.0): some rows have no price',
      ]);
      assert.match(text(failed.raw), /\nhint: Past fix for KeyError: 'price': use row\.get/);
      const unrelated = await runPython(conn.client, { code: '1/0', backend });
      assert.equal(unrelated.result.diagnostics?.hints, undefined);

      const found = await call('learnings', { action: 'search', query: 'pricing' });
      const { learnings, total } = structured<{ learnings: { id: string; use_count: number }[]; total: number }>(found);
      assert.equal(total, 1);
      assert.deepEqual(
        learnings.map((l) => [l.id, l.use_count]),
        [[id, 1]],
      );
      assert.match(firstText(found), new RegExp(`^${id} error "KeyError: 'price'" → use row\\.get`));
      assert.equal(
        firstText(await call('learnings', { action: 'search', query: 'matplotlib' })),
        'no learnings found (1 stored)',
      );
    });

    test('bad learnings are refused with a clear error', async () => {
      const raw = await call('learnings', { action: 'add', kind: 'semantic', successful_approach: 'x' });
      assert.equal(raw.isError, true);
      assert.equal(text(raw), '[INVALID_ARGUMENT] a semantic learning needs a non-empty objective');
      assert.match(
        text(await call('learnings', { action: 'add', objective: 'x', successful_approach: 'y' })),
        /^\[INVALID_ARGUMENT\] kind must be "error"/,
      );
      const semantic = await call('learnings', {
        action: 'add',
        kind: 'semantic',
        objective: 'read a large CSV',
        successful_approach: 'pandas.read_csv(chunksize=...)',
        tags: ['csv'],
      });
      assert.equal(semantic.isError, undefined);
    });

    test('files and learnings survive a restart of the CLI on the same storage folder', async () => {
      await conn.close();
      await connect();
      const read = await call('code_file', { action: 'read', filename: 'circles.py' });
      assert.match(firstText(read), /^def area\(r\):[\s\S]*print\('done', file=sys.stderr\)\n$/);
      const run = structured<RunResult>(await call('run_python', { file: 'circles.py' }));
      assert.equal(run.stdout, 'total=43.982\n');
      const { total, learnings } = structured<{ total: number; learnings: { objective?: string }[] }>(
        await call('learnings', { action: 'search', query: 'csv' }),
      );
      assert.equal(total, 2);
      assert.equal(learnings[0].objective, 'read a large CSV');
      const failed = await runPython(conn.client, { code: 'row = {}\nrow["price"]', backend });
      assert.equal(failed.result.diagnostics?.hints?.length, 1);
      assert.deepEqual(fs.readdirSync(path.join(storage, 'code-files')).sort(), ['circles.py', 'fails.py', 'notes.md']);
    });
  });
}
