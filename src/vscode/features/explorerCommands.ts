// The Tool Explorer's commands: refresh, open or re-run a past run, run a code file, open a tool's form.
import * as vscode from 'vscode';
import type { CodeFiles } from '../../engine/index';
import type { PersonRunService } from '../services/personRuns';
import type { ResultsView } from '../views/resultsView';
import type { ExplorerNode, ToolExplorer } from '../views/toolExplorer';

export interface ExplorerCommandDeps {
  explorer: Pick<ToolExplorer, 'refresh'>;
  results: Pick<ResultsView, 'reveal' | 'showToolForm'>;
  codeFiles: Pick<CodeFiles, 'read'>;
  personRuns: Pick<PersonRunService, 'run'>;
  rerun: (runId: string) => Promise<unknown>;
}

export function registerExplorerCommands({
  explorer,
  results,
  codeFiles,
  personRuns,
  rerun,
}: ExplorerCommandDeps): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('codeMode.explorer.refresh', () => explorer.refresh()),
    vscode.commands.registerCommand('codeMode.explorer.openRun', (runId: string) => results.reveal(runId)),
    vscode.commands.registerCommand('codeMode.explorer.rerun', (node?: ExplorerNode) =>
      node?.kind === 'run' ? rerun(node.record.run.runId) : undefined,
    ),
    // An agent script runs as code, not as a file of the workspace: your backend and the session of no file.
    vscode.commands.registerCommand('codeMode.explorer.runCodeFile', async (node?: ExplorerNode) =>
      node?.kind === 'codeFile'
        ? personRuns.run({ code: (await codeFiles.read(node.file.name)).content, origin: 'explorer' })
        : undefined,
    ),
    vscode.commands.registerCommand('codeMode.explorer.invokeTool', (node?: ExplorerNode) => {
      if (node?.kind === 'tool') {
        results.showToolForm({
          name: node.tool.name,
          description: node.tool.description ?? '',
          inputSchema: node.tool.inputSchema as Record<string, unknown>,
        });
      } else if (node?.kind === 'externalTool') {
        results.showToolForm({
          server: node.tool.server,
          name: node.tool.name,
          description: node.tool.description,
          inputSchema: node.tool.inputSchema,
        });
      }
    }),
  ];
}
