// The engine's promises about sessions, on a fake backend: every loss of state is announced on the next run
// under that name, and live sessions are capped with the least recently used idle one evicted.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { Engine } from '../../src/engine/engine';
import { renderResultText } from '../../src/engine/result';
import { RunHistory } from '../../src/engine/history';
import type { RunEvent } from '../../src/engine/types';
import type { SettingNames } from '../../src/engine/config';
import { fakeBackend } from '../support/fakeBackend';

function engineWith(maxSessions = 8, settingNames: SettingNames = {}) {
  const backend = fakeBackend();
  const engine = new Engine({ backends: [backend], config: { maxSessions, settingNames } });
  const run = (session: string, code = 'x') => engine.run({ code, backend: 'pyodide', session });
  return { backend, engine, run };
}

describe('engine sessions', () => {
  test('a run on a session that kept its state announces nothing', async () => {
    const { run } = engineWith();
    await run('a');
    const second = await run('a');
    assert.equal(second.stdout, 'a:2:x\n');
    assert.equal(second.session_reset, undefined);
    assert.equal(second.reset_reason, undefined);
  });

  test('an interpreter lost between runs is announced once, with its reason', async () => {
    const { backend, run } = engineWith();
    await run('a');
    backend.latest('a')!.die('the Python process was killed by SIGKILL between runs');
    const next = await run('a');
    assert.equal(next.success, true);
    assert.equal(next.stdout, 'a:1:x\n');
    assert.equal(next.session_reset, true);
    assert.equal(next.reset_reason, 'the Python process was killed by SIGKILL between runs');
    assert.equal(next.diagnostics, null, 'a successful run stays successful');
    assert.match(renderResultText(next), /session reset before this run: the Python process was killed/);
    const after = await run('a');
    assert.equal(after.session_reset, undefined, 'announced once');
  });

  test('a failing run after a loss carries session_reset in its diagnostics too', async () => {
    const { backend, engine } = engineWith();
    await engine.run({ code: 'x', backend: 'pyodide', session: 'a' });
    backend.latest('a')!.die('killed');
    const refused = await engine.run({ code: 'x', backend: 'pyodide', session: 'a', timeoutS: 1 });
    assert.equal(refused.session_reset, true);
  });

  test('a reset the run asked for is reported as such', async () => {
    const { engine, run } = engineWith();
    await run('a');
    const fresh = await engine.run({ code: 'x', backend: 'pyodide', session: 'a', reset: true });
    assert.equal(fresh.stdout, 'a:1:x\n');
    assert.equal(fresh.session_reset, true);
    assert.equal(fresh.reset_reason, 'this run asked for a fresh interpreter');
  });

  test('a reset from elsewhere (a person, another interpreter selected) is told to the next run', async () => {
    const { backend, engine, run } = engineWith();
    await run('a');
    await engine.resetSession('a', 'pyodide', 'the session was restarted from VS Code');
    assert.equal(backend.made[0]!.disposed, true);
    const next = await run('a');
    assert.equal(next.reset_reason, 'the session was restarted from VS Code');
    await engine.setBackendFactory(backend, 'the workspace interpreter changed to /usr/bin/python3');
    const swapped = await run('a');
    assert.equal(swapped.reset_reason, 'the workspace interpreter changed to /usr/bin/python3');
  });

  test('past the cap the least recently used idle session is evicted, and its next run is told', async () => {
    const { backend, run } = engineWith(2);
    await run('a');
    await run('b');
    await run('a');
    await run('c');
    const b = backend.made.find((s) => s.name === 'b')!;
    assert.equal(b.disposed, true, 'b was the least recently used');
    assert.equal(backend.made.find((s) => s.name === 'a')!.disposed, false);
    const back = await run('b');
    assert.equal(back.session_reset, true);
    assert.match(back.reset_reason ?? '', /ended to make room for session "c" \(at most 2 pyodide sessions/);
    assert.equal(back.stdout, 'b:1:x\n');
  });

  test('when every live session is busy, a new one is refused with a clear error and nothing is lost', async () => {
    const { backend, engine, run } = engineWith(1, { maxSessions: 'setting codeMode.maxSessions' });
    await run('a');
    const a = backend.latest('a')!;
    a.holdNextRun = true;
    const busy = run('a');
    const refused = await run('b');
    assert.equal(refused.success, false);
    assert.equal(refused.diagnostics?.error_type, 'INVALID_ARGUMENT');
    assert.match(
      refused.diagnostics?.message ?? '',
      /all 1 pyodide sessions are busy.*\(the limit is 1: setting codeMode\.maxSessions\)/,
    );
    a.release();
    assert.equal((await busy).stdout, 'a:2:x\n');
    assert.equal(a.disposed, false);
    const packages = await engine.checkPackages({ packages: ['x'], session: 'c', backend: 'pyodide' });
    assert.equal(packages.success, false);
  });

  test('a refused run (a backend turned off) starts and finishes at once, so the history and the results show why', async () => {
    const { engine } = engineWith();
    await engine.setBackendEnabled('pyodide', false, 'off because this workspace is not trusted');
    const events: RunEvent[] = [];
    const history = new RunHistory(10);
    engine.onRunEvent((event) => {
      events.push(event);
      history.handle(event);
    });
    const refused = await engine.run({
      code: 'print(1)',
      backend: 'pyodide',
      session: 'mine',
      origin: 'command',
      script: { path: '/work/a.py', firstLine: 3 },
    });
    assert.equal(refused.diagnostics?.error_type, 'INVALID_ARGUMENT');
    assert.deepEqual(
      events.map((e) => e.type),
      ['started', 'finished'],
    );
    const [started] = events;
    assert.ok(started?.type === 'started');
    assert.deepEqual(
      [started.runId, started.backend, started.session, started.code, started.origin, started.location],
      [refused.run_id, 'pyodide', 'mine', 'print(1)', 'command', { file: '/work/a.py', line: 3 }],
    );
    assert.match(history.get(refused.run_id)?.result?.diagnostics?.message ?? '', /not trusted/);
  });

  test('the names of dropped sessions remembered for announcement are bounded', async () => {
    const { run } = engineWith(1);
    for (let i = 0; i < 1005; i++) await run(`s${i}`);
    const first = await run('s0');
    assert.equal(first.session_reset, undefined, 'the oldest dropped names are forgotten');
    const recent = await run('s1003');
    assert.equal(recent.session_reset, true);
  });

  test('a time limit of 0 means none: only an interrupt ends the run', async () => {
    const { backend, engine, run } = engineWith();
    await run('a');
    const session = backend.latest('a')!;
    session.holdNextRun = true;
    const unlimited = engine.run({ code: 'x', backend: 'pyodide', session: 'a', timeoutS: 0 });
    await new Promise((resolve) => setImmediate(resolve));
    session.release();
    assert.equal((await unlimited).success, true);
  });

  test('a run stopped at its time limit names what set the limit', async () => {
    const { backend, engine, run } = engineWith();
    await run('a');
    backend.latest('a')!.holdNextRun = true;
    const stopped = await engine.run({
      code: 'x',
      backend: 'pyodide',
      session: 'a',
      timeoutS: 0.01,
      timeoutSource: 'setting codeMode.run.timeoutSeconds',
    });
    assert.equal(stopped.diagnostics?.error_type, 'TIMEOUT');
    assert.match(stopped.diagnostics?.message ?? '', /time limit of 0\.01 s \(setting codeMode\.run\.timeoutSeconds\)/);
    const defaults = engineWith();
    defaults.engine.configure({ timeoutS: 0.01 });
    await defaults.run('b');
    defaults.backend.latest('b')!.holdNextRun = true;
    const byDefault = await defaults.run('b');
    assert.match(byDefault.diagnostics?.message ?? '', /\(the default time limit\)/);
    const given = engine.run({ code: 'x', backend: 'pyodide', session: 'a', timeoutS: 0.01 });
    backend.latest('a')!.holdNextRun = true;
    assert.match((await given).diagnostics?.message ?? '', /\(the time limit given to this run\)/);
  });

  test("the engine's messages name a setting as its front end does, and name none it was not given", async () => {
    const names: SettingNames = {
      timeout: 'flag --timeout',
      maxSessions: 'flag --max-sessions',
      jupyterUrl: 'flag --jupyter-url URL|local',
    };
    for (const given of [names, {}]) {
      const { backend, engine, run } = engineWith(1, given);
      await run('a');
      const a = backend.latest('a')!;
      a.holdNextRun = true;
      const busy = run('a');
      const full = await run('b');
      a.release();
      await busy;
      engine.configure({ timeoutS: 0.01 });
      a.holdNextRun = true;
      const stopped = await run('a');
      const noJupyter = await engine.run({ code: 'x', backend: 'jupyter' });
      const messages = [stopped, full, noJupyter].map((result) => result.diagnostics?.message ?? '');
      if (given === names) {
        assert.match(messages[0]!, /time limit of 0\.01 s \(the default time limit: flag --timeout\)/);
        assert.match(messages[1]!, /\(the limit is 1: flag --max-sessions\)/);
        assert.match(
          messages[2]!,
          /the jupyter backend is not available here: it needs a Jupyter Server \(flag --jupyter-url URL\|local\)$/,
        );
      } else {
        assert.match(messages[0]!, /time limit of 0\.01 s \(the default time limit\)/);
        assert.match(messages[1]!, /\(the limit is 1\);/);
        assert.match(messages[2]!, /it needs a Jupyter Server$/);
      }
      for (const message of messages) assert.doesNotMatch(message, given === names ? /codeMode\./ : /codeMode\.|--/);
      await engine.dispose();
    }
  });

  test('a run past its limit that ignores the interrupt says "restarted" only when the restart worked', async () => {
    const engine = (failure?: string) => {
      const made = engineWith();
      made.engine.configure({ interruptGraceMs: 10 });
      return { ...made, failure };
    };
    for (const { backend, run, engine: e, failure } of [engine(), engine('404 Not Found: the kernel does not exist')]) {
      await run('a');
      const session = backend.latest('a')!;
      session.holdNextRun = true;
      session.ignoresInterrupt = true;
      session.restartFailure = failure;
      const stopped = await e.run({ code: 'x', backend: 'pyodide', session: 'a', timeoutS: 0.01 });
      assert.equal(stopped.diagnostics?.error_type, 'TIMEOUT');
      assert.equal(stopped.session_reset, true);
      if (failure === undefined)
        assert.match(stopped.diagnostics?.message ?? '', /did not stop in time and was restarted/);
      else {
        assert.doesNotMatch(stopped.diagnostics?.message ?? '', /was restarted/);
        assert.match(
          stopped.diagnostics?.message ?? '',
          /could not be restarted \(404 Not Found: the kernel does not exist\)/,
        );
      }
    }
  });
});

describe('installs show as runs', () => {
  test('an install starts and finishes as a run of %pip install, with every failure whole in its stderr; a check does not', async () => {
    const { engine } = engineWith();
    const events: RunEvent[] = [];
    engine.onRunEvent((event) => events.push(event));
    const result = await engine.installPackages({
      packages: ['cmpkg==1.0', 'other'],
      backend: 'pyodide',
      session: 'i',
      origin: 'command',
    });
    assert.equal(result.success, false);
    const started = events.find((e) => e.type === 'started');
    assert.ok(started && started.type === 'started');
    assert.deepEqual(
      [started.code, started.origin, started.session, started.backend],
      ['%pip install cmpkg==1.0 other', 'command', 'i', 'pyodide'],
    );
    const finished = events.find((e) => e.type === 'finished');
    assert.ok(finished && finished.type === 'finished');
    assert.equal(finished.runId, started.runId);
    assert.equal(finished.result.success, false);
    assert.equal(finished.result.diagnostics?.message, result.message);
    assert.equal(finished.result.stderr, result.packages.map((p) => `${p.requested}: ${p.error}\n`).join(''));
    assert.deepEqual(
      events.filter((e) => e.type === 'stderr').map((e) => e.type === 'stderr' && e.text),
      [finished.result.stderr],
      'streamed as a run streams',
    );
    events.length = 0;
    await engine.checkPackages({ packages: ['cmpkg'], backend: 'pyodide', session: 'i' });
    assert.deepEqual(events, [], 'a check changes nothing, so it is no run');
  });
});
