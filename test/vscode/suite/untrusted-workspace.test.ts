// In Restricted Mode (run.mjs --no-trust, a window of its own): workspace Python and Jupyter are off, Pyodide
// runs, and the results and the Tool Explorer say why.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunResult } from '../../../src/engine/types';
import { api, until } from '../extensionApi';
import { openPython, untrusted } from '../suiteSetup';

(untrusted ? describe : describe.skip)('Code Mode in an untrusted workspace', function () {
  this.timeout(120_000);

  it('workspace Python is off, Pyodide still runs, and the UI says why', async () => {
    assert.equal(vscode.workspace.isTrusted, false, 'the runner opened an untrusted workspace');
    const codeMode = await api();
    const engine = await codeMode.container.engine.get();
    const refused = await engine.run({ code: 'print(1)', backend: 'python' });
    assert.equal(refused.success, false);
    assert.match(refused.diagnostics?.message ?? '', /not trusted/);
    const ok = await engine.run({ code: 'print(1)', backend: 'pyodide' });
    assert.equal(ok.stdout, '1\n');
    // Jupyter kernels are not sandboxed either: a server set in the settings stays unused.
    await vscode.workspace
      .getConfiguration('codeMode')
      .update('jupyter.url', 'local', vscode.ConfigurationTarget.Global);
    try {
      await until('the jupyter backend to be configured', () => engine.backendKinds.includes('jupyter'));
      const kernel = await engine.run({ code: 'print(1)', backend: 'jupyter' });
      assert.match(kernel.diagnostics?.message ?? '', /not trusted/);
    } finally {
      await vscode.workspace
        .getConfiguration('codeMode')
        .update('jupyter.url', undefined, vscode.ConfigurationTarget.Global);
    }
    await openPython('print("yours")\n');
    const yours = (await vscode.commands.executeCommand('codeMode.runSelection')) as RunResult;
    assert.deepEqual(
      [yours.backend, yours.session, yours.stdout],
      ['pyodide', 'interactive', 'yours\n'],
      'your runs fall back to Pyodide in Restricted Mode',
    );
    // The refused run has a card that says why, not a bare error code.
    const refusedCard = await until('the refused run in the results view', async () =>
      (await codeMode.results.probe()).find((c) => c.runId === refused.run_id),
    );
    assert.match(refusedCard.text, /Not run/);
    assert.match(refusedCard.text, /not trusted \(Restricted Mode\)/);
    assert.doesNotMatch(refusedCard.text, /INVALID_ARGUMENT/);
    const { explorer } = codeMode;
    const [backendsSection] = await explorer.getChildren();
    const python = (await explorer.getChildren(backendsSection))
      .map((n) => explorer.getTreeItem(n))
      .find((i) => i.label === 'Workspace Python');
    assert.equal(python?.description, 'disabled');
    assert.match(String(python?.tooltip), /not trusted/);
  });
});
