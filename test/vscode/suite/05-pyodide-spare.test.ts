// The spare Pyodide interpreter kept ready for your next run, and the setting that ends it. Numbered to keep its
// place in the run order (see 01-activation.test.ts).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api, until } from '../extensionApi';
import { openPython, untrusted } from '../suiteSetup';

(untrusted ? describe.skip : describe)('The spare Pyodide interpreter', function () {
  this.timeout(120_000);

  it('opening a Python file keeps a spare Pyodide interpreter ready; codeMode.pyodide.warmSpare off ends it', async () => {
    const codeMode = await api();
    const engine = await codeMode.container.engine.get();
    await openPython('print("a spare is started for the runs to come")\n');
    const ready = () => (engine.spareInfo()?.state === 'ready' ? engine.spareInfo() : undefined);
    const spare = await until('a ready spare Pyodide interpreter', ready, 180_000);
    assert.ok(spare.pid, 'the spare is a running host process');
    const settings = vscode.workspace.getConfiguration('codeMode');
    await settings.update('pyodide.warmSpare', false, vscode.ConfigurationTarget.Global);
    try {
      await until('the spare to be ended', () => engine.spareInfo() === undefined || undefined);
    } finally {
      await settings.update('pyodide.warmSpare', undefined, vscode.ConfigurationTarget.Global);
    }
    const again = await until('a spare again once the setting is back on', ready, 180_000);
    assert.notEqual(again.pid, spare.pid);
  });
});
