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

for (const backend of ['pyodide', 'python'] as BackendKind[]) {
  describe(`code files and learnings over stdio — ${backend}`, () => {
    const storage = path.join(storageRoot, backend);
    let conn: StdioConnection;
    const connect = async () => {
      conn = await connectStdio(['--storage', storage, '--backend', backend]);
    };
    const call = async (name: string, args: Record<string, unknown>, options: { onprogress?: (p: { message?: string }) => void } = {}) =>
      (await conn.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...options })) as CallToolResult;
    const structured = <T = Record<string, unknown>>(raw: CallToolResult) => raw.structuredContent as T;

    before(connect);
    after(async () => {
      await conn?.close();
    });

    test('lists the store tools with their schemas', async () => {
      const { tools } = await conn.client.listTools();
      const required = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema.required ?? []]));
      assert.deepEqual(required.write_code_file, ['filename', 'content']);
      assert.deepEqual(required.read_code_file, ['filename']);
      assert.deepEqual(required.run_code_file, ['filename']);
      assert.deepEqual(required.add_learning, ['kind', 'successful_approach']);
      assert.deepEqual(required.get_learnings, []);
      for (const name of ['write_code_file', 'read_code_file', 'run_code_file', 'add_learning', 'get_learnings']) {
        assert.ok((tools.find((t) => t.name === name)?.description ?? '').length > 20, `${name} is described`);
      }
    });

    test('a file built with create and appends runs exactly like its concatenated code', async () => {
      const chunks = [
        'def area(r):\n    return 3.14159 * r * r\n',
        'total = 0\nfor r in range(1, 4):\n    total += area(r)\n',
        "import sys\nprint(f'total={total:.3f}')\nprint('done', file=sys.stderr)\n",
      ];
      const created = await call('write_code_file', { filename: 'circles.py', content: chunks[0] });
      assert.equal(created.isError, undefined);
      const { mtime, ...written } = structured(created);
      assert.deepEqual(written, { success: true, filename: 'circles.py', mode: 'create', bytes_written: chunks[0].length, size: chunks[0].length });
      assert.ok(!Number.isNaN(Date.parse(String(mtime))));
      for (const chunk of chunks.slice(1)) await call('write_code_file', { filename: 'circles.py', content: chunk, mode: 'append' });

      const fromFile = await call('run_code_file', { filename: 'circles.py', session: 'from-file' });
      const direct = await runPython(conn.client, { code: chunks.join(''), backend, session: 'direct' });
      const result = structured<RunResult>(fromFile);
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.equal(result.stdout, 'total=43.982\n');
      assert.equal(result.backend, backend);
      assert.equal(result.session, 'from-file');
      for (const key of ['success', 'stdout', 'stderr', 'diagnostics'] as const) assert.deepEqual(result[key], direct.result[key], key);
      assert.equal(text(fromFile).split('\n[ok in')[0], text(direct.raw).split('\n[ok in')[0], 'the same text rendering');

      const globals = await runPython(conn.client, { code: 'print(area(2))', backend, session: 'from-file' });
      assert.equal(globals.result.stdout, '12.56636\n', 'the file ran in the named session, whose globals persist');
    });

    test('a failing file fails like run_python, and its output streams as progress', async () => {
      // The pause keeps the progress out of the response's pipe read: the SDK client handles notifications a
      // microtask late, so a notification read together with the response is dropped.
      await call('write_code_file', { filename: 'fails.py', content: 'import time\nprint("before", flush=True)\ntime.sleep(0.05)\n{}["missing"]\n' });
      const progress: string[] = [];
      const raw = await call('run_code_file', { filename: 'fails.py', backend, timeout_s: 60 }, { onprogress: (p) => progress.push(p.message ?? '') });
      const result = structured<RunResult>(raw);
      assert.equal(raw.isError, true);
      assert.equal(result.diagnostics?.error_type, 'RuntimeError');
      assert.match(result.diagnostics?.message ?? '', /^KeyError: 'missing'/);
      assert.equal(result.stdout, 'before\n');
      assert.ok(progress.join('').includes('before'), `progress carried the output: ${JSON.stringify(progress)}`);
    });

    test('read_code_file round-trips the content', async () => {
      const content = '# ünïcode ✓\nrows = [1, 2, 3]\n\n\tprint(rows)  \n';
      await call('write_code_file', { filename: 'notes.md', content });
      const raw = await call('read_code_file', { filename: 'notes.md' });
      assert.equal(text(raw), content);
      assert.equal(structured(raw).content, content);
      assert.equal(structured(raw).size, Buffer.byteLength(content));
    });

    test('traversal, absolute paths and bad names are refused with a clear error, and the server keeps serving', async () => {
      for (const [tool, extra] of [
        ['write_code_file', { content: 'pwned' }],
        ['read_code_file', {}],
        ['run_code_file', {}],
      ] as const) {
        for (const filename of ['../../etc/passwd', '/etc/passwd']) {
          const raw = await call(tool, { filename, ...extra });
          assert.equal(raw.isError, true, `${tool} ${filename}`);
          assert.match(text(raw), /^\[INVALID_ARGUMENT\] filename ".*" must be a plain name without folders or path separators/);
          assert.deepEqual(structured(raw), { success: false, diagnostics: { error_type: 'INVALID_ARGUMENT', message: text(raw).replace('[INVALID_ARGUMENT] ', '') } });
        }
      }
      assert.match(text(await call('write_code_file', { filename: 'tool.exe', content: '' })), /must end in one of \.py/);
      assert.match(text(await call('run_code_file', { filename: 'missing.py' })), /no code file named "missing.py" \(the code files are: .*circles\.py/);
      assert.match(text(await call('run_code_file', { filename: 'notes.md' })), /only \.py files run/);
      assert.match(text(await call('write_code_file', { filename: 'x.py', content: 'y', mode: 'overwrite' })), /Invalid arguments for tool write_code_file/);
      assert.equal(fs.existsSync(path.join(storage, 'etc')), false);
      const { result } = await runPython(conn.client, { code: 'print("still serving")', backend });
      assert.equal(result.stdout, 'still serving\n');
    });

    test('a learning is stored, attached as a hint to a matching failed run, and found by search', async () => {
      const added = await call('add_learning', {
        kind: 'error',
        error_pattern: "KeyError: 'price'",
        failed_approach: 'row["price"]',
        successful_approach: 'use row.get("price", 0.0): some rows have no price',
        tags: ['dict', 'Pricing'],
      });
      assert.equal(added.isError, undefined);
      const { id, updated, learning } = structured<{ id: string; updated: boolean; learning: { tags: string[]; use_count: number } }>(added);
      assert.match(id, /^[0-9a-f]{8}$/);
      assert.equal(updated, false);
      assert.deepEqual(learning.tags, ['dict', 'pricing']);
      assert.equal(text(added), `saved learning ${id}`);

      const failed = await runPython(conn.client, { code: 'row = {"name": "tea"}\ncost = row["price"]', backend });
      assert.equal(failed.result.success, false);
      assert.deepEqual(failed.result.diagnostics?.hints, ['Past fix for KeyError: \'price\': use row.get("price", 0.0): some rows have no price']);
      assert.match(text(failed.raw), /\nhint: Past fix for KeyError: 'price': use row\.get/);
      const unrelated = await runPython(conn.client, { code: '1/0', backend });
      assert.equal(unrelated.result.diagnostics?.hints, undefined);

      const found = await call('get_learnings', { search: 'pricing' });
      const { learnings, total } = structured<{ learnings: { id: string; use_count: number }[]; total: number }>(found);
      assert.equal(total, 1);
      assert.deepEqual(learnings.map((l) => [l.id, l.use_count]), [[id, 1]]);
      assert.match(text(found), new RegExp(`^${id} error "KeyError: 'price'" → use row\\.get`));
      assert.match(text(await call('get_learnings', { search: 'matplotlib' })), /^no learnings found \(1 stored\)$/);
    });

    test('bad learnings are refused with a clear error', async () => {
      const raw = await call('add_learning', { kind: 'semantic', successful_approach: 'x' });
      assert.equal(raw.isError, true);
      assert.equal(text(raw), '[INVALID_ARGUMENT] a semantic learning needs a non-empty objective');
      const semantic = await call('add_learning', { kind: 'semantic', objective: 'read a large CSV', successful_approach: 'pandas.read_csv(chunksize=...)', tags: ['csv'] });
      assert.equal(semantic.isError, undefined);
    });

    test('files and learnings survive a restart of the CLI on the same storage folder', async () => {
      await conn.close();
      await connect();
      const read = await call('read_code_file', { filename: 'circles.py' });
      assert.match(text(read), /^def area\(r\):[\s\S]*print\('done', file=sys.stderr\)\n$/);
      const run = structured<RunResult>(await call('run_code_file', { filename: 'circles.py' }));
      assert.equal(run.stdout, 'total=43.982\n');
      const { total, learnings } = structured<{ total: number; learnings: { objective?: string }[] }>(await call('get_learnings', { search: 'csv' }));
      assert.equal(total, 2);
      assert.equal(learnings[0].objective, 'read a large CSV');
      const failed = await runPython(conn.client, { code: 'row = {}\nrow["price"]', backend });
      assert.equal(failed.result.diagnostics?.hints?.length, 1);
      assert.deepEqual(fs.readdirSync(path.join(storage, 'code-files')).sort(), ['circles.py', 'fails.py', 'notes.md']);
    });
  });
}
