// The workspace interpreter outside VS Code (src/vscode/services/interpreterService.ts, given stand-ins for the Python
// extension, the window and the workspace): which interpreter is chosen, the fallbacks when the Python extension is
// absent or fails, and what a change restarts.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import type { Engine } from '../../src/engine/index';
import type { PythonEnvironments } from '../../src/vscode/common/python.apis';
import { InterpreterService, type InterpreterChoice } from '../../src/vscode/services/interpreterService';
import { settingsWith } from '../support/settingsStandIn';

const FOLDER_URI = { fsPath: '/work/project', scheme: 'file' } as vscode.Uri;

/** The Python extension's environments API, its active environment `active` (a thrown error: it fails to resolve). */
function pythonExtension(active: { executable: string } | Error) {
  const asked: unknown[] = [];
  let changeListener: (() => void) | undefined;
  const environments = {
    getActiveEnvironmentPath: (resource?: vscode.Uri) => {
      asked.push(resource);
      return { id: 'active', path: 'active' };
    },
    resolveEnvironment: async () => {
      if (active instanceof Error) throw active;
      return { executable: { uri: { fsPath: active.executable } } };
    },
    onDidChangeActiveEnvironmentPath: (listener: () => void) => {
      changeListener = listener;
      return { dispose: () => (changeListener = undefined) };
    },
  } as unknown as PythonEnvironments;
  return {
    environments,
    asked,
    setActive: (next: { executable: string }) => (active = next),
    fireChange: () => changeListener?.(),
  };
}

function interpreterService(options: {
  settings?: Record<string, unknown>;
  /** Absent: the Python extension is not installed; an Error: its API fails to load. */
  python?: PythonEnvironments | Error;
  /** The engine exists, and records the backends swapped into it. */
  engineCreated?: boolean;
}) {
  const warnings: string[] = [];
  const notices: string[] = [];
  const swaps: { kind: string; reason: string }[] = [];
  const settingValues = { ...options.settings };
  const settings = settingsWith(settingValues);
  const engine = {
    setBackendFactory: async (factory: { kind: string }, reason: string) =>
      void swaps.push({ kind: factory.kind, reason }),
  } as unknown as Engine;
  let apiLoads = 0;
  const service = new InterpreterService({
    engine: { ifCreated: async () => (options.engineCreated ? engine : undefined) },
    settings,
    storageDir: '/tmp/code-mode-storage',
    logger: { info: () => undefined, warn: (message) => void warnings.push(message), error: () => undefined },
    python: {
      isPythonExtensionInstalled: () => options.python !== undefined,
      pythonEnvironments: async () => {
        apiLoads++;
        if (options.python instanceof Error) throw options.python;
        return options.python!;
      },
    },
    window: { showInformationMessage: async (message: string) => void notices.push(message) },
    workspace: { workspaceFolders: () => [{ uri: FOLDER_URI, name: 'project', index: 0 }] },
  });
  const changes: InterpreterChoice[] = [];
  service.onDidChange((choice) => changes.push(choice));
  /** Sets codeMode.pythonPath as a settings change does: the settings re-read, then the service told. */
  const setPythonPath = async (value: string) => {
    settingValues.pythonPath = value;
    settings.reread();
    await service.settingChanged();
  };
  return { service, warnings, notices, swaps, changes, setPythonPath, apiLoads: () => apiLoads };
}

/** The change listeners are told after a fresh look-up that answers at once: done once its microtasks have run. */
const reportsDone = () => new Promise((resolve) => setImmediate(resolve));

test("the Python extension's selected interpreter comes first, asked for the first workspace folder", async () => {
  const python = pythonExtension({ executable: '/work/project/.venv/bin/python' });
  const { service, warnings } = interpreterService({
    python: python.environments,
    settings: { pythonPath: '/usr/bin/python3' },
  });
  assert.equal(service.inUse, undefined, 'nothing is looked up before it is needed');
  assert.deepEqual(await service.current(), { path: '/work/project/.venv/bin/python', source: 'python-extension' });
  assert.deepEqual(python.asked, [FOLDER_URI]);
  assert.equal(service.label(), '/work/project/.venv/bin/python');
  assert.deepEqual(warnings, []);
});

test('when the Python extension cannot resolve its environment, codeMode.pythonPath is used, and the failure logged', async () => {
  const python = pythonExtension(new Error('no environment'));
  const { service, warnings } = interpreterService({
    python: python.environments,
    settings: { pythonPath: '/opt/py/bin/python' },
  });
  assert.deepEqual(await service.current(), { path: '/opt/py/bin/python', source: 'setting' });
  assert.deepEqual(warnings, ['Python extension did not resolve the active environment: Error: no environment']);
});

test("when the Python extension's API does not load, or the extension is absent, the setting is used", async () => {
  const failing = interpreterService({
    python: new Error('activation failed'),
    settings: { pythonPath: '/opt/py/bin/python' },
  });
  assert.deepEqual(await failing.service.current(), { path: '/opt/py/bin/python', source: 'setting' });
  assert.deepEqual(failing.warnings, ['Python extension API unavailable: Error: activation failed']);

  const absent = interpreterService({ settings: { pythonPath: '/opt/py/bin/python' } });
  assert.deepEqual(await absent.service.current(), { path: '/opt/py/bin/python', source: 'setting' });
  assert.equal(absent.apiLoads(), 0, "an absent extension's API is not asked for");
  assert.deepEqual(absent.warnings, []);
});

test('the first choice is kept: later asks do not look it up again', async () => {
  const python = pythonExtension({ executable: '/venv/a/bin/python' });
  const { service } = interpreterService({ python: python.environments });
  await service.current();
  python.setActive({ executable: '/venv/b/bin/python' });
  assert.equal((await service.current()).path, '/venv/a/bin/python');
  assert.equal(python.asked.length, 1);
});

test('a new codeMode.pythonPath before the engine exists is taken and reported, with nothing to restart', async () => {
  const { service, swaps, notices, changes, setPythonPath } = interpreterService({
    settings: { pythonPath: '/a/python' },
  });
  await service.current();
  await setPythonPath('/b/python');
  await reportsDone();
  assert.equal(service.inUse?.path, '/b/python');
  assert.deepEqual(changes, [{ path: '/b/python', source: 'setting' }]);
  assert.deepEqual(swaps, []);
  assert.deepEqual(notices, []);
});

test("a new interpreter restarts a created engine's workspace-Python sessions, and a local Jupyter Server's, and says so", async () => {
  const { service, swaps, notices, setPythonPath } = interpreterService({
    settings: { pythonPath: '/a/python', 'jupyter.url': 'local' },
    engineCreated: true,
  });
  await service.current();
  await setPythonPath('/b/python');
  const reason = 'the workspace interpreter changed to /b/python';
  assert.deepEqual(swaps, [
    { kind: 'python', reason },
    { kind: 'jupyter', reason },
  ]);
  assert.deepEqual(notices, [
    'Code Mode: workspace Python changed to /b/python. Its sessions were restarted: their variables are gone.',
  ]);
  // The same interpreter again: nothing restarts.
  await setPythonPath('/b/python');
  assert.equal(swaps.length, 2);
});

test('a remote Jupyter Server does not follow the interpreter', async () => {
  const { service, swaps, setPythonPath } = interpreterService({
    settings: { pythonPath: '/a/python', 'jupyter.url': 'http://jupyter.example:8888' },
    engineCreated: true,
  });
  await service.current();
  await setPythonPath('/b/python');
  assert.deepEqual(
    swaps.map((swap) => swap.kind),
    ['python'],
  );
});

test("the Python extension's selection changing swaps the interpreter in and tells the listeners", async () => {
  const python = pythonExtension({ executable: '/venv/a/bin/python' });
  const { service, swaps, changes } = interpreterService({ python: python.environments, engineCreated: true });
  await service.current();
  python.setActive({ executable: '/venv/b/bin/python' });
  python.fireChange();
  await reportsDone();
  assert.equal(service.inUse?.path, '/venv/b/bin/python');
  assert.deepEqual(changes, [{ path: '/venv/b/bin/python', source: 'python-extension' }]);
  assert.deepEqual(swaps, [{ kind: 'python', reason: 'the workspace interpreter changed to /venv/b/bin/python' }]);
  service.dispose();
  python.fireChange();
  await reportsDone();
  assert.equal(changes.length, 1, 'nothing is reported after dispose');
});
