// Runs last (files load in name order): leaves the workbench showing the sidebar and the results panel,
// which the runner's --screenshot captures for the README and docs/.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api } from '../extensionApi';

const untrusted = process.env.CODE_MODE_TEST_EXPECT_TRUSTED === '0';

(untrusted ? describe.skip : describe)('showcase', function () {
  this.timeout(120_000);

  it('arranges the sidebar and the results panel', async () => {
    const codeMode = await api();
    const engine = await codeMode.container.engine.get();
    await engine.run({
      code: 'import statistics\nscores = [88, 92, 79, 93, 85]\nprint("mean", statistics.mean(scores))\nprint("stdev", round(statistics.stdev(scores), 2))',
      origin: 'command',
    });
    await engine.run({ code: 'def ratio(a, b):\n    return a / b\n\nratio(1, 0)', origin: 'mcp' });
    await engine.run({
      code: 'import platform\nprint(platform.python_version(), platform.system())',
      backend: 'python',
      origin: 'mcp',
    });
    // Scratch editors left by earlier tests: revert them so closing asks nothing.
    for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
      if (tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === 'untitled') {
        await vscode.window.showTextDocument(tab.input.uri);
        await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
      }
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
    await vscode.commands.executeCommand('workbench.action.closePanel');
    await vscode.commands.executeCommand('workbench.view.extension.codeMode');
    await vscode.commands.executeCommand('codeMode.explorer.focus');
    codeMode.explorer.refresh();
    await vscode.commands.executeCommand('codeMode.openResults');
    const deadline = Date.now() + 20_000;
    while ((await codeMode.results.probe()).length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    assert.ok((await codeMode.results.probe()).length >= 3, 'the results panel shows the runs');
    // The runner's --screenshot waits for this line; give it time before the suite (and the views) end.
    await new Promise((r) => setTimeout(r, 1000));
    console.log('[code-mode-test] screenshot now');
    await new Promise((r) => setTimeout(r, 3000));
  });
});
