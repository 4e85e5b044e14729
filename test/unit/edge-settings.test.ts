// The extension's settings outside VS Code (src/vscode/settings.ts, given a stand-in for vscode.workspace): what an
// unset or malformed setting becomes, what a change re-reads, and what `configure` writes.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { DEFAULT_SESSION_IDLE_MINUTES } from '../../src/mcp/index';
import { SettingsService, type SettingsWorkspace } from '../../src/vscode/settings';

/** A `codeMode` section holding `values` (keys without the section), which records what is written to it. */
function workspaceWith(values: Record<string, unknown>) {
  const written: { section: string; key: string; value: unknown }[] = [];
  const listeners: ((event: vscode.ConfigurationChangeEvent) => void)[] = [];
  const workspace: SettingsWorkspace = {
    getConfiguration: (section) => {
      assert.equal(section, 'codeMode');
      const get = (key: string, fallback?: unknown) => (key in values ? values[key] : fallback);
      return { get } as vscode.WorkspaceConfiguration;
    },
    onDidChangeConfiguration: (listener) => {
      listeners.push(listener);
      return { dispose: () => listeners.splice(listeners.indexOf(listener), 1) };
    },
    updateUserSetting: async (section, key, value) => {
      written.push({ section, key, value });
      values[key] = value;
    },
  };
  /** VS Code's change event for a change of `changed` (full setting ids). */
  const change = (changed: string) =>
    listeners.forEach((listener) =>
      listener({ affectsConfiguration: (section: string) => changed === section || changed.startsWith(`${section}.`) }),
    );
  return { workspace, written, change };
}

test('unset settings read as their documented defaults', () => {
  const settings = new SettingsService(workspaceWith({}).workspace).current;
  assert.equal(settings.engine.defaultBackend, 'pyodide');
  assert.equal(settings.engine.timeoutS, 30);
  assert.equal(settings.engine.outputCapBytes, 64 * 1024);
  assert.equal(settings.engine.autoInstall, true);
  assert.equal(settings.engine.wheelhouse, undefined);
  assert.equal(settings.engine.settingNames.timeout, 'setting codeMode.timeoutSeconds');
  assert.deepEqual(settings.personRun, {
    timeoutS: 0,
    cwd: 'file',
    backend: 'python',
    session: 'own',
    showRunsChannel: false,
  });
  assert.equal(settings.approvalPolicy.mode, 'ask');
  assert.equal(settings.approvalPolicy.approvePersonRuns, true);
  assert.equal(settings.mcpTransport, 'http');
  assert.equal(settings.mcpHttpSessionIdleMinutes, DEFAULT_SESSION_IDLE_MINUTES);
  assert.equal(settings.exposeVscodeTools, true);
  assert.equal(settings.pyodideWarmSpare, true);
  assert.equal(settings.pythonPath, '');
  assert.deepEqual(settings.backends.jupyter, { url: '', kernelName: '' });
  assert.equal(settings.backends.pyodide.sandbox, 'auto');
  assert.equal(settings.backends.pyodide.network, 'off');
});

test('a malformed value reads as the default, a malformed list entry or approval rule is left out', () => {
  const settings = new SettingsService(
    workspaceWith({
      defaultBackend: 'ruby',
      'run.backend': 'cloud',
      'run.session': 'everyone',
      'run.cwd': 'home',
      'run.timeoutSeconds': -5,
      'tools.approval': 'sometimes',
      'tools.autoApprove': [42, 'no dot here', 'memory.read_graph', 'files.*'],
      'guardrails.allowImports': ['', '   ', 7, 'numpy'],
      'mcp.transport': 'websocket',
      'pyodide.sandbox': 'chroot',
      'pyodide.network': 'sometimes',
      pythonPath: '  /opt/python/bin/python3  ',
      outputCapKB: 2,
    }).workspace,
  ).current;
  assert.equal(settings.engine.defaultBackend, 'pyodide');
  assert.equal(settings.personRun.backend, 'python');
  assert.equal(settings.personRun.session, 'own');
  assert.equal(settings.personRun.cwd, 'file');
  assert.equal(settings.personRun.timeoutS, 0);
  assert.equal(settings.approvalPolicy.mode, 'ask');
  assert.deepEqual(settings.approvalPolicy.autoApprove, ['memory.read_graph', 'files.*']);
  assert.deepEqual(settings.engine.policy.allowImports, ['numpy']);
  assert.equal(settings.mcpTransport, 'http');
  assert.equal(settings.backends.pyodide.sandbox, 'auto');
  assert.equal(settings.backends.pyodide.network, 'off');
  assert.equal(settings.pythonPath, '/opt/python/bin/python3');
  assert.equal(settings.engine.outputCapBytes, 2048);
});

test('valid choices are kept as set', () => {
  const settings = new SettingsService(
    workspaceWith({
      defaultBackend: 'jupyter',
      'run.backend': 'same-as-agents',
      'run.session': 'per-file',
      'run.cwd': 'workspace',
      'tools.approval': 'readonly',
      'mcp.transport': 'stdio',
    }).workspace,
  ).current;
  assert.equal(settings.engine.defaultBackend, 'jupyter');
  assert.equal(settings.personRun.backend, 'same-as-agents');
  assert.equal(settings.personRun.session, 'per-file');
  assert.equal(settings.personRun.cwd, 'workspace');
  assert.equal(settings.approvalPolicy.mode, 'readonly');
  assert.equal(settings.mcpTransport, 'stdio');
});

test('the settings are cached until re-read, which returns the ones replaced', () => {
  const values: Record<string, unknown> = { timeoutSeconds: 10 };
  const service = new SettingsService(workspaceWith(values).workspace);
  values.timeoutSeconds = 20;
  assert.equal(service.current.engine.timeoutS, 10);
  const before = service.reread();
  assert.equal(before.engine.timeoutS, 10);
  assert.equal(service.current.engine.timeoutS, 20);
});

test('the results location is read when asked, a value other than beside being the sidebar', () => {
  const values: Record<string, unknown> = {};
  const service = new SettingsService(workspaceWith(values).workspace);
  assert.equal(service.resultsLocation(), 'sidebar');
  values['results.location'] = 'beside';
  assert.equal(service.resultsLocation(), 'beside');
  values['results.location'] = 'floating';
  assert.equal(service.resultsLocation(), 'sidebar');
});

test('only a change to a codeMode setting reaches the listener, until it is disposed', () => {
  const { workspace, change } = workspaceWith({});
  const seen: boolean[] = [];
  const listening = new SettingsService(workspace).onDidChange((event) =>
    seen.push(event.affectsConfiguration('codeMode.timeoutSeconds')),
  );
  change('editor.fontSize');
  change('codeMode.timeoutSeconds');
  listening.dispose();
  change('codeMode.timeoutSeconds');
  assert.deepEqual(seen, [true]);
});

test("configure writes the VS Code setting in the user's settings and applies it to the engine at once", async () => {
  const { workspace, written } = workspaceWith({ timeoutSeconds: 30 });
  const service = new SettingsService(workspace);
  const seenByEngine: number[] = [];
  const port = service.portFor({ configure: async () => void seenByEngine.push(service.current.engine.timeoutS) });
  assert.equal(port.values().timeout_s, 30);
  await port.set({ key: 'timeout_s', value: 90 });
  await port.set({ key: 'auto_install', value: false });
  assert.deepEqual(written, [
    { section: 'codeMode', key: 'timeoutSeconds', value: 90 },
    { section: 'codeMode', key: 'pyodide.autoInstall', value: false },
  ]);
  // Re-read before the engine is told, so it gets the value just written.
  assert.deepEqual(seenByEngine, [90, 90]);
  assert.equal(port.values().timeout_s, 90);
  assert.equal(port.values().auto_install, false);
});
