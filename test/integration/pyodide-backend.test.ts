// What only the Pyodide backend does, against real Pyodide (run `npm run build` first: it needs
// dist/pyodide-host.cjs, dist/pyodide-worker.cjs and dist/pyodide/): its memory snapshot, its interrupt buffer,
// its event loop and its heap limit. What every backend does is in test/contract/backend-runs.test.ts and
// host-calls.test.ts. One snapshot cache per test run, in a temp folder.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPyodideBackend } from '../../src/engine/backends/pyodide/backend';
import type { HostCallHandler, Logger } from '../../src/engine/types';
import type { BackendSession } from '../../src/engine/backends/contract';
import { run } from '../support/backendRuns';

class MemoryLog implements Logger {
  lines: string[] = [];
  info(message: string): void {
    this.lines.push(message);
  }
  warn(message: string): void {
    this.lines.push(message);
  }
  error(message: string): void {
    this.lines.push(message);
  }
}

describe('Pyodide backend', () => {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-pyodide-'));
  const sessions: BackendSession[] = [];
  const hostCalls: string[] = [];
  const hostCall: HostCallHandler = async (method, params) => {
    hostCalls.push(method);
    return { method, params };
  };
  // Without the shipped snapshot: the first test is about the start that makes one (pyodide-snapshot.test.ts covers the shipped one).
  const factory = createPyodideBackend({ cacheDir, shippedSnapshotDir: false });
  const open = (name: string, log: Logger = new MemoryLog(), backend = factory): BackendSession => {
    const session = backend.create({ session: name, hostCall, log });
    sessions.push(session);
    return session;
  };

  let main: BackendSession;

  before(async () => {
    // Made by the first test; shared by the rest so each does not pay for a start.
    main = open('main');
  });

  after(async () => {
    await Promise.all(sessions.map((s) => s.dispose()));
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it(
    'creates the memory snapshot on first start and starts the next session from it',
    { timeout: 120_000 },
    async (t) => {
      // Leftovers: a snapshot of another Pyodide build, a temp file of a writer killed long ago, one being written.
      fs.writeFileSync(path.join(cacheDir, 'pyodide-0.0.1-0123456789abcdef.snapshot'), 'old build');
      const abandoned = path.join(cacheDir, 'pyodide-0.29.5-0123456789abcdef.snapshot.1-1.tmp');
      fs.writeFileSync(abandoned, 'killed writer');
      fs.utimesSync(abandoned, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
      const inProgress = 'pyodide-0.29.5-0123456789abcdef.snapshot.2-1.tmp';
      fs.writeFileSync(path.join(cacheDir, inProgress), 'another writer');

      const firstLog = new MemoryLog();
      const first = open('first', firstLog);
      assert.equal(first.state, 'not-loaded');
      let begun = performance.now();
      await first.start();
      const coldMs = performance.now() - begun;
      assert.equal(first.state, 'ready');
      assert.ok(
        firstLog.lines.some((line) => line.includes('cold (snapshot created)')),
        firstLog.lines.join('\n'),
      );
      const files = fs.readdirSync(cacheDir).filter((name) => name !== inProgress && name !== 'outbox');
      assert.equal(files.length, 2, `only the new snapshot and its hash are left: ${files.join(', ')}`);
      assert.match(
        files[0],
        /^pyodide-0\.29\.5-[0-9a-f]+-[0-9a-f]{12}\.snapshot$/,
        'named after the Pyodide build and the worker',
      );
      assert.equal(files[1], `${files[0]}.sha256`);
      assert.deepEqual(fs.readdirSync(path.join(cacheDir, 'outbox')), [], 'the outbox the host wrote into is gone');

      const secondLog = new MemoryLog();
      const second = open('second', secondLog);
      begun = performance.now();
      await second.start();
      const snapshotMs = performance.now() - begun;
      assert.ok(
        secondLog.lines.some((line) => line.includes('from the cached snapshot')),
        secondLog.lines.join('\n'),
      );
      t.diagnostic(
        `start: cold ${coldMs.toFixed(0)} ms (includes making the snapshot), from snapshot ${snapshotMs.toFixed(0)} ms`,
      );

      const info = second.info();
      assert.equal(info.kind, 'pyodide');
      assert.equal(info.pyodideVersion, '0.29.5');
      assert.match(info.pythonVersion ?? '', /^3\.\d+\.\d+$/);
      assert.ok(info.pid && info.pid !== process.pid);
      await first.dispose();
      assert.equal(first.state, 'dead');
    },
  );

  it('never loses an interrupt that lands while Python polls for one', { timeout: 60_000 }, async () => {
    // CPython's poll reads the buffer and clears it in two steps; without an atomic read, about one
    // interrupt in a few dozen fell between them and the loop never stopped.
    for (let i = 0; i < 100; i++) {
      const running = run(main, 'while True: pass');
      await new Promise((resolve) => setTimeout(resolve, 2 + (i % 5)));
      main.interrupt();
      assert.deepEqual((await running).outcome, { status: 'interrupted' }, `interrupt ${i}`);
    }
  });

  it('refuses host calls from asyncio tasks that outlive their cell', async () => {
    await run(
      main,
      [
        'import asyncio, _code_mode_host as host',
        'refused = []',
        'async def later():',
        '    try:',
        "        host.call('from-background')",
        '    except host.HostCallError as e:',
        '        refused.append(str(e))',
        'task = asyncio.ensure_future(later())',
      ].join('\n'),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { out } = await run(main, 'print(task.done(), refused)');
    assert.equal(out, "True ['host calls can only be made while a cell runs']\n");
    assert.ok(!hostCalls.includes('from-background'));
  });

  it('recycles the instance after a MemoryError at the heap limit', { timeout: 60_000 }, async () => {
    const small = open(
      'small-heap',
      new MemoryLog(),
      createPyodideBackend({ cacheDir, heapLimitMb: 256, shippedSnapshotDir: false }),
    );
    await run(small, 'before_memory_error = 1');
    const { outcome } = await run(small, 'hoard = []\nwhile True:\n    hoard.append(bytearray(10 * 1024 * 1024))');
    assert.ok(outcome.status === 'error', JSON.stringify(outcome));
    assert.equal(outcome.excName, 'MemoryError');
    assert.equal(outcome.sessionReset, true);
    const { outcome: next, out } = await run(small, "print('before_memory_error' in globals(), 'hoard' in globals())");
    assert.deepEqual(next, { status: 'ok' });
    assert.equal(out, 'False False\n');
  });
});
