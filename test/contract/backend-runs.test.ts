// What every backend session does with a run, below the engine: output streams live into the sink, state stays
// between runs, errors come back with the cell's traceback, interrupts stop loops and sleeps and keep the state,
// restart() ends what an interrupt cannot, a huge print does not sink the session, a killed interpreter is a
// crash the next run recovers from, and sessions do not share globals. A new backend passes this before it ships.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import type { BackendSession } from '../../src/engine/backends/contract';
import type { BackendKind, BackendState } from '../../src/engine/types';
import { CAP, RecordingSink, run } from '../support/backendRuns';
import { backendUnderTest, type BackendUnderTest } from '../support/backendSessions';
import { contractTargets } from '../support/contractTargets';
import { isGone, waitUntil } from '../support/pythonSession';

/** Where restart() leaves a session: each backend brings its next interpreter up in its own way. */
const STATES_AFTER_RESTART: Record<BackendKind, BackendState[]> = {
  // The next run starts the interpreter.
  python: ['not-loaded'],
  // A fresh instance is brought up at once, so that the next run does not wait for a cold start.
  pyodide: ['not-loaded', 'loading', 'ready'],
  // The Jupyter Server restarts the kernel in place.
  jupyter: ['loading', 'ready'],
};

/** How each backend names the death of its interpreter by SIGKILL during a run. */
const KILLED_DURING_A_RUN: Record<BackendKind, RegExp> = {
  python: /was killed by SIGKILL/,
  // The sandbox around the interpreter reports its death as an exit with 128 + 9.
  pyodide: /SIGKILL|signal 9/,
  jupyter: /the kernel died and the Jupyter Server restarted it/,
};

/**
 * Why a Jupyter kernel's output is not bounded at the source: ipykernel sends all of it over IOPub, and the Jupyter
 * Server's IOPub rate limit (ServerApp.iopub_data_rate_limit) drops a flood of it, saying so on stderr, with no
 * byte counted as dropped; the other backends keep the head and tail in the interpreter and count the rest.
 */
const UNBOUNDED_AT_THE_SOURCE =
  "a Jupyter kernel's flood of output is dropped by the server's IOPub rate limit, not bounded and counted";

// The suite timeout is a guard against a hang (a hub start included), not a timing assertion.
for (const target of contractTargets()) {
  describe(`runs on a session of the ${target.label}`, { timeout: 600_000 }, () => {
    let backend: BackendUnderTest;
    let main: BackendSession;

    before(async () => {
      backend = await backendUnderTest(target);
      main = backend.open('main');
    });
    after(async () => backend.dispose());

    test('output streams into the sink while the run is still going, stdout and stderr kept apart', async () => {
      const sink = new RecordingSink();
      const running = run(
        main,
        "import sys\nprint('hello')\nprint('oops', file=sys.stderr)\nprint('second line')\nwhile True: pass",
        sink,
      );
      await Promise.all([sink.waitFor('second line'), sink.waitFor('oops', 'err')]);
      assert.equal(main.state, 'busy');
      assert.equal(sink.out, 'hello\nsecond line\n');
      assert.equal(sink.err, 'oops\n');
      main.interrupt();
      assert.deepEqual((await running).outcome, { status: 'interrupted' });
    });

    test('state stays between runs, in a real __main__', async () => {
      assert.deepEqual(
        (await run(main, 'counter = 41\ndef bump():\n    global counter\n    counter += 1\n    return counter'))
          .outcome,
        { status: 'ok' },
      );
      const { outcome, out } = await run(
        main,
        'print(bump(), __name__, __import__("sys").modules["__main__"].counter)',
      );
      assert.deepEqual(outcome, { status: 'ok' });
      assert.equal(out, '42 __main__ 42\n');
    });

    test('a SyntaxError runs nothing and points at its line in the cell', async () => {
      const { outcome, out } = await run(main, 'print("never")\ndef broken(:\n    pass');
      assert.equal(out, '');
      assert.ok(outcome.status === 'error', JSON.stringify(outcome));
      assert.equal(outcome.errorType, 'SyntaxError');
      assert.equal(outcome.excName, 'SyntaxError');
      assert.match(outcome.traceback, /<cell \d+>", line 2/);
      assert.match(outcome.traceback, /SyntaxError/);
    });

    test('an exception is a RuntimeError with its name, its message and a traceback into the cell', async () => {
      const { outcome, out } = await run(
        main,
        "print('before')\ndef explode():\n    raise ValueError('boom')\nexplode()",
      );
      assert.equal(out, 'before\n');
      assert.ok(outcome.status === 'error', JSON.stringify(outcome));
      assert.equal(outcome.errorType, 'RuntimeError');
      assert.equal(outcome.excName, 'ValueError');
      assert.equal(outcome.message, 'ValueError: boom');
      assert.match(outcome.traceback, /File "<cell \d+>", line 4, in <module>/);
      assert.match(outcome.traceback, /File "<cell \d+>", line 3, in explode\n {4}raise ValueError\('boom'\)/);

      const division = await run(main, 'def f(x):\n    return 1 / x\nf(0)');
      assert.ok(division.outcome.status === 'error', JSON.stringify(division.outcome));
      assert.equal(division.outcome.excName, 'ZeroDivisionError');
      assert.equal(division.outcome.message, 'ZeroDivisionError: division by zero');
      assert.match(division.outcome.traceback, /File "<cell \d+>", line 2, in f\n\s+return 1 \/ x/);
    });

    test('interrupting `while True: pass` gives interrupted and keeps the state', async () => {
      await run(main, 'kept = "still here"');
      const sink = new RecordingSink();
      const running = run(main, "print('looping', flush=True)\nwhile True: pass", sink);
      await sink.waitFor('looping');
      main.interrupt();
      assert.deepEqual((await running).outcome, { status: 'interrupted' });
      const after = await run(main, 'print(kept)');
      assert.deepEqual(after.outcome, { status: 'ok' });
      assert.equal(after.out, 'still here\n');
    });

    test('interrupting time.sleep(60) gives interrupted and the next run works', async () => {
      const sink = new RecordingSink();
      const running = run(main, "import time\nprint('sleeping', flush=True)\ntime.sleep(60)", sink);
      await sink.waitFor('sleeping');
      main.interrupt();
      assert.deepEqual((await running).outcome, { status: 'interrupted' });
      assert.deepEqual((await run(main, 'import time\ntime.sleep(0.01)')).outcome, { status: 'ok' });
      assert.equal((await run(main, 'print(kept)')).out, 'still here\n');
    });

    test(
      'a 10 MB print is bounded at the source: the first and last half-cap bytes, UTF-8 sequences whole',
      { skip: target.backend === 'jupyter' && UNBOUNDED_AT_THE_SOURCE },
      async () => {
        // 5 MB of one-byte and 5 MB of two-byte characters: half the cap goes out live, the last half at the end.
        const { outcome, out, dropped } = await run(main, "print('a' * 5_000_000 + 'é' * 2_500_000 + 'END')");
        assert.deepEqual(outcome, { status: 'ok' });
        const head = 'a'.repeat(CAP / 2);
        const tail = 'é'.repeat((CAP / 2 - 4) / 2) + 'END\n';
        assert.equal(out.length, head.length + tail.length);
        assert.ok(out === head + tail, 'the first and last half-cap bytes, UTF-8 sequences whole');
        assert.deepEqual(dropped, { stdout: 10_000_004 - CAP, stderr: 0 });

        const lines = await run(main, 'for i in range(200_000): print(i)');
        assert.deepEqual(lines.outcome, { status: 'ok' });
        assert.ok(Buffer.byteLength(lines.out) <= CAP);
        assert.ok(lines.out.startsWith('0\n1\n2\n'));
        assert.ok(lines.out.endsWith('199998\n199999\n'));
        assert.equal(
          lines.dropped.stdout + Buffer.byteLength(lines.out),
          1_288_890,
          'every byte is either sent or counted as dropped',
        );
      },
    );

    test('a 10 MB print leaves the session serving', async () => {
      assert.deepEqual((await run(main, 'print("H" + "x" * 10_000_000 + "T")')).outcome, { status: 'ok' });
      assert.equal((await run(main, 'print(6 * 7)')).out, '42\n');
    });

    test('restart() ends a run that ignores the interrupt as crashed, and the next run starts a fresh interpreter', async () => {
      await run(main, 'doomed = 1');
      const pidBefore = await backend.interpreterPid(main);
      const sink = new RecordingSink();
      // Deaf to SIGINT in Python code, not a long C call: a C call that holds the GIL can keep a Jupyter kernel's
      // last output from leaving (ipykernel's IOPub thread needs the GIL), and the wait for it would hang.
      const running = run(
        main,
        'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint("deaf", flush=True)\nwhile True: pass',
        sink,
      );
      await sink.waitFor('deaf');
      main.interrupt(); // ignored; the engine restarts after a grace period
      await main.restart();
      const { outcome } = await running;
      assert.ok(outcome.status === 'crashed', JSON.stringify(outcome));
      assert.match(outcome.message, /restarted/);
      assert.ok(STATES_AFTER_RESTART[target.backend].includes(main.state), `state after restart: ${main.state}`);
      await waitUntil(() => isGone(pidBefore), `the interpreter ${pidBefore} is still running after the restart`);
      const next = await run(main, "print('doomed' in globals())");
      assert.deepEqual(next.outcome, { status: 'ok' });
      assert.equal(next.out, 'False\n');
      assert.notEqual(await backend.interpreterPid(main), pidBefore);
    });

    test(
      'an interpreter killed during a run is a crash naming the cause, and the next run works',
      { skip: process.platform !== 'linux' && 'reads /proc' },
      async () => {
        const victim = backend.open('victim');
        const pid = await backend.interpreterPid(victim);
        const sink = new RecordingSink();
        const running = run(victim, "print('waiting', flush=True)\nimport time\ntime.sleep(60)", sink);
        await sink.waitFor('waiting');
        process.kill(pid, 'SIGKILL');
        const { outcome } = await running;
        assert.ok(outcome.status === 'crashed', JSON.stringify(outcome));
        assert.match(outcome.message, KILLED_DURING_A_RUN[target.backend]);
        assert.equal((await run(victim, 'print(1 + 1)')).out, '2\n');
      },
    );

    test('two sessions do not share globals, nor an interpreter', async () => {
      const a = backend.open('isolated-a');
      const b = backend.open('isolated-b');
      await run(a, 'secret = "a"');
      await run(b, 'secret = "b"');
      assert.equal((await run(a, 'print(secret)')).out, 'a\n');
      assert.equal((await run(b, 'print(secret)')).out, 'b\n');
      assert.equal((await run(main, "print('secret' in globals())")).out, 'False\n');
      assert.notEqual(await backend.interpreterPid(a), await backend.interpreterPid(b));
    });

    test('warm round trips of print(1+1) stay correct (median latency reported, not asserted)', async (t) => {
      const times: number[] = [];
      for (let i = 0; i < 1000; i++) {
        const begun = performance.now();
        const { outcome, out } = await run(main, 'print(1+1)');
        times.push(performance.now() - begun);
        assert.deepEqual([outcome, out], [{ status: 'ok' }, '2\n']);
      }
      times.sort((a, b) => a - b);
      t.diagnostic(
        `${target.label}: warm print(1+1) round trip: median ${times[500]!.toFixed(3)} ms, p90 ${times[900]!.toFixed(3)} ms`,
      );
    });
  });
}
