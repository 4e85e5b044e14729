// The one composition root: only wiring. The container (src/vscode/container.ts) makes the services and views, on
// first use, and disposes them; here they are told of each other's events and registered with VS Code, and the
// commands (their bodies in src/vscode/features/) are given what they need. Nothing heavy happens here: the engine,
// interpreters and the MCP endpoint start on first use.
import * as vscode from 'vscode';
import type { RunRecord } from './engine/index';
import { Container } from './vscode/container';
import { registerExplorerCommands } from './vscode/features/explorerCommands';
import { registerGenerateCommand } from './vscode/features/generateCommand';
import { registerInstallCommand } from './vscode/features/installCommand';
import { registerInterpreterCommands } from './vscode/features/interpreterCommands';
import { registerJupyterCommands } from './vscode/features/jupyterCommands';
import { registerRunCommands } from './vscode/features/runCommands';
import { MCP_PROVIDER_ID } from './vscode/mcpProvider';
import { RESULTS_VIEW_ID } from './vscode/views/resultsView';
import { STATUS_MENU_COMMAND } from './vscode/views/statusBar';
import { testApi, type CodeModeTestApi } from './vscode/testApi';

export interface CodeModeApi {
  /** This window's runs (yours and the agents'), oldest first, as the Results view shows them. */
  runs(): readonly RunRecord[];
  /** Only while extension tests run (ExtensionMode.Test): the extension's insides, for its own tests. */
  testing?: CodeModeTestApi;
}

export function activate(context: vscode.ExtensionContext): CodeModeApi {
  const started = performance.now();
  const container = new Container(context);
  const { log, engine, bridge, settings, interpreter, stores, personRuns, history } = container;
  const { output, results, explorer, status, pyodideSpare, mcpProvider } = container;
  const interpreterPath = () => interpreter.inUse?.path;

  context.subscriptions.push(
    container,
    engine.onRunEvent((event) => {
      history.handle(event);
      output.handle(event);
      results.handle(event);
      status.handle(event);
      if (event.type === 'queued' || event.type === 'started' || event.type === 'finished') explorer.refresh();
    }),
    engine.onStateChange(() => explorer.refresh()),
    bridge.onDidChange(() => explorer.refresh()),
    interpreter.onDidChange(() => {
      status.update();
      explorer.refresh();
      mcpProvider.refresh();
    }),
    settings.onDidChange((event) => {
      void container.settingsChanged(event).then(() => {
        explorer.refresh();
        if (
          event.affectsConfiguration('codeMode.pyodide.warmSpare') ||
          event.affectsConfiguration('codeMode.defaultBackend')
        )
          pyodideSpare.apply();
      });
      status.update();
      if (
        event.affectsConfiguration('codeMode.mcp') ||
        event.affectsConfiguration('codeMode.defaultBackend') ||
        event.affectsConfiguration('codeMode.timeoutSeconds') ||
        event.affectsConfiguration('codeMode.pyodide.warmSpare')
      ) {
        mcpProvider.refresh();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      void container.trust.granted().then(() => explorer.refresh());
      status.update();
      mcpProvider.refresh();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => status.update()),
    vscode.commands.registerCommand(STATUS_MENU_COMMAND, () => status.showMenu()),
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, mcpProvider),
    results.onDidChangeUnseen((count) => status.setUnseen(count)),
    vscode.window.registerWebviewViewProvider(RESULTS_VIEW_ID, results, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    ...registerRunCommands({ settings, engine, interpreterPath, runsChannel: output, results, personRuns }),
    registerGenerateCommand(
      {
        engine: () => engine.get(),
        toolsSummary: async () => (await bridge.get()).bridge.search(''),
        log,
        toolApprovals: container.toolApprovals.approvals,
      },
      results,
    ),
    registerInstallCommand({ settings, engine: () => engine.get(), results }),
    ...registerJupyterCommands({ settings, tokens: container.jupyterTokens, engine }),
    ...registerInterpreterCommands({ current: interpreterPath }),
    ...registerExplorerCommands({
      explorer,
      results,
      codeFiles: stores.codeFiles,
      personRuns,
      rerun: container.resultsActions.rerun,
    }),
  );

  const activationMs = performance.now() - started;
  log.info(`activated in ${activationMs.toFixed(1)} ms`);
  // Another extension could read these exports: the insides only for the extension's own tests.
  return {
    runs: () => history.all(),
    ...(container.underTest ? { testing: testApi(container, activationMs) } : {}),
  };
}

export function deactivate(): void {
  // Everything is in context.subscriptions.
}
