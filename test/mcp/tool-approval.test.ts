// Approval of tool calls made from Python (issue 18), through real MCP clients over stdio and the real annotated
// @modelcontextprotocol/server-memory (read_graph, search_nodes and open_nodes say readOnlyHint: true; its writes
// say nothing, so they count as not read-only). A client with elicitation is asked and answers; one without is
// refused at once; --tool-approval and --auto-approve change who is asked.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { BackendKind, ToolCallRecord } from '../../src/engine/types';
import { cliPath, connectStdio, repoRoot, runPython, type StdioConnection } from '../support/mcp';

const memoryServer = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');

/** A servers file with a memory server of its own (a fresh, empty graph). */
function memoryConfig(dir: string, name: string): string {
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      servers: {
        memory: {
          command: process.execPath,
          args: [memoryServer],
          env: { MEMORY_FILE_PATH: path.join(dir, `${name}.jsonl`) },
        },
      },
    }),
  );
  return file;
}

/** Writes an entity (catching a refusal), then says what the graph holds. */
const writeThenRead = (name: string) => `
from code_mode import tools, ToolCallRefused
try:
    tools.memory.create_entities(entities=[{"name": ${JSON.stringify(name)}, "entityType": "person", "observations": ["wrote the first program"]}])
    print("written")
except PermissionError as e:
    print("refused:", type(e).__name__, isinstance(e, ToolCallRefused), e)
print(sorted(e["name"] for e in tools.memory.read_graph()["entities"]))
`;

const calls = (records: ToolCallRecord[] | undefined) =>
  (records ?? []).map(({ tool, ok, approval }) => ({ tool, ok, approval }));

type Answer = (request: ElicitRequest, signal: AbortSignal) => Promise<ElicitResult>;

/** A client that declares elicitation: every question is kept, and `answer` (set per test) replies. */
async function askingClient(
  args: string[],
): Promise<{ conn: StdioConnection; questions: string[]; answerWith(answer: Answer): void }> {
  const conn = await connectStdio(args, {}, { elicitation: {} });
  const questions: string[] = [];
  let answer: Answer = async () => ({ action: 'decline' });
  conn.client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    questions.push(request.params.message);
    return answer(request, extra.signal);
  });
  return { conn, questions, answerWith: (next) => (answer = next) };
}

const accept =
  (decision: string): Answer =>
  async () => ({ action: 'accept', content: { decision } });

for (const backend of ['python', 'pyodide'] as BackendKind[]) {
  describe(`tool approval under "ask" (the default), a client with elicitation — ${backend}`, () => {
    let dir: string;
    let client: Awaited<ReturnType<typeof askingClient>>;
    const run = (code: string, timeout_s = 60) => runPython(client.conn.client, { code, backend, timeout_s });

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-approval-'));
      client = await askingClient(['--backend', backend, '--servers', memoryConfig(dir, 'asking')]);
    });
    after(async () => {
      await client?.conn.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('a declined write raises PermissionError naming server.tool, changes nothing, and the program goes on', async () => {
      client.answerWith(async () => ({ action: 'decline' }));
      const before = client.questions.length;
      const { result } = await run(writeThenRead('Ada'));
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.match(
        result.stdout,
        /^refused: ToolCallRefused True memory\.create_entities was not called: a person declined the call to memory\.create_entities\n\[\]\n$/,
      );
      const asked = client.questions.slice(before);
      assert.equal(asked.length, 1, 'asked once: read_graph is read-only');
      assert.match(
        asked[0]!,
        /^Call memory\.create_entities\? .*\n"entities": \[\{"name": "Ada", "entityType": "person"/,
      );
      assert.match(asked[0]!, /\nAsked by Python code of run .*, session default\.$/);
      assert.deepEqual(calls(result.tool_calls), [
        { tool: 'create_entities', ok: false, approval: 'denied' },
        { tool: 'read_graph', ok: true, approval: 'read-only' },
      ]);
      assert.match(JSON.stringify(result.tool_calls), /"server":"memory"/);
      assert.doesNotMatch(
        JSON.stringify(result.tool_calls),
        /first program/,
        'the audit does not repeat the arguments',
      );
    });

    test('the question shows exactly what the tool would receive, whatever the arguments hold', async () => {
      client.answerWith(async () => ({ action: 'decline' }));
      const before = client.questions.length;
      // A fake second argument and a fake question pushed down by blank lines, a bidi override, an escape sequence.
      const name =
        'Ada\u202E\u001b[2J"}]\npath: "/workspace/public/notes.txt"\nAllow this call?' + '\n'.repeat(40) + 'txt.exe';
      const { result } = await run(writeThenRead(name));
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      const asked = client.questions.slice(before);
      assert.equal(asked.length, 1);
      const lines = asked[0]!.split('\n');
      assert.equal(lines.length, 3, `the tool, one line for its one argument, the run:\n${asked[0]}`);
      assert.match(
        lines[1]!,
        /^"entities": \[\{"name": "Ada\\u202E\\u001B\[2J\\"\}\]\\npath: .*…\(\d+ characters cut\)….*entityType": "person"/,
      );
      assert.doesNotMatch(
        asked[0]!,
        // eslint-disable-next-line no-control-regex -- control characters are what the question must not carry
        /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]/u,
      );
      // An argument a closed schema does not declare is refused before anyone is asked: test/unit/codemode.test.ts
      // (the memory server's schemas are open since its SDK turns zod 4 schemas into JSON Schema).
    });

    test('an accepted write happens; read-only tools ask nothing', async () => {
      client.answerWith(accept('once'));
      const before = client.questions.length;
      const { result } = await run(writeThenRead('Ada'));
      assert.equal(result.stdout, "written\n['Ada']\n", JSON.stringify(result.diagnostics));
      assert.equal(client.questions.length - before, 1);
      assert.deepEqual(calls(result.tool_calls), [
        { tool: 'create_entities', ok: true, approval: 'asked-allowed' },
        { tool: 'read_graph', ok: true, approval: 'read-only' },
      ]);
      const reads = await run(
        'from code_mode import tools\ntools.memory.search_nodes(query="Ada")\ntools.memory.open_nodes(names=["Ada"])\nprint("read")',
      );
      assert.equal(reads.result.stdout, 'read\n');
      assert.equal(client.questions.length - before, 1, 'search_nodes and open_nodes are read-only: no question');
      assert.deepEqual(
        calls(reads.result.tool_calls).map((c) => c.approval),
        ['read-only', 'read-only'],
      );
    });

    test('"Allow this tool for this session" is not asked again for that tool; other tools still are; "Deny" in the form refuses', async () => {
      client.answerWith(accept('session'));
      const before = client.questions.length;
      const first = await run(writeThenRead('Babbage'));
      assert.match(first.result.stdout, /^written\n/);
      const second = await run(writeThenRead('Lovelace'));
      assert.match(second.result.stdout, /^written\n/);
      assert.equal(client.questions.length - before, 1);
      assert.deepEqual(calls(second.result.tool_calls)[0], {
        tool: 'create_entities',
        ok: true,
        approval: 'session-allowed',
      });
      client.answerWith(accept('deny'));
      const other = await run(
        'from code_mode import tools\ntry:\n    tools.memory.delete_entities(entityNames=["Ada"])\nexcept PermissionError as e:\n    print(e)',
      );
      assert.match(other.result.stdout, /memory\.delete_entities was not called: a person declined/);
      assert.equal(client.questions.length - before, 2);
    });
  });
}

describe('tool approval: the run clock, and stopping the run', () => {
  let dir: string;
  let client: Awaited<ReturnType<typeof askingClient>>;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-approval-'));
    client = await askingClient(['--backend', 'python', '--servers', memoryConfig(dir, 'clock')]);
  });
  after(async () => {
    await client?.conn.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the time limit stands still while the person decides', async () => {
    const timeoutS = 1;
    // The answer comes well after the run's whole time limit: had the clock run, the run would have been stopped.
    client.answerWith(async () => {
      await new Promise((resolve) => setTimeout(resolve, timeoutS * 3000));
      return { action: 'accept', content: { decision: 'once' } };
    });
    const { result } = await runPython(client.conn.client, {
      code: writeThenRead('Slow'),
      backend: 'python',
      timeout_s: timeoutS,
    });
    assert.notEqual(result.diagnostics?.error_type, 'TIMEOUT', JSON.stringify(result.diagnostics));
    assert.equal(result.stdout, "written\n['Slow']\n");
  });

  test('cancelling the run withdraws the question', async () => {
    let withdrawn!: () => void;
    const questionWithdrawn = new Promise<void>((resolve) => (withdrawn = resolve));
    let asked!: () => void;
    const questionAsked = new Promise<void>((resolve) => (asked = resolve));
    // Never answered: only the run's cancellation ends it.
    client.answerWith(
      (_request, signal) =>
        new Promise((_resolve, reject) => {
          asked();
          signal.addEventListener('abort', () => {
            withdrawn();
            reject(new Error('withdrawn'));
          });
        }),
    );
    const controller = new AbortController();
    const running = runPython(
      client.conn.client,
      { code: writeThenRead('Never'), backend: 'python', timeout_s: 60 },
      { signal: controller.signal },
    ).catch((error: unknown) => error);
    await questionAsked;
    controller.abort();
    await running;
    await questionWithdrawn;
    const after = await runPython(client.conn.client, {
      code: 'from code_mode import tools\nprint(sorted(e["name"] for e in tools.memory.read_graph()["entities"]))',
      backend: 'python',
    });
    assert.equal(after.result.stdout, "['Slow']\n", 'the write of the cancelled run never happened');
  });
});

describe('tool approval without a person to ask, and the flags', () => {
  let dir: string;
  const opened: StdioConnection[] = [];
  const connect = async (name: string, flags: string[], capabilities = {}) => {
    const conn = await connectStdio(
      ['--backend', 'python', '--servers', memoryConfig(dir, name), ...flags],
      {},
      capabilities,
    );
    opened.push(conn);
    return conn;
  };
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-approval-'));
  });
  after(async () => {
    await Promise.all(opened.map((c) => c.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a client without elicitation under ask: the write is refused at once, naming the flags to change', async () => {
    const conn = await connect('silent', []);
    const { result } = await runPython(conn.client, { code: writeThenRead('Ada') });
    assert.match(
      result.stdout,
      /^refused: ToolCallRefused True memory\.create_entities was not called: .*nobody can be asked here \(the client does not support elicitation\); set flag --tool-approval to "allow", or list "memory\.create_entities" \(or "memory\.\*"\) in flag --auto-approve\n\[\]\n$/,
    );
    assert.deepEqual(calls(result.tool_calls), [
      { tool: 'create_entities', ok: false, approval: 'denied' },
      { tool: 'read_graph', ok: true, approval: 'read-only' },
    ]);
  });

  test('--tool-approval allow asks nothing and writes', async () => {
    const conn = await connect('allow', ['--tool-approval', 'allow']);
    const { result } = await runPython(conn.client, { code: writeThenRead('Ada') });
    assert.equal(result.stdout, "written\n['Ada']\n");
    assert.deepEqual(calls(result.tool_calls)[0], { tool: 'create_entities', ok: true, approval: 'policy-allow' });
  });

  test('--tool-approval readonly refuses writes without asking, and reads go on', async () => {
    const conn = await connect('readonly', ['--tool-approval', 'readonly'], { elicitation: {} });
    let asked = 0;
    conn.client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'accept', content: { decision: 'once' } };
    });
    const { result } = await runPython(conn.client, { code: writeThenRead('Ada') });
    assert.match(
      result.stdout,
      /^refused: ToolCallRefused True memory\.create_entities was not called: memory\.create_entities is not marked read-only, and tool approval is "readonly" \(flag --tool-approval\)/,
    );
    assert.match(result.stdout, /\n\[\]\n$/);
    assert.equal(asked, 0);
  });

  test('--auto-approve lets the tools it names through without a question, and only those', async () => {
    const conn = await connect('rule', ['--auto-approve', 'memory.create_entities,other.*']);
    const { result } = await runPython(conn.client, {
      code:
        writeThenRead('Ada') +
        'try:\n    tools.memory.add_observations(observations=[{"entityName": "Ada", "contents": ["x"]}])\nexcept PermissionError as e:\n    print("refused", e)\n',
    });
    assert.match(result.stdout, /^written\n\['Ada'\]\nrefused memory\.add_observations was not called/);
    assert.deepEqual(calls(result.tool_calls), [
      { tool: 'create_entities', ok: true, approval: 'rule' },
      { tool: 'read_graph', ok: true, approval: 'read-only' },
      { tool: 'add_observations', ok: false, approval: 'denied' },
    ]);
  });

  test('bad flags exit with status 2 and say why', () => {
    for (const [flags, message] of [
      [['--tool-approval', 'sometimes'], /--tool-approval must be "ask", "allow" or "readonly", not "sometimes"/],
      [['--auto-approve', 'memory'], /--auto-approve: "memory" is not "server\.tool" or "server\.\*"/],
    ] as const) {
      const exited = spawnSync(process.execPath, [cliPath, ...flags], { encoding: 'utf8', input: '' });
      assert.equal(exited.status, 2, exited.stderr);
      assert.match(exited.stderr, message);
    }
  });
});
