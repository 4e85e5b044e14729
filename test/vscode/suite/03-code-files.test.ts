// Code files in the Tool Explorer: listed, opened in an editor and run; a past run re-runs from Recent Runs.
// Numbered to keep its place in the run order (see 01-activation.test.ts).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunResult } from '../../../src/engine/types';
import { api } from '../extensionApi';
import type { ExplorerNode } from '../../../src/vscode/views/toolExplorer';
import { untrusted } from '../suiteSetup';

(untrusted ? describe.skip : describe)('Code files and Recent Runs in the Tool Explorer', function () {
  this.timeout(120_000);

  it('code files are listed in the explorer, open in an editor and run; a past run re-runs', async () => {
    const codeMode = await api();
    await codeMode.container.stores.codeFiles.write('explorer_demo.py', 'print("from a code file", 6 * 7)\n', 'create');
    const { explorer } = codeMode;
    const sections = await explorer.getChildren();
    const files = (await explorer.getChildren(
      sections.find((n) => n.kind === 'section' && n.section === 'files'),
    )) as ExplorerNode[];
    const demo = files.find((n) => n.kind === 'codeFile' && n.file.name === 'explorer_demo.py');
    assert.ok(demo, 'the code file is listed');
    const item = explorer.getTreeItem(demo);
    await vscode.commands.executeCommand(item.command!.command, ...(item.command!.arguments ?? []));
    assert.match(vscode.window.activeTextEditor?.document.getText() ?? '', /from a code file/);
    const ran = (await vscode.commands.executeCommand('codeMode.explorer.runCodeFile', demo)) as RunResult;
    assert.equal(ran.stdout, 'from a code file 42\n');
    const runNode = (
      (await explorer.getChildren(sections.find((n) => n.kind === 'section' && n.section === 'runs'))) as ExplorerNode[]
    ).find((n) => n.kind === 'run' && n.record.run.runId === ran.run_id);
    assert.ok(runNode, 'the run is in Recent Runs');
    const again = (await vscode.commands.executeCommand('codeMode.explorer.rerun', runNode)) as RunResult;
    assert.equal(again.stdout, 'from a code file 42\n');
    assert.notEqual(again.run_id, ran.run_id);
  });
});
