// Two promises every backend keeps, because the engine keeps them for all: a backend that does not start within
// the start bound fails the run with the reason, and every run a person sees as running can be stopped — one
// still waiting for its interpreter, one queued behind another, one running. The backend that never starts is a
// real Jupyter backend pointed at a real server socket that accepts connections and never answers.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import type { RunEvent, RunResult } from '../../src/engine/types';
import { testStorageDir } from '../support/mcp';

/** A "Jupyter Server" that takes every connection and never says a word. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  // A generous guard against a hang, not a timing assertion.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a backend that never starts', () => {
  let server: Awaited<ReturnType<typeof silentServer>>;
  before(async () => (server = await silentServer()));
  after(() => server.close());

  test('fails the run past the start bound, with the reason, and the next run tries afresh', async () => {
    // The bound is a setting of the engine (120 s by default); the server never answers, so any bound is passed.
    const engine = createEngine({
      storageDir: testStorageDir,
      jupyter: { url: server.url },
      config: { startTimeoutS: 1 },
    });
    try {
      const result = await engine.run({ code: 'print(1)', backend: 'jupyter', session: 'bound' });
      assert.equal(result.success, false);
      assert.equal(result.diagnostics?.error_type, 'BACKEND_CRASHED');
      assert.match(
        result.diagnostics?.message ?? '',
        /the jupyter backend did not start within 1 s \(is the Jupyter Server reachable and answering\?.*\); the next run tries again/,
      );
      assert.deepEqual(engine.describeSessions(), [], 'the stuck session was dropped');
      const again = await engine.run({ code: 'print(1)', backend: 'jupyter', session: 'bound' });
      assert.match(again.diagnostics?.message ?? '', /did not start within 1 s/);
    } finally {
      await engine.dispose();
    }
  });

  test('a run waiting for it is seen as running, and Stop (interrupt, cancelRun or its signal) ends it as cancelled', async () => {
    const engine = createEngine({ storageDir: testStorageDir, jupyter: { url: server.url } });
    try {
      const starting = (session: string, signal?: AbortSignal) => {
        const pending = engine.run({ code: 'print(1)', backend: 'jupyter', session, signal });
        return {
          pending,
          runId: until(
            `run in ${session} to show as running`,
            () => engine.describeSessions().find((s) => s.name === session)?.runningRunId,
          ),
        };
      };
      const byInterrupt = starting('a');
      await byInterrupt.runId;
      assert.equal(engine.interrupt('a', 'jupyter'), true, 'the session has a run to interrupt');
      const interrupted = await byInterrupt.pending;
      assert.equal(interrupted.diagnostics?.error_type, 'CANCELLED', JSON.stringify(interrupted.diagnostics));

      const byRunId = starting('b');
      assert.equal(engine.cancelRun(await byRunId.runId), true);
      assert.equal((await byRunId.pending).diagnostics?.error_type, 'CANCELLED');

      const controller = new AbortController();
      const bySignal = starting('c', controller.signal);
      await bySignal.runId;
      controller.abort();
      assert.equal((await bySignal.pending).diagnostics?.error_type, 'CANCELLED');

      // Restart Session: the session goes (its disposal does not wait on the start that hangs), the run with it.
      const byRestart = starting('d');
      await byRestart.runId;
      await engine.resetSession('d', 'jupyter', 'the session was restarted from VS Code');
      assert.equal((await byRestart.pending).diagnostics?.error_type, 'CANCELLED');
      assert.equal(
        engine.describeSessions().find((s) => s.name === 'd'),
        undefined,
      );
    } finally {
      await engine.dispose();
    }
  });
});

describe('a running run that ignores the interrupt', () => {
  test('is stopped by Stop all the same: its interpreter is restarted after the grace, and the result says so', async () => {
    const engine = createEngine({ storageDir: testStorageDir, config: { interruptGraceMs: 500 } });
    try {
      const code =
        'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint("deaf", flush=True)\nwhile True: pass\n';
      const started: string[] = [];
      const pending = engine.run({
        code,
        backend: 'python',
        session: 'deaf',
        onEvent: (e) => e.type === 'stdout' && started.push(e.text),
      });
      await until('the loop to start', () => started.join('').includes('deaf'));
      assert.equal(engine.interrupt('deaf', 'python'), true);
      const result = await pending;
      assert.equal(result.diagnostics?.error_type, 'CANCELLED');
      assert.equal(result.diagnostics?.session_reset, true, result.diagnostics?.message);
      assert.match(result.diagnostics?.message ?? '', /did not stop in time and was restarted/);
      assert.equal(
        (await engine.run({ code: 'print("again")', backend: 'python', session: 'deaf' })).stdout,
        'again\n',
      );
    } finally {
      await engine.dispose();
    }
  });
});

describe('a run queued behind another', () => {
  let engine: Engine;
  let dir: string;
  const events: RunEvent[] = [];
  before(() => {
    engine = createEngine({ storageDir: testStorageDir });
    engine.onRunEvent((event) => events.push(event));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-queue-'));
  });
  after(async () => {
    await engine.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('shows as queued at once with what it waits for, is cancelled at once, and the run ahead goes on', async () => {
    const flag = path.join(dir, 'go');
    const slow = path.join(dir, 'slow.py');
    // The first run waits for a file the test writes: no sleep decides the order.
    const waitCode = `import os, time\nwhile not os.path.exists(${JSON.stringify(flag)}):\n    time.sleep(0.02)\nprint("slow done")\n`;
    fs.writeFileSync(slow, waitCode);
    const first = engine.run({ code: waitCode, backend: 'python', session: 'q', script: { path: slow, firstLine: 1 } });
    await until('the slow run to start', () => engine.describeSessions().find((s) => s.name === 'q')?.runningRunId);
    const second = engine.run({ code: 'print("second")', backend: 'python', session: 'q' });
    const third = engine.run({ code: 'print("third")', backend: 'python', session: 'q' });
    const queued = events.filter((e): e is Extract<RunEvent, { type: 'queued' }> => e.type === 'queued');
    assert.deepEqual(
      queued.map((e) => e.waitingFor),
      ['slow.py', 'print("second")'],
      'queued events come at once, naming the work ahead',
    );
    assert.deepEqual(
      engine.describeSessions().find((s) => s.name === 'q')?.queuedRunIds,
      queued.map((e) => e.runId),
    );

    assert.equal(engine.cancelRun(queued[0]!.runId), true);
    const cancelled = await second;
    assert.equal(cancelled.diagnostics?.error_type, 'CANCELLED');
    assert.match(cancelled.diagnostics?.message ?? '', /cancelled while it waited for slow\.py; it did not run/);
    assert.ok(
      !events.some((e) => e.type === 'started' && e.runId === queued[0]!.runId),
      'a cancelled queued run never starts',
    );

    fs.writeFileSync(flag, '');
    const done: RunResult = await first;
    assert.equal(done.stdout, 'slow done\n');
    const ran = await third;
    assert.equal(ran.stdout, 'third\n', 'the run behind the cancelled one still runs');
  });
});
