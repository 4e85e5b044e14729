// The Tool Explorer's commands: refresh, open or re-run a past run, run a code file, open a tool's form.
import * as vscode from 'vscode';
import type { CodeFiles, ToolApprovals } from '../../engine/index';
import { personBackend, personRunOptions, personSession } from '../personRun';
import type { ResultsView } from '../resultsView';
import type { EngineService } from '../services/engineService';
import type { ExtensionSettings } from '../settings';
import type { ExplorerNode, ToolExplorer } from '../toolExplorer';

export interface ExplorerCommandDeps {
  explorer: Pick<ToolExplorer, 'refresh'>;
  results: Pick<ResultsView, 'reveal' | 'present' | 'showToolForm'>;
  engine: Pick<EngineService, 'get'>;
  codeFiles: Pick<CodeFiles, 'read'>;
  settings: () => ExtensionSettings;
  rerun: (runId: string) => Promise<unknown>;
  /** The window's tool-approval question. */
  toolApprovals: ToolApprovals;
}

export function registerExplorerCommands({ explorer, results, engine: engines, codeFiles, settings: currentSettings, rerun, toolApprovals }: ExplorerCommandDeps): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('codeMode.explorer.refresh', () => explorer.refresh()),
    vscode.commands.registerCommand('codeMode.explorer.openRun', (runId: string) => results.reveal(runId)),
    vscode.commands.registerCommand('codeMode.explorer.rerun', (node?: ExplorerNode) => (node?.kind === 'run' ? rerun(node.record.run.runId) : undefined)),
    vscode.commands.registerCommand('codeMode.explorer.runCodeFile', async (node?: ExplorerNode) => {
      if (node?.kind !== 'codeFile') return undefined;
      const engine = await engines.get();
      void results.present();
      const settings = currentSettings();
      return engine.run({
        code: (await codeFiles.read(node.file.name)).content,
        origin: 'explorer',
        backend: personBackend(settings, vscode.workspace.isTrusted),
        session: personSession(settings.personRun),
        ...personRunOptions(settings.personRun, toolApprovals),
      });
    }),
    vscode.commands.registerCommand('codeMode.explorer.invokeTool', (node?: ExplorerNode) => {
      if (node?.kind === 'tool') {
        results.showToolForm({ name: node.tool.name, description: node.tool.description ?? '', inputSchema: node.tool.inputSchema as Record<string, unknown> });
      } else if (node?.kind === 'externalTool') {
        results.showToolForm({ server: node.tool.server, name: node.tool.name, description: node.tool.description, inputSchema: node.tool.inputSchema });
      }
    }),
  ];
}
