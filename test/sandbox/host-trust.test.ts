// The server acts only on what it started (issue 30, class 3). Everything inside the Pyodide sandbox is within the
// reach of the code it runs, which writes its own frames to the host's channel to the server: a host call after
// its run's result, or during a run but for another run; a result for another run; a second 'ready'; a 'fatal'
// after the start. Each is refused, logged in the server's own words and announced (the run fails, or the next
// run says session_reset); no tool is reached, every run's tool_calls is exact, and the shared snapshot cache is
// untouched. Questions a run asks are bounded in number and in waiting. Real MCP client over stdio, real CLI,
// real memory server, real bubblewrap or Deno (CODE_MODE_TEST_SANDBOX), real Pyodide.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import type { RunResult } from '../../src/engine/types';
import { connectStdio, repoRoot, runPython, testStorageDir, type StdioConnection } from '../support/mcp';
import { sandboxFlags, sandboxUnderTest } from '../support/sandboxUnderTest';

const memoryServer = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');

/** Only a guard against something that never happens: a slow machine waits longer, it never fails sooner. */
const GUARD_MS = 120_000;

function explain(result: RunResult): string {
  return JSON.stringify({
    stdout: result.stdout,
    diagnostics: result.diagnostics,
    reset: result.reset_reason,
    tool_calls: result.tool_calls,
  });
}

/** A servers file with a memory server of its own (a fresh, empty graph). */
function memoryConfig(dir: string): string {
  const file = path.join(dir, 'servers.json');
  const env = { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') };
  fs.writeFileSync(
    file,
    JSON.stringify({ servers: { memory: { command: process.execPath, args: [memoryServer], env } } }),
  );
  return file;
}

/** The frame of `message` as the channel carries it: a 4-byte big-endian length, then the JSON. */
const frameJs = (message: object) =>
  `(() => { const body = new TextEncoder().encode(${JSON.stringify(JSON.stringify(message))}); const bytes = new Uint8Array(4 + body.length); new DataView(bytes.buffer).setUint32(0, body.length); bytes.set(body, 4); return bytes; })()`;

/**
 * Statements for a JS realm with `require` (a nested worker) that write `bytes` to the host's channel to the server
 * (fd 4): as a file descriptor, or where descriptors are not files to JavaScript (Deno) as a socket on it.
 */
const writeStatements = (bytes: string) =>
  `const bytes = ${bytes}; try { require('node:fs').writeSync(4, bytes); } catch { await new Promise((resolve, reject) => { const s = new (require('node:net').Socket)({ fd: 4, readable: false, writable: true }); s.on('error', reject); s.write(bytes, resolve); }); }`;

/** A cell that leaves a promise behind: once the cell has ended, it writes `message` to the channel. */
const forgeAfterCell = (message: object) =>
  `import js\njs.eval(${JSON.stringify(
    `(async () => { const bytes = ${frameJs(message)}; try { (await import('node:fs')).writeSync(4, bytes); } catch { const net = await import('node:net'); await new Promise((resolve, reject) => { const s = new net.Socket({ fd: 4, readable: false, writable: true }); s.on('error', reject); s.write(bytes, resolve); }); } })()`,
  )})`;

/** A cell that loads worker_threads into Python's realm, so a later cell can start a nested worker synchronously. */
const LOAD_THREADS = `import js\njs.eval("import('node:worker_threads').then((wt) => { globalThis.threads = wt; })")`;

/**
 * A cell that, while it runs, has a nested worker write `message` to the channel and waits (computing, as code does)
 * until it has: the frame is in the pipe before this run's result, so the server reads it while the run is under way.
 */
const forgeDuringCell = (message: object) => `import js
flag = js.Int32Array.new(js.SharedArrayBuffer.new(4))
js.globalThis.flag = flag
js.eval(${JSON.stringify(
  `new globalThis.threads.Worker(${JSON.stringify(
    `const { workerData } = require('node:worker_threads'); (async () => { ${writeStatements(frameJs(message))} })().then(() => 1, () => 2).then((v) => { Atomics.store(workerData, 0, v); Atomics.notify(workerData, 0); });`,
  )}, { eval: true, workerData: globalThis.flag })`,
)})
import time
guard = time.monotonic() + ${GUARD_MS / 1000}
while js.Atomics.load(flag, 0) == 0 and time.monotonic() < guard:
    pass
print("forged", js.Atomics.load(flag, 0))
`;

/** A forged call of a tool that writes, under --tool-approval allow: if the server relayed it, it would run. */
const forgedCall = (name: string, runId?: string) => ({
  type: 'hostCall',
  id: 7777,
  ...(runId === undefined ? {} : { runId }),
  method: 'tools.call',
  params: {
    server: 'memory',
    tool: 'create_entities',
    args: { entities: [{ name, entityType: 'forged', observations: ['the server relayed a forged call'] }] },
  },
});

/** The snapshot files of a cache folder, with their sizes and times: what a forged status must leave alone. */
function snapshotFiles(cacheDir: string): string[] {
  if (!fs.existsSync(cacheDir)) return [];
  return fs
    .readdirSync(cacheDir)
    .filter((name) => name.includes('.snapshot') || name.includes('code-cache'))
    .map((name) => {
      const stat = fs.statSync(path.join(cacheDir, name));
      return `${name} ${stat.size} ${stat.mtimeMs}`;
    })
    .sort();
}

describe('the server acts only on what it started (Pyodide host channel)', () => {
  let dir: string;
  let storage: string;
  let conn: StdioConnection;
  let session = 0;
  /** Every result this suite saw: none may list a tool call it did not make. */
  const results: RunResult[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-host-trust-'));
    // A cache of its own: nothing else running on the machine may touch the snapshot files this suite checks.
    storage = path.join(dir, 'storage');
    conn = await connectStdio([
      '--storage',
      storage,
      '--backend',
      'pyodide',
      ...sandboxFlags,
      '--servers',
      memoryConfig(dir),
      '--tool-approval',
      'allow',
    ]);
  });
  after(async () => {
    await conn?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const runner = () => {
    const name = `trust-${++session}`;
    return async (code: string): Promise<RunResult> => {
      const { result } = await runPython(conn.client, { code, session: name, timeout_s: 60 });
      results.push(result);
      return result;
    };
  };

  /** Runs `probe` until a result says the session was reset: that result. */
  async function untilReset(run: (code: string) => Promise<RunResult>, first?: RunResult): Promise<RunResult> {
    if (first?.session_reset) return first;
    for (const deadline = Date.now() + GUARD_MS; Date.now() < deadline;) {
      const probe = await run('print("probe")');
      if (probe.session_reset) return probe;
      assert.equal(probe.stdout, 'probe\n', explain(probe));
      assert.deepEqual(probe.tool_calls, [], explain(probe));
    }
    assert.fail('no run ever said the session was reset');
  }

  /** What the memory graph holds, read by a fresh session (a read-only tool: allowed). */
  async function entities(): Promise<string[]> {
    const read = await runner()(
      'from code_mode import tools\nprint(sorted(e["name"] for e in tools.memory.read_graph()["entities"]))',
    );
    assert.equal(read.success, true, explain(read));
    return JSON.parse(read.stdout.replace(/'/g, '"')) as string[];
  }

  const refusedInOwnWords = (result: RunResult) =>
    assert.match(result.reset_reason ?? '', /the Pyodide process sent|malformed message from the Pyodide process/);

  test('a host call written after its run returned reaches no tool; the session is reset and says so', async () => {
    const run = runner();
    assert.equal((await run('kept = 1')).success, true);
    const forged = await run(forgeAfterCell(forgedCall('after-result')));
    assert.deepEqual(forged.tool_calls, [], explain(forged));
    const told = await untilReset(run, forged);
    refusedInOwnWords(told);
    assert.equal((await run('print(kept)')).diagnostics?.exception, 'NameError');
    assert.ok(!(await entities()).includes('after-result'), 'the forged call reached the tool');
  });

  test('a host call naming its run, written after that run returned, reaches no tool', async () => {
    const run = runner();
    const first = await run('kept = 1');
    const forged = await run(forgeAfterCell(forgedCall('named-finished', first.run_id)));
    const told = await untilReset(run, forged);
    refusedInOwnWords(told);
    assert.ok(!(await entities()).includes('named-finished'));
  });

  const duringRun: Record<string, (previous: string) => object> = {
    'a host call in the old frame (no run id)': () => forgedCall('during-old'),
    'a host call for another run': () => forgedCall('during-other', 'not-this-run'),
    'a host call for the run before': (previous) => forgedCall('during-previous', previous),
    'a result for another run': () => ({
      type: 'result',
      runId: 'not-this-run',
      outcome: { status: 'ok' },
      output: [{ stream: 'stdout', text: 'forged' }],
    }),
    'output for another run': () => ({ type: 'output', runId: 'not-this-run', stream: 'stdout', text: 'forged' }),
  };
  for (const [name, message] of Object.entries(duringRun)) {
    test(`${name}, written while a run is under way: that run fails, announced, and no tool is reached`, async () => {
      const run = runner();
      const previous = await run(`${LOAD_THREADS}\nkept = 1`);
      const forged = await run(forgeDuringCell(message(previous.run_id)));
      assert.equal(forged.success, false, explain(forged));
      assert.equal(forged.session_reset, true, explain(forged));
      assert.equal(forged.diagnostics?.error_type, 'BACKEND_CRASHED', explain(forged));
      refusedInOwnWords(forged);
      assert.deepEqual(forged.tool_calls, [], explain(forged));
      const next = await run('print("fresh")');
      assert.equal(next.stdout, 'fresh\n', explain(next));
      assert.equal(next.session_reset, undefined, 'told once, by the run it happened in');
      assert.deepEqual(
        (await entities()).filter((e) => e.startsWith('during-')),
        [],
      );
    });
  }

  const statuses: Record<string, object> = {
    "a second 'ready' that says the snapshot was rejected": {
      type: 'ready',
      pyodideVersion: '0.29.5',
      pythonVersion: '3.13.2',
      fromSnapshot: true,
      snapshotRejected: 'FORGED-REASON the snapshot is bad',
      codeCache: 'unused',
      codeCacheRejected: 'FORGED-REASON the code cache is bad',
      loadMs: 1,
    },
    "a 'fatal' after the start": { type: 'fatal', message: 'FORGED-REASON Pyodide cannot start' },
    "a 'lost' that names its own reason": { type: 'lost', reason: 'FORGED-REASON the instance is gone' },
  };
  for (const [name, message] of Object.entries(statuses)) {
    test(`${name} leaves the snapshot cache alone, and the log never gives the code's text as the server's reason`, async () => {
      const run = runner();
      assert.equal((await run('kept = 1')).success, true);
      const cacheDir = path.join(storage, 'pyodide-cache');
      const before = snapshotFiles(cacheDir);
      assert.ok(before.length > 0, 'the suite starts with a cached snapshot');
      const logBefore = conn.stderr().length;
      const told = await untilReset(run, await run(forgeAfterCell(message)));
      assert.equal(told.session_reset, true, explain(told));
      assert.deepEqual(snapshotFiles(cacheDir), before, 'the shared snapshot cache was changed');
      const log = conn.stderr().slice(logBefore);
      // Quoted as what the host said, if at all; never as a reason of the server's own.
      for (const line of log.split('\n').filter((l) => l.includes('FORGED-REASON')))
        assert.match(line, /said: "FORGED-REASON/, `the code's text became the server's reason: ${line}`);
      assert.doesNotMatch(log, /snapshot .*(rejected|discarded|removed)/i, log);
    });
  }

  test("no run's tool_calls lists a call its code did not make", () => {
    for (const result of results)
      for (const call of result.tool_calls ?? []) assert.equal(call.tool, 'read_graph', explain(result));
  });
});

describe('a run waits on a person within bounds', () => {
  let dir: string;
  let conn: StdioConnection;
  let asked = 0;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-questions-'));
    conn = await connectStdio(
      ['--backend', 'pyodide', ...sandboxFlags, '--servers', memoryConfig(dir)],
      {},
      {
        elicitation: {},
      },
    );
    conn.client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'accept', content: { decision: 'once' } };
    });
  });
  after(async () => {
    await conn?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('past 100 questions in one run, the next tool call is refused without asking, and the audit says so', async () => {
    const { result } = await runPython(conn.client, {
      code: `from code_mode import tools, ToolCallRefused
done = refused = 0
for i in range(101):
    try:
        tools.memory.create_entities(entities=[{"name": f"e{i}", "entityType": "n", "observations": []}])
        done += 1
    except ToolCallRefused as e:
        refused += 1
        last = str(e)
print(done, refused)
print(last)`,
      timeout_s: 600,
    });
    assert.equal(result.success, true, explain(result));
    const [counts, reason] = result.stdout.split('\n');
    assert.equal(counts, '100 1', explain(result));
    assert.match(reason ?? '', /already asked 100 questions, the most one run may ask/);
    assert.equal(asked, 100);
    const approvals = (result.tool_calls ?? []).map((c) => c.approval);
    assert.deepEqual(approvals, [...Array<string>(100).fill('asked-allowed'), 'denied']);
  });
});

describe('input() waits within the bounds of the engine config', () => {
  let engine: Engine;

  before(() => {
    engine = createEngine({
      storageDir: testStorageDir,
      pyodide: { sandbox: sandboxUnderTest },
      config: { questions: { questionWaitS: 1, runWaitS: 1800, maxPerRun: 3 } },
    });
  });
  after(async () => {
    await engine?.dispose();
  });

  test('a question nobody answers is withdrawn after its bound: input() raises EOFError saying so', async () => {
    const result = await engine.run({
      code: 'try:\n    input("name? ")\nexcept EOFError as e:\n    print("EOFError:", e)',
      backend: 'pyodide',
      session: 'unanswered',
      onInput: () => new Promise<string>(() => undefined),
    });
    assert.match(
      result.stdout,
      /^name\? EOFError: no answer came within 1 s; the question was withdrawn/,
      explain(result),
    );
  });

  test('the fourth question of a run with a cap of three is not asked', async () => {
    let asked = 0;
    const result = await engine.run({
      code: 'for i in range(4):\n    try:\n        print(input("n? "))\n    except EOFError as e:\n        print("EOFError:", e)',
      backend: 'pyodide',
      session: 'capped',
      onInput: async () => String(++asked),
    });
    assert.equal(asked, 3);
    assert.match(
      result.stdout,
      /^n\? 1\n1\nn\? 2\n2\nn\? 3\n3\nn\? EOFError: this run already asked 3 questions, the most one run may ask\n$/,
      explain(result),
    );
  });
});
