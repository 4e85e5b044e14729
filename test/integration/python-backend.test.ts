// What only the workspace-Python backend does, against a real interpreter: no mocks. Run `npm run build` first
// (the driver is loaded from dist/python). What every backend does is in test/contract/backend-runs.test.ts and
// host-calls.test.ts.
import { after, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPythonBackend } from '../../src/engine/backends/python/backend';
import { PYTHON_ENV_VAR, resolvePythonInterpreter } from '../../src/engine/backends/python/interpreter';
import { RawOutputChannel } from '../../src/engine/backends/python/rawOutput';
import type { Logger } from '../../src/engine/types';
import type { BackendSession } from '../../src/engine/backends/contract';
import { CAP, RecordingSink, run as runIn } from '../support/backendRuns';
import { assertCrashed, isGone, outerPid, waitUntilGone } from '../support/pythonSession';

/** Generous bounds that only stop a broken build from hanging the suite; no assertion depends on timing. */
const TEST_TIMEOUT = 60_000;

const quietLog: Logger = { info() {}, warn() {}, error() {} };
const sessions: BackendSession[] = [];
const seenPids = new Set<number>();

function newSession(name = `s${sessions.length}`): BackendSession {
  const session = createPythonBackend({}).create({
    session: name,
    log: quietLog,
    hostCall: async (method) => Promise.reject(new Error(`no host method ${method}`)),
  });
  sessions.push(session);
  return session;
}

after(async () => {
  await Promise.all(sessions.map((s) => s.dispose()));
  // Every driver this file started is gone once its session is disposed.
  for (const pid of seenPids) await waitUntilGone(pid);
});

async function run(session: BackendSession, code: string, sink = new RecordingSink(), outputCapBytes = CAP) {
  const result = await runIn(session, code, sink, outputCapBytes);
  const pid = session.info().pid;
  if (pid) seenPids.add(pid);
  return result;
}

describe('workspace Python backend', { timeout: TEST_TIMEOUT }, () => {
  const session = newSession('main');

  test('starts lazily and reports the interpreter', async () => {
    assert.equal(session.state, 'not-loaded');
    await session.start();
    assert.equal(session.state, 'ready');
    const info = session.info();
    assert.equal(info.kind, 'python');
    assert.match(info.pythonVersion ?? '', /^3\.\d+\.\d+$/);
    assert.ok(info.executable && path.isAbsolute(info.executable), `executable: ${info.executable}`);
    assert.ok(info.pid && info.pid > 0);
    seenPids.add(info.pid);
  });

  test('bytes written at the fd level and by subprocesses are captured for the run', async () => {
    const { outcome, out, err } = await run(
      session,
      'import os, subprocess, sys\nos.write(1, b"x")\nos.write(2, b"fd2\\n")\nsubprocess.run(["echo", "from a child"], check=True)\nsubprocess.run([sys.executable, "-c", "import sys; sys.stderr.write(\'child err\\\\n\')"], check=True)',
    );
    assert.deepEqual(outcome, { status: 'ok' });
    assert.equal(out, 'xfrom a child\n');
    assert.equal(err, 'fd2\nchild err\n');
  });

  test('forked children and multiprocessing workers use cell definitions and their output is captured', async () => {
    const { outcome, out } = await run(
      session,
      [
        'import os, multiprocessing',
        'def square(x):',
        '    return x * x',
        'ctx = multiprocessing.get_context("fork")',
        'with ctx.Pool(2) as pool:',
        '    print(pool.map(square, [1, 2, 3]))',
        'pid = os.fork()',
        'if pid == 0:',
        '    print("from the forked child")',
        'else:',
        '    os.waitpid(pid, 0)',
      ].join('\n'),
    );
    assert.deepEqual(outcome, { status: 'ok' });
    assert.match(out, /^\[1, 4, 9\]\n/m);
    assert.match(out, /^from the forked child\n/m);
    assert.equal((await run(session, 'print("parent still serves")')).out, 'parent still serves\n');
  });

  test('sys.stdout.buffer and a flush without a newline reach the sink', async () => {
    const sink = new RecordingSink();
    const done = run(
      session,
      'import sys, time\nsys.stdout.buffer.write("héllo ".encode())\nprint("partial", end="", flush=True)\ntime.sleep(0.3)',
      sink,
    );
    await sink.waitFor('partial');
    const { out } = await done;
    assert.equal(out, 'héllo partial');
  });

  test('a 10 MB write below sys.stdout is bounded too', async () => {
    const sink = new RecordingSink();
    const { outcome, out } = await run(session, 'import os\nos.write(1, b"H" + b"y" * 10_000_000 + b"T")', sink);
    assert.deepEqual(outcome, { status: 'ok' });
    assert.ok(Buffer.byteLength(out) <= CAP, `received ${Buffer.byteLength(out)} bytes`);
    assert.ok(out.startsWith('Hyyy') && out.endsWith('yyyT'), JSON.stringify([out.slice(0, 30), out.slice(-30)]));
    assert.equal(
      Buffer.byteLength(out) + sink.droppedBytes.stdout,
      10_000_002,
      'every byte is either sent or counted as dropped',
    );
  });

  test('an interrupt before the interpreter is up calls the run off', async () => {
    const fresh = newSession();
    const pending = run(fresh, 'print("never")');
    fresh.interrupt();
    const { outcome, out } = await pending;
    assert.deepEqual(outcome, { status: 'interrupted' });
    assert.equal(out, '');
    assert.equal((await run(fresh, 'print("later")')).out, 'later\n');
  });

  test('an interrupt while idle is ignored, and interrupt() while idle is a no-op', async () => {
    await run(session, 'kept = "yes"');
    const pid = session.info().pid as number;
    session.interrupt();
    process.kill(pid, 'SIGINT');
    const { outcome, out } = await run(session, 'print(kept)');
    assert.deepEqual(outcome, { status: 'ok' });
    assert.equal(out, 'yes\n');
    assert.equal(session.info().pid, pid, 'the same driver still serves the session');
  });

  test('a flood of interrupts while output streams never breaks the protocol', async () => {
    const sink = new RecordingSink();
    const done = run(
      session,
      'import sys\nprint("go", flush=True)\ntry:\n    while True:\n        print("z" * 100)\n        sys.stderr.write("e")\nexcept KeyboardInterrupt:\n    print("stopped")',
      sink,
      1 << 20,
    );
    await sink.waitFor('go');
    for (let i = 0; i < 20; i++) {
      session.interrupt();
      await new Promise((r) => setTimeout(r, 5));
    }
    const { outcome } = await done;
    assert.ok(outcome.status === 'ok' || outcome.status === 'interrupted', JSON.stringify(outcome));
    assert.equal((await run(session, 'print(kept)')).out, 'yes\n');
  });
});

describe('restarts and crashes', { timeout: TEST_TIMEOUT }, () => {
  test('restart() also kills processes the code started', async () => {
    const session = newSession();
    const sink = new RecordingSink();
    const done = run(
      session,
      'import subprocess\np = subprocess.Popen(["sleep", "1000"])\nprint("child", p.pid, flush=True)\nwhile True:\n    pass',
      sink,
    );
    await sink.waitFor('\n');
    const childPid = outerPid(session, Number(/child (\d+)/.exec(sink.out)?.[1]));
    assert.ok(childPid > 0);
    assert.ok(!isGone(childPid), 'the grandchild runs before the restart');
    await session.restart();
    assertCrashed((await done).outcome, /restarted/);
    await waitUntilGone(childPid);
    assert.equal((await run(session, 'print("fresh")')).out, 'fresh\n');
  });

  test('os._exit(3) is a crash naming the exit code and the end of stderr; the next run works', async () => {
    const session = newSession();
    const { outcome } = await run(session, 'import os\nos.write(2, b"last words\\n")\nos._exit(3)');
    assertCrashed(outcome, /exited with code 3/);
    assertCrashed(outcome, /last words/);
    assert.equal(session.state, 'dead');
    assert.equal((await run(session, 'print("back")')).out, 'back\n');
    assert.equal(session.state, 'ready');
  });

  test('a segfault is a crash naming the signal, with the fault handler report', async () => {
    const session = newSession();
    const { outcome } = await run(session, 'import ctypes\nctypes.string_at(0)');
    assertCrashed(outcome, /SIGSEGV/);
    assertCrashed(outcome, /Segmentation fault/);
    assert.equal((await run(session, 'print("back")')).out, 'back\n');
  });

  test('dispose() kills the driver and refuses further runs', async () => {
    const session = newSession();
    await run(session, 'pass');
    const pid = session.info().pid as number;
    await session.dispose();
    await waitUntilGone(pid);
    assert.equal(session.state, 'dead');
    await assert.rejects(run(session, 'pass'), /disposed/);
  });

  test('an interpreter that cannot start rejects start() with a clear error', async () => {
    const session = createPythonBackend({ pythonPath: '/nonexistent/python3' }).create({
      session: 'bad',
      log: quietLog,
      hostCall: async () => null,
    });
    await assert.rejects(session.start(), /\/nonexistent\/python3.*ENOENT/);
    assert.equal(session.state, 'dead');
    await session.dispose();
  });
});

describe('raw output channel', () => {
  const marker = Buffer.from('\0end-of-run-token\0', 'latin1');
  const channel = () => {
    const seen: string[] = [];
    const raw = new RawOutputChannel(
      (text) => seen.push(text),
      () => seen.push('<marker>'),
      (bytes) => seen.push(`<dropped ${bytes}>`),
    );
    raw.setMarker(marker);
    return { raw, seen, text: () => seen.join('') };
  };

  test('a marker split at every possible point is found once, with the output around it intact', () => {
    const stream = Buffer.concat([Buffer.from('before é'), marker, Buffer.from('after')]);
    for (let cut = 1; cut < stream.length; cut++) {
      const { raw, text } = channel();
      raw.beginRun(1000);
      raw.push(stream.subarray(0, cut));
      raw.push(stream.subarray(cut));
      assert.equal(text(), 'before é<marker>after', `cut at ${cut}`);
    }
  });

  test('bytes that only look like the start of a marker are output once more bytes prove otherwise', () => {
    const { raw, text } = channel();
    raw.beginRun(1000);
    raw.push(Buffer.from('a\0end-of'));
    assert.equal(text(), 'a');
    raw.push(Buffer.from('-the-world'));
    assert.equal(text(), 'a\0end-of-the-world');
    raw.push(Buffer.from('\0en'));
    raw.endRun();
    assert.equal(text(), 'a\0end-of-the-world\0en');
  });

  test('a run beyond its cap keeps the head live and the tail at the end, with a notice', () => {
    const { raw, seen, text } = channel();
    raw.beginRun(10);
    raw.push(Buffer.from('0123456789abcdefghij'));
    assert.equal(text(), '01234', 'only the head is live');
    raw.push(Buffer.concat([Buffer.from('KLMNOPQRSTUVWXYZ'), marker]));
    assert.equal(seen.at(-1), '<marker>');
    assert.equal(text(), '01234<dropped 26>VWXYZ<marker>');
  });

  test('multi-byte characters split across chunks and at the cap boundaries stay whole', () => {
    const { raw, text } = channel();
    raw.beginRun(1000);
    const bytes = Buffer.from('日本語🐍');
    for (const byte of bytes) raw.push(Buffer.from([byte]));
    raw.endRun();
    assert.equal(text(), '日本語🐍');

    const capped = channel();
    capped.raw.beginRun(8);
    capped.raw.push(Buffer.from('ééééééééé'));
    capped.raw.endRun();
    assert.doesNotMatch(capped.text(), /\ufffd/);
    assert.match(capped.text(), /^éé<dropped \d+>éé$/);
  });
});

describe('interpreter resolution', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-py-'));
  const makeExecutable = (name: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o755 });
    return file;
  };
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('an explicit path wins over CODE_MODE_PYTHON and PATH', () => {
    makeExecutable('python3');
    const env = { [PYTHON_ENV_VAR]: '/from/env/python', PATH: dir };
    assert.equal(resolvePythonInterpreter('/explicit/python', env), '/explicit/python');
  });

  test('CODE_MODE_PYTHON wins over PATH', () => {
    assert.equal(
      resolvePythonInterpreter(undefined, { [PYTHON_ENV_VAR]: '/from/env/python', PATH: dir }),
      '/from/env/python',
    );
    assert.equal(
      resolvePythonInterpreter('  ', { [PYTHON_ENV_VAR]: '/from/env/python', PATH: dir }),
      '/from/env/python',
    );
  });

  test('PATH is searched for python3, then python, skipping what is not an executable file', () => {
    const other = fs.mkdtempSync(path.join(dir, 'only-python-'));
    fs.writeFileSync(path.join(other, 'python3'), 'not executable', { mode: 0o644 });
    fs.mkdirSync(path.join(other, 'python3-dir'));
    const python = path.join(other, 'python');
    fs.writeFileSync(python, '#!/bin/sh\n', { mode: 0o755 });
    assert.equal(resolvePythonInterpreter(undefined, { PATH: other }), python);
    assert.equal(
      resolvePythonInterpreter(undefined, { PATH: [other, dir].join(path.delimiter) }),
      path.join(dir, 'python3'),
    );
  });

  test('no interpreter anywhere is a clear error', () => {
    const empty = fs.mkdtempSync(path.join(dir, 'empty-'));
    assert.throws(() => resolvePythonInterpreter(undefined, { PATH: empty }), /no Python interpreter found/);
  });
});
