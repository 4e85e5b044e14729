// The spare Pyodide interpreter (spare.ts), on real sandboxed Pyodide hosts: a new session takes the one started
// ahead of it (its process, its scratch folder, its host calls) and another is started; a restarted session keeps
// its own folder and so never takes one; a spare nobody wants any more is ended. Speed itself is shown by the
// bench only: nothing here depends on time beyond generous guards.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../src/engine/index';
import type { Engine } from '../../src/engine/engine';
import { until } from '../support/http';

const SCRATCH_AND_HOST_CALL =
  "import os, _code_mode_host as host\nprint(os.environ['CODE_MODE_SCRATCH'])\nprint(host.call('echo', [1, 2]))";

describe('the spare Pyodide interpreter', () => {
  let storage: string;
  let engine: Engine;

  before(() => {
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-spare-'));
    fs.mkdirSync(path.join(storage, 'workspace'));
    engine = createEngine({ storageDir: storage, workspaceRoots: [path.join(storage, 'workspace')] });
    engine.setHostCallHandler(async (method, params) => ({ method, params }));
  });

  after(async () => {
    await engine.dispose();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  const readySpare = async (): Promise<number> => {
    await until(() => engine.spareInfo()?.state === 'ready', 'the spare to be ready', 180_000);
    return engine.spareInfo()!.pid!;
  };

  it('serves the first run of a new session, with its scratch folder and host calls, and another spare starts', async () => {
    engine.keepSpare('pyodide');
    const sparePid = await readySpare();
    const result = await engine.run({ code: SCRATCH_AND_HOST_CALL, backend: 'pyodide', session: 'first' });
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(engine.backendInfo('pyodide', 'first').pid, sparePid, 'the session runs in the spare process');
    const session = engine.describeSessions().find((s) => s.name === 'first')!;
    const [scratch, echoed] = result.stdout.trimEnd().split('\n');
    assert.equal(scratch, session.scratchDir, 'the spare scratch folder is the session’s own');
    assert.ok(fs.statSync(scratch).isDirectory());
    assert.equal(
      echoed,
      "{'method': 'echo', 'params': [1, 2]}",
      'host calls reach the engine through the session that took the spare',
    );
    assert.equal(result.session_reset, undefined, 'a fresh session announces no loss');
    const next = await readySpare();
    assert.notEqual(next, sparePid, 'a new spare was started after the first was taken');
    const again = await engine.run({ code: 'x = 1\nprint(x)', backend: 'pyodide', session: 'first' });
    assert.equal(engine.backendInfo('pyodide', 'first').pid, sparePid, 'later runs of the session stay in its process');
    assert.equal(again.stdout, '1\n');
  });

  it('is not taken by a restarted session, which keeps its own scratch folder', async () => {
    const sparePid = await readySpare();
    const before = engine.describeSessions().find((s) => s.name === 'first')!.scratchDir;
    await engine.resetSession('first', 'pyodide');
    const result = await engine.run({ code: SCRATCH_AND_HOST_CALL, backend: 'pyodide', session: 'first' });
    assert.equal(result.success, true, JSON.stringify(result.diagnostics));
    assert.equal(result.stdout.split('\n')[0], before, 'the restarted session keeps its folder');
    assert.equal(result.session_reset, true, 'the reset is announced');
    assert.notEqual(engine.backendInfo('pyodide', 'first').pid, sparePid);
    assert.equal(engine.spareInfo()?.pid, sparePid, 'the spare is still waiting');
  });

  it('that died while waiting is not handed to a new session, which starts fresh and announces no loss', async () => {
    const sparePid = await readySpare();
    process.kill(sparePid, 'SIGKILL');
    await until(() => engine.spareInfo()?.state !== 'ready', 'the spare to be seen gone');
    const result = await engine.run({ code: 'print("fresh")', backend: 'pyodide', session: 'after-a-dead-spare' });
    assert.equal(result.stdout, 'fresh\n', JSON.stringify(result.diagnostics));
    assert.equal(result.session_reset, undefined, 'a fresh session announces no loss');
    assert.notEqual(engine.backendInfo('pyodide', 'after-a-dead-spare').pid, sparePid);
    assert.notEqual(await readySpare(), sparePid, 'a new spare replaces the dead one');
  });

  it('is ended when none is wanted, and when its backend is turned off', async () => {
    const sparePid = await readySpare();
    const sessionFolders = engine.describeSessions().map((s) => s.scratchDir);
    const spareScratch = fs
      .readdirSync(path.join(storage, 'scratch'))
      .filter((name) => !sessionFolders.includes(path.join(storage, 'scratch', name)));
    assert.equal(spareScratch.length, 1, 'the spare has a folder of its own');
    engine.keepSpare(undefined);
    assert.equal(engine.spareInfo(), undefined);
    await until(() => !processAlive(sparePid), 'the unwanted spare to end');
    await until(
      () => spareScratch.every((name) => !fs.existsSync(path.join(storage, 'scratch', name))),
      'its scratch folder to go',
    );
    engine.keepSpare('pyodide');
    await readySpare();
    await engine.setBackendEnabled('pyodide', false, 'off for the test');
    assert.equal(engine.spareInfo(), undefined, 'a turned-off backend keeps no spare');
    await engine.setBackendEnabled('pyodide', true);
    await readySpare();
  });
});

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
