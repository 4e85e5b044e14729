// What the workspace-Python backend does about runs that break their own session or reach beyond it:
// interpreters killed between runs, closed or replaced stdio, runaway memory, processes left behind.
// Real interpreters and processes, no mocks. Run `npm run build` first (the driver is loaded from dist/python).
import { after, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Engine } from '../../src/engine/engine';
import { createPythonBackend, type PythonBackendConfig } from '../../src/engine/backends/python/backend';
import type { Logger } from '../../src/engine/types';
import type { BackendSession } from '../../src/engine/backends/contract';
import { RecordingSink, run } from '../support/backendRuns';
import { descendants, isGone, outerPid, sleep, spawnedPid, waitUntil, waitUntilGone } from '../support/pythonSession';

const TEST_TIMEOUT = 60_000;
const linuxOnly = { skip: process.platform !== 'linux' && 'needs Linux (/proc, RLIMIT_DATA, PR_SET_CHILD_SUBREAPER)' };

const warnings: string[] = [];
const log: Logger = { info() {}, warn: (message) => warnings.push(message), error() {} };
const sessions: BackendSession[] = [];

function newSession(config: PythonBackendConfig = {}): BackendSession {
  const session = createPythonBackend(config).create({
    session: `bounds${sessions.length}`,
    log,
    hostCall: async () => null,
  });
  sessions.push(session);
  return session;
}

after(async () => {
  await Promise.all(sessions.map((s) => s.dispose()));
});

/** The session's processes other than the driver itself, zombies included. */
function strays(session: BackendSession): string[] {
  const driver = session.info().pid as number;
  return descendants(spawnedPid(driver)).filter((entry) => !entry.startsWith(`${driver} `));
}

/** The pids the code printed before `marker`, as this process sees them (see outerPid). */
async function pidsPrinted(session: BackendSession, sink: RecordingSink, marker: string): Promise<number[]> {
  await sink.waitFor(`${marker}\n`);
  return (new RegExp(`(.*) ${marker}\\n`).exec(sink.out)?.[1] ?? '')
    .split(' ')
    .map((pid) => outerPid(session, Number(pid)));
}

describe('an interpreter lost between runs', { timeout: TEST_TIMEOUT }, () => {
  test('a driver killed by SIGKILL between runs is reported once, with its pid and the signal', async () => {
    const session = newSession();
    await run(session, 'kept = 1');
    const pid = session.info().pid as number;
    assert.equal(session.takeStateLoss(), undefined);
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => session.state === 'dead', 'the session notices the driver died');
    const loss = session.takeStateLoss();
    assert.match(loss ?? '', new RegExp(`pid ${pid}\\b.*killed by SIGKILL between runs`));
    assert.match(loss ?? '', /out-of-memory killer/);
    assert.equal(session.takeStateLoss(), undefined, 'asking clears it');
    const { outcome } = await run(session, 'print(kept)');
    assert.equal(outcome.status === 'error' && outcome.excName, 'NameError');
    assert.equal(session.takeStateLoss(), undefined);
  });

  test('the engine announces it with the next run', async () => {
    const engine = new Engine({ backends: [createPythonBackend({ log })], config: { defaultBackend: 'python' }, log });
    try {
      await engine.run({ code: 'kept = 1' });
      const [described] = engine.describeSessions();
      process.kill(described.info.pid as number, 'SIGKILL');
      await waitUntil(() => engine.describeSessions()[0].info.state === 'dead', 'the session notices the driver died');
      const result = await engine.run({ code: 'print("fresh")' });
      assert.equal(result.stdout, 'fresh\n');
      assert.equal(result.session_reset, true);
      assert.match(result.reset_reason ?? '', /killed by SIGKILL between runs/);
    } finally {
      await engine.dispose();
    }
  });

  test('restart(), dispose() and a crash during a run are not reported as losses', async () => {
    const session = newSession();
    await run(session, 'pass');
    await session.restart();
    assert.equal(session.takeStateLoss(), undefined);
    const { outcome } = await run(session, 'import os\nos._exit(3)');
    assert.equal(outcome.status, 'crashed');
    assert.equal(session.takeStateLoss(), undefined, 'the run reported this one');
    await run(session, 'pass');
    await session.dispose();
    assert.equal(session.takeStateLoss(), undefined);
  });
});

describe('stdio broken by a run is repaired before the next', { timeout: TEST_TIMEOUT }, () => {
  const session = newSession();
  const allStreams = [
    'import os, subprocess, sys',
    'print("print")',
    'print("print err", file=sys.stderr)',
    'os.write(1, b"fd1\\n")',
    'os.write(2, b"fd2\\n")',
    'subprocess.run(["echo", "child"], check=True)',
  ].join('\n');

  const assertAllArrive = async () => {
    const { outcome, out, err } = await run(session, allStreams);
    assert.deepEqual(outcome, { status: 'ok' });
    assert.equal(out, 'print\nfd1\nchild\n');
    assert.equal(err, 'print err\nfd2\n');
  };

  test('fds 1 and 2 closed', async () => {
    assert.deepEqual((await run(session, 'import os\nos.close(1)\nos.close(2)')).outcome, { status: 'ok' });
    await assertAllArrive();
  });

  test('fds 1 and 2 pointed elsewhere', async () => {
    await run(session, 'import os\nnull = os.open(os.devnull, os.O_WRONLY)\nos.dup2(null, 1)\nos.dup2(null, 2)');
    await assertAllArrive();
  });

  test('sys.stdout and sys.stderr set to None', async () => {
    await run(session, 'import sys\nsys.stdout = None\nsys.stderr = None');
    await assertAllArrive();
  });

  test('sys.stdout, sys.stderr and the sys.__std*__ originals closed; sys.stdin replaced', async () => {
    await run(
      session,
      'import sys\nsys.stdout.close()\nsys.stderr.close()\nsys.__stdout__.close()\nsys.__stderr__.close()\nsys.stdin = None',
    );
    await assertAllArrive();
    const { out } = await run(
      session,
      'import sys\nprint(sys.stdin.read(), sys.__stdout__.closed, sys.__stderr__.closed)',
    );
    assert.equal(out, ' False False\n');
  });

  test('sys.__stdout__ and sys.__stderr__ replaced', async () => {
    await run(session, 'import sys\nsys.__stdout__ = None\nsys.__stderr__ = None');
    const { out } = await run(session, 'import sys\nprint(sys.__stdout__.fileno(), sys.__stderr__.fileno())');
    assert.equal(out, '1 2\n');
  });

  test('a run that redirects sys.stdout itself still captures, within that run', async () => {
    const { outcome, out } = await run(
      session,
      'import contextlib, io\nbuffer = io.StringIO()\nwith contextlib.redirect_stdout(buffer):\n    print("captured")\nprint("got", repr(buffer.getvalue()))',
    );
    assert.deepEqual(outcome, { status: 'ok' });
    assert.equal(out, "got 'captured\\n'\n");
  });
});

describe('the memory limit', { timeout: TEST_TIMEOUT }, () => {
  const dataLimitMb =
    'import resource\nsoft, _ = resource.getrlimit(resource.RLIMIT_DATA)\nprint(-1 if soft == resource.RLIM_INFINITY else soft // 2**20)';

  test('is 4096 MB of data by default', linuxOnly, async () => {
    assert.equal((await run(newSession(), dataLimitMb)).out, '4096\n');
  });

  test('0 means none', linuxOnly, async () => {
    assert.equal((await run(newSession({ memoryLimitMb: 0 }), dataLimitMb)).out, '-1\n');
  });

  test(
    'turns a runaway allocation into MemoryError; the session lives on and smaller ones work',
    linuxOnly,
    async () => {
      const session = newSession({ memoryLimitMb: 512 });
      await run(session, 'kept = "yes"');
      const { outcome } = await run(session, 'x = bytearray(6 * 1024**3)');
      assert.equal(outcome.status === 'error' && outcome.excName, 'MemoryError');
      assert.equal(
        outcome.status === 'error' && outcome.message,
        "MemoryError (this session's memory limit is 512 MB)",
      );
      const { outcome: after, out } = await run(session, 'y = bytearray(100 * 1024**2)\nprint(kept, len(y))');
      assert.deepEqual(after, { status: 'ok' });
      assert.equal(out, `yes ${100 * 1024 ** 2}\n`);
    },
  );
});

describe('processes a run starts', { timeout: TEST_TIMEOUT }, () => {
  const forkMany = [
    'import os, subprocess, time',
    'pids = []',
    'for _ in range(25):',
    '    pid = os.fork()',
    '    if pid == 0:',
    '        time.sleep(1000)',
    '        os._exit(0)',
    '    pids.append(pid)',
    'pids += [subprocess.Popen(["sleep", "1000"]).pid for _ in range(25)]',
    '# exit at once and are never waited for: zombies',
    'pids += [subprocess.Popen(["true"]).pid for _ in range(10)]',
    '# orphans: each sh exits, leaving its sleep behind',
    'for _ in range(5):',
    '    subprocess.Popen(["sh", "-c", "sleep 1000 &"]).wait()',
    'print(*pids, "started", flush=True)',
    'while True:',
    '    pass',
  ].join('\n');

  test(
    'an interrupted run leaves none of the processes it started, zombies included; the session lives on',
    linuxOnly,
    async () => {
      const session = newSession();
      await run(session, 'kept = "yes"');
      const sink = new RecordingSink();
      const done = run(session, forkMany, sink);
      const pids = await pidsPrinted(session, sink, 'started');
      assert.equal(pids.length, 60);
      assert.ok(strays(session).length >= 55, `the run's processes are there: ${strays(session).length}`);
      session.interrupt();
      assert.deepEqual((await done).outcome, { status: 'interrupted' });
      assert.deepEqual(strays(session), []);
      assert.equal((await run(session, 'print(kept)')).out, 'yes\n');
    },
  );

  test(
    'a background process from a successful run survives later runs, even interrupted ones; restart() ends it',
    linuxOnly,
    async () => {
      const session = newSession();
      const sink = new RecordingSink();
      await run(
        session,
        'import subprocess\nserver = subprocess.Popen(["sleep", "1000"])\nprint(server.pid, "server", flush=True)',
        sink,
      );
      const [server] = await pidsPrinted(session, sink, 'server');
      await run(session, 'print("another run")');
      const looping = new RecordingSink();
      const done = run(session, 'print("looping", flush=True)\nwhile True:\n    pass', looping);
      await looping.waitFor('looping');
      session.interrupt();
      assert.deepEqual((await done).outcome, { status: 'interrupted' });
      assert.ok(!isGone(server), 'the server is still running');
      assert.equal((await run(session, 'print(server.poll())')).out, 'None\n');
      await session.restart();
      await waitUntilGone(server);
    },
  );

  const escapees = [
    'import os, subprocess, time',
    'detached = subprocess.Popen(["setsid", "sleep", "1000"]).pid',
    'read_end, write_end = os.pipe()',
    'first = os.fork()',
    'if first == 0:',
    '    os.setsid()',
    '    if os.fork() == 0:',
    '        os.write(write_end, b"%d\\n" % os.getpid())',
    '        os.execvp("sleep", ["sleep", "1000"])',
    '    os._exit(0)',
    'os.waitpid(first, 0)',
    'daemon = int(os.fdopen(read_end).readline())',
    'print(detached, daemon, "escaped", flush=True)',
  ].join('\n');

  for (const end of ['restart', 'dispose'] as const) {
    test(`a setsid child and a double-fork daemon are gone after ${end}()`, linuxOnly, async () => {
      const session = newSession();
      const sink = new RecordingSink();
      assert.deepEqual((await run(session, escapees, sink)).outcome, { status: 'ok' });
      const pids = await pidsPrinted(session, sink, 'escaped');
      for (const pid of pids) assert.ok(!isGone(pid), `process ${pid} runs after a successful run`);
      await session[end]();
      for (const pid of pids) await waitUntilGone(pid);
    });
  }

  test("the driver's own children stay the code's to wait for: their exit statuses outlive the run", async () => {
    const session = newSession();
    await run(
      session,
      'import multiprocessing, subprocess, sys\nchild = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])\nworker = multiprocessing.get_context("fork").Process(target=sys.exit, args=(4,))\nworker.start()',
    );
    await sleep(500);
    await run(session, 'pass');
    assert.equal((await run(session, 'worker.join()\nprint(child.wait(), worker.exitcode)')).out, '3 4\n');
  });

  test('orphans of the run are reaped as they exit, so no zombies pile up', linuxOnly, async () => {
    const session = newSession();
    await run(
      session,
      'import subprocess\nfor _ in range(10):\n    subprocess.Popen(["sh", "-c", "sleep 0.2 &"]).wait()',
    );
    await sleep(300);
    await waitUntil(() => strays(session).length === 0, `no zombies left: ${strays(session).join(', ')}`);
  });

  test('the engine: a run that times out leaves no process behind', linuxOnly, async () => {
    const engine = new Engine({ backends: [createPythonBackend({ log })], config: { defaultBackend: 'python' }, log });
    try {
      const result = await engine.run({ code: forkMany, timeoutS: 2 });
      assert.equal(result.diagnostics?.error_type, 'TIMEOUT');
      const [described] = engine.describeSessions();
      const driver = described.info.pid as number;
      assert.deepEqual(
        descendants(spawnedPid(driver)).filter((entry) => !entry.startsWith(`${driver} `)),
        [],
      );
      assert.equal((await engine.run({ code: 'print("still serving")' })).stdout, 'still serving\n');
    } finally {
      await engine.dispose();
    }
  });
});
