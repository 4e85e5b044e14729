// The one composition root: wires services, commands, views and providers; every disposable goes into
// context.subscriptions. Nothing heavy happens here: the engine, interpreters and the MCP endpoint start on
// first use (src/vscode/container.ts), and command bodies live in src/vscode/features/.
import * as vscode from 'vscode';
import { RunHistory, type RunRecord } from './engine/index';
import { describeBackend } from './vscode/backends';
import { Container } from './vscode/container';
import { registerExplorerCommands } from './vscode/features/explorerCommands';
import { registerGenerateCommand } from './vscode/features/generateCommand';
import { registerInstallCommand } from './vscode/features/installCommand';
import { registerInterpreterCommands } from './vscode/features/interpreterCommands';
import { registerJupyterCommands } from './vscode/features/jupyterCommands';
import { resultsActions } from './vscode/features/resultsActions';
import { registerRunCommands } from './vscode/features/runCommands';
import { CodeModeMcpProvider, MCP_PROVIDER_ID } from './vscode/mcpProvider';
import { RESULTS_VIEW_ID, ResultsView } from './vscode/views/resultsView';
import { RunOutputWriter } from './vscode/views/runOutput';
import { PyodideSpare } from './vscode/pyodideSpare';
import type { PersonRunViews } from './vscode/services/personRuns';
import { RunStatusItem, STATUS_MENU_COMMAND } from './vscode/views/statusBar';
import { testApi, type CodeModeTestApi } from './vscode/testApi';
import { EXPLORER_VIEW_ID, ToolExplorer } from './vscode/views/toolExplorer';

export interface CodeModeApi {
  /** This window's runs (yours and the agents'), oldest first, as the Results view shows them. */
  runs(): readonly RunRecord[];
  /** Only while extension tests run (ExtensionMode.Test): the extension's insides, for its own tests. */
  testing?: CodeModeTestApi;
}

export function activate(context: vscode.ExtensionContext): CodeModeApi {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('Code Mode for Python', { log: true });
  const runsChannel = vscode.window.createOutputChannel('Code Mode: Runs');
  // Set by VS Code only when it runs extension tests (--extensionTestsPath); never in an installed extension.
  const underTest = context.extensionMode === vscode.ExtensionMode.Test;
  const output = new RunOutputWriter(runsChannel, underTest);
  const container = new Container({
    storageDir: context.globalStorageUri.fsPath,
    log,
    secrets: context.secrets,
    // The views are made below, with the container's services; a person's run asks for them when it starts.
    personRunViews: (): PersonRunViews => ({
      present: () => results.present(),
      revealRunsChannel: () => output.reveal(true),
    }),
  });
  const { engine, bridge, mcp, stores, personRuns } = container;
  const settings = () => container.settings.current;
  const interpreterPath = () => container.interpreter.inUse?.path;
  const interpreterLabel = () => container.interpreter.label();
  const history = new RunHistory(100, stores.history);

  const actions = resultsActions({ history, engine, bridge, tools: () => mcp.localClient(), personRuns });
  const results = new ResultsView({
    extensionUri: context.extensionUri,
    history,
    actions,
    log,
    memory: context.globalState,
    settings: container.settings,
  });
  const explorer = new ToolExplorer({
    engine,
    interpreterLabel,
    history,
    tools: () => mcp.localClient(),
    servers: async () => {
      const { bridge: tools, external } = await bridge.get();
      return { providers: () => tools.providers(), problems: () => external.problems };
    },
    codeFiles: stores.codeFiles,
    jupyterServer: () => settings().backends.jupyter.url,
    vscodeToolsOn: () => settings().exposeVscodeTools,
  });
  const explorerTree = vscode.window.createTreeView(EXPLORER_VIEW_ID, {
    treeDataProvider: explorer,
    showCollapseAll: true,
  });
  results.setCompanion(explorerTree);
  const pyodideSpare = new PyodideSpare(() => engine.get(), settings);
  const mcpProvider = new CodeModeMcpProvider(
    settings,
    interpreterPath,
    () => mcp.loopback(),
    context.extensionPath,
    () => pyodideSpare.want(),
  );
  const status = new RunStatusItem(
    () => personRuns.backend(),
    (kind) => describeBackend(kind, interpreterLabel(), settings().backends),
  );

  context.subscriptions.push(
    log,
    runsChannel,
    container,
    output,
    results,
    explorer,
    mcpProvider,
    pyodideSpare,
    status,
    { dispose: () => history.flush() },
    engine.onRunEvent((event) => {
      history.handle(event);
      output.handle(event);
      results.handle(event);
      status.handle(event);
      if (event.type === 'queued' || event.type === 'started' || event.type === 'finished') explorer.refresh();
    }),
    engine.onStateChange(() => explorer.refresh()),
    bridge.onDidChange(() => explorer.refresh()),
    container.interpreter.onDidChange(() => {
      status.update();
      explorer.refresh();
      mcpProvider.refresh();
    }),
    container.settings.onDidChange((event) => {
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
    explorerTree,
    results.onDidChangeUnseen((count) => status.setUnseen(count)),
    vscode.window.registerWebviewViewProvider(RESULTS_VIEW_ID, results, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    ...registerRunCommands({
      settings: container.settings,
      engine,
      interpreterPath,
      runsChannel: output,
      results,
      personRuns,
    }),
    registerGenerateCommand(
      {
        engine: () => engine.get(),
        toolsSummary: async () => (await bridge.get()).bridge.search(''),
        log,
        toolApprovals: container.toolApprovals.approvals,
      },
      results,
    ),
    registerInstallCommand({ settings: container.settings, engine: () => engine.get(), results }),
    ...registerJupyterCommands({ settings: container.settings, tokens: container.jupyterTokens, engine }),
    ...registerInterpreterCommands({ current: interpreterPath }),
    ...registerExplorerCommands({ explorer, results, codeFiles: stores.codeFiles, personRuns, rerun: actions.rerun }),
  );

  const activationMs = performance.now() - started;
  log.info(`activated in ${activationMs.toFixed(1)} ms`);
  // Another extension could read these exports: the insides only for the extension's own tests.
  return {
    runs: () => history.all(),
    ...(underTest ? { testing: testApi({ container, history, results, explorer, output, status, activationMs }) } : {}),
  };
}

export function deactivate(): void {
  // Everything is in context.subscriptions.
}
