// The whole Pyodide sandbox is bounded, not only its WebAssembly heap (issue 30, class 5). Python reaches the
// host process's JavaScript (`import js`), which can hold memory outside the heap (ArrayBuffers, typed arrays,
// other WebAssembly memories, Workers) and start Workers that keep computing after their run. Over its limit the
// interpreter is ended and the loss announced (session_reset, naming the limit), and the next run works; between
// runs, and while a run waits for a person, the sandbox is stopped: its CPU time does not move. Real engine, real
// bubblewrap or Deno (CODE_MODE_TEST_SANDBOX), real Pyodide; CPU time is read from /proc (Linux).
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import type { RunResult } from '../../src/engine/types';
import { testStorageDir } from '../support/mcp';
import { sandboxUnderTest } from '../support/sandboxUnderTest';

const HEAP_MB = 256;
/** The sandbox's limit for that heap: the heap plus the runtime's allowance (sandboxProcess.ts). */
const LIMIT_MB = HEAP_MB + 1536;
/** Only a guard against something that never happens: a slow machine waits longer, it never fails sooner. */
const GUARD_S = 60;

function explain(result: RunResult): string {
  return JSON.stringify({ stdout: result.stdout, diagnostics: result.diagnostics, reset: result.reset_reason });
}

/** A cell that loads worker_threads into Python's realm, so a later cell can start a Worker synchronously. */
const LOAD_THREADS = `import js\njs.eval("import('node:worker_threads').then((wt) => { globalThis.threads = wt; })")`;

/** Statements for a Worker (`source` runs in it, kept alive afterwards) started from Python's realm. */
const startWorker = (source: string) =>
  `js.eval(${JSON.stringify(`new globalThis.threads.Worker(${JSON.stringify(`${source}; setInterval(() => {}, 1e9);`)}, { eval: true })`)})`;

/** After `setup`, the cell computes until the server ends it (or the guard passes, and the case fails). */
const thenSpin = (setup: string) => `import js, time
${setup}
guard = time.monotonic() + ${GUARD_S}
while time.monotonic() < guard:
    pass
print("still running")`;

/** JavaScript that allocates and touches `chunks` of 256 MB, kept; an allocation refused is not the end of it. */
const holdBuffers = (chunks: number) =>
  `globalThis.kept = []; try { for (let i = 0; i < ${chunks}; i++) globalThis.kept.push(new Uint8Array(256 * 1024 * 1024).fill(1)); } catch {}`;

/** The process that runs JavaScript in the sandbox: under bubblewrap it is beneath bwrap's own two. */
function runtimePid(engine: Engine, session: string): number {
  const info = engine.describeSessions().find((s) => s.name === session)?.info;
  assert.ok(info?.pid, `session ${session} has a process`);
  let pid = info.pid;
  for (;;) {
    const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim();
    if (!children) return pid;
    pid = Number(children.split(' ')[0]);
  }
}

/** The process's CPU time so far, in clock ticks (user and system, every thread). */
function cpu(pid: number): { ticks: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ticks: Number(fields[11]) + Number(fields[12]) };
}

/** Whether every thread of `pid` is stopped. */
function allStopped(pid: number): boolean {
  return fs
    .readdirSync(`/proc/${pid}/task`)
    .every((tid) => /^\d+ \(.*\) [tT] /.test(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1')));
}

/**
 * Whether the process comes to a stop: a stop signal takes effect when each thread next leaves the kernel, so a
 * thread waiting for a CPU shows as running a little longer. False only if it never does, within the guard.
 */
async function comesToStop(pid: number): Promise<boolean> {
  const guard = Date.now() + GUARD_S * 1000;
  while (!allStopped(pid)) {
    if (Date.now() > guard) return false;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return true;
}

describe('the memory of the whole Pyodide sandbox is bounded', { skip: process.platform !== 'linux' }, () => {
  let engine: Engine;

  before(() => {
    engine = createEngine({ storageDir: testStorageDir, pyodide: { sandbox: sandboxUnderTest, heapLimitMb: HEAP_MB } });
  });
  after(async () => {
    await engine?.dispose();
  });

  test('the sandbox process runs with RLIMIT_DATA, and environment reports the bounds that hold here', async () => {
    const started = await engine.run({ code: 'print(1)', backend: 'pyodide', session: 'limits' });
    assert.equal(started.stdout, '1\n', explain(started));
    const limits = fs.readFileSync(`/proc/${runtimePid(engine, 'limits')}/limits`, 'latin1');
    const data = /^Max data size\s+(\d+)\s+(\d+)\s+bytes/m.exec(limits);
    assert.ok(data, limits);
    const extraMb = sandboxUnderTest === 'deno' ? 2048 : 1024;
    assert.deepEqual([Number(data[1]), Number(data[2])], Array(2).fill((LIMIT_MB + extraMb) * 1024 * 1024));
    const bounds = (await engine.describeBackend('pyodide')) as Record<string, unknown>;
    assert.equal(bounds.memory_limit_mb, LIMIT_MB);
    assert.equal(bounds.wasm_heap_mb, HEAP_MB);
    assert.match(String(bounds.per_process), /^RLIMIT_DATA/);
    assert.match(String(bounds.cpu), /SIGSTOP/);
  });

  const cases: [string, string][] = [
    ['big ArrayBuffers held', thenSpin(`js.eval(${JSON.stringify(holdBuffers(10))})`)],
    [
      'many small typed arrays',
      thenSpin(
        `js.eval("globalThis.kept = []; try { for (let i = 0; i < 180000; i++) globalThis.kept.push(new Float64Array(2048).fill(1)); } catch {}")`,
      ),
    ],
    [
      'a second WebAssembly memory grown',
      thenSpin(
        `js.eval("globalThis.kept = new WebAssembly.Memory({ initial: 1, maximum: 32768 }); try { globalThis.kept.grow(32000); new Uint8Array(globalThis.kept.buffer).fill(1); } catch {}")`,
      ),
    ],
    ['a Worker allocating', thenSpin(startWorker(holdBuffers(10)))],
  ];
  for (const [name, code] of cases)
    test(`${name}: the interpreter is ended, the reset announced with the limit, and the next run works`, async () => {
      const session = `memory-${name.replace(/\W+/g, '-')}`;
      const run = (code: string) => engine.run({ code, backend: 'pyodide', session });
      assert.equal((await run(`${LOAD_THREADS}\nkept = "before"`)).success, true);
      const result = await run(code);
      assert.equal(result.success, false, explain(result));
      assert.equal(result.diagnostics?.session_reset, true, explain(result));
      assert.match(result.diagnostics?.message ?? '', new RegExp(`over its limit of ${LIMIT_MB} MB`), explain(result));
      const next = await run('print("kept" in globals())');
      assert.equal(next.success, true, explain(next));
      assert.equal(next.stdout, 'False\n', explain(next));
    });
});

describe(
  'the Pyodide sandbox computes only while the server has it do something',
  { skip: process.platform !== 'linux' },
  () => {
    let engine: Engine;
    /** Awaited work of the server elsewhere, while the sandbox under test should use no CPU. */
    const elsewhere = async () => {
      const result = await engine.run({ code: 'print(sum(range(10**6)))', backend: 'pyodide', session: 'bystander' });
      assert.equal(result.stdout, '499999500000\n', explain(result));
    };
    const spinner = startWorker(
      'const counter = new Int32Array(new SharedArrayBuffer(4)); for (;;) Atomics.add(counter, 0, 1)',
    );

    before(async () => {
      engine = createEngine({ storageDir: testStorageDir, pyodide: { sandbox: sandboxUnderTest } });
      await elsewhere();
    });
    after(async () => {
      await engine?.dispose();
    });

    test('a Worker left spinning after its run uses no CPU between runs, and runs again with the next run', async () => {
      const run = (code: string) => engine.run({ code, backend: 'pyodide', session: 'idle' });
      assert.equal((await run(LOAD_THREADS)).success, true);
      const started = await run(`import js\n${spinner}`);
      assert.equal(started.success, true, explain(started));
      const pid = runtimePid(engine, 'idle');
      assert.equal(await comesToStop(pid), true, 'stopped between runs');
      const before = cpu(pid);
      await elsewhere();
      await elsewhere();
      assert.equal(cpu(pid).ticks, before.ticks, 'no CPU time between runs');
      const next = await run('print("next")');
      assert.equal(next.stdout, 'next\n', explain(next));
    });

    test('while input() waits for a person, Python and its Workers use no CPU', async () => {
      const run = (code: string, onInput: () => Promise<string>) =>
        engine.run({ code, backend: 'pyodide', session: 'asking', onInput });
      assert.equal((await run(LOAD_THREADS, async () => '')).success, true);
      const during: { stopped: boolean; ticks: number }[] = [];
      const result = await run(`import js\n${spinner}\nprint(input("go? "))`, async () => {
        const pid = runtimePid(engine, 'asking');
        const stopped = await comesToStop(pid);
        during.push({ stopped, ticks: cpu(pid).ticks });
        await elsewhere();
        await elsewhere();
        during.push({ stopped, ticks: cpu(pid).ticks });
        return 'went';
      });
      assert.equal(result.stdout, 'go? went\nwent\n', explain(result));
      assert.equal(during[0]!.stopped, true, 'stopped while the question waits');
      assert.equal(during[1]!.ticks, during[0]!.ticks, 'no CPU time while the question waits');
    });
  },
);
