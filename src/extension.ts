// The one composition root: wires services, commands, views and providers; every disposable goes into
// context.subscriptions. Nothing heavy happens here: the engine, interpreters and the MCP endpoint start on
// first use (src/vscode/container.ts), and command bodies live in src/vscode/features/.
import * as vscode from 'vscode';
import { RunHistory } from './engine/index';
import { describeBackend } from './vscode/backends';
import { Container } from './vscode/container';
import { registerExplorerCommands } from './vscode/features/explorerCommands';
import { registerGenerateCommand } from './vscode/features/generateCommand';
import { registerInstallCommand } from './vscode/features/installCommand';
import { registerJupyterCommands } from './vscode/features/jupyterCommands';
import { rerun, resultsActions, type ResultsActionDeps } from './vscode/features/resultsActions';
import { registerRunCommands } from './vscode/features/runCommands';
import { InterpreterTracker } from './vscode/interpreter';
import { CodeModeMcpProvider, MCP_PROVIDER_ID } from './vscode/mcpProvider';
import { personBackend } from './vscode/personRun';
import { RESULTS_VIEW_ID, ResultsView } from './vscode/resultsView';
import { RunOutputWriter } from './vscode/runOutput';
import { PyodideSpare } from './vscode/pyodideSpare';
import { RunProblems } from './vscode/runProblems';
import { onSettingsChange } from './vscode/settings';
import { RunStatusItem, STATUS_MENU_COMMAND, type RunStatusSnapshot } from './vscode/statusBar';
import type { ApprovalStandIn } from './vscode/toolApproval';
import { EXPLORER_VIEW_ID, ToolExplorer } from './vscode/toolExplorer';

export interface CodeModeApi {
  /** For tests and other extensions: the services (the engine is created on first use) and run history. */
  container: Container;
  history: RunHistory;
  results: ResultsView;
  explorer: ToolExplorer;
  activationMs: number;
  /** What the runs output channel received most recently. */
  runsChannelText(): string;
  /** How often the runs output channel was brought into view. */
  runsChannelReveals(): number;
  /** What the status bar item of your runs shows now. */
  runStatus(): RunStatusSnapshot;
  /** Only while extension tests run (ExtensionMode.Test): hooks for what a headless test cannot do itself. */
  testHooks?: TestHooks;
}

export interface TestHooks {
  /** Answers the tool-approval question instead of its modal, which VS Code refuses to show during extension tests. */
  answerToolApprovals(standIn: ApprovalStandIn | undefined): void;
}

export function activate(context: vscode.ExtensionContext): CodeModeApi {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('Code Mode for Python', { log: true });
  const runsChannel = vscode.window.createOutputChannel('Code Mode: Runs');
  const problems = new RunProblems();
  const interpreter = new InterpreterTracker(() => vscode.workspace.getConfiguration('codeMode').get<string>('pythonPath', '').trim(), log);
  const container = new Container(context.globalStorageUri.fsPath, log, interpreter, context.secrets);
  const { engine, bridge, mcp, stores } = container;
  const settings = () => container.settings.current;
  const interpreterPath = () => container.interpreter.inUse?.path;
  const history = new RunHistory(100, stores.history);
  const output = new RunOutputWriter(runsChannel);

  const toolApprovals = container.toolApprovals.approvals;
  const actionDeps: ResultsActionDeps = { history, engine, bridge, tools: () => mcp.localClient(), settings, results: () => results, toolApprovals };
  const results = new ResultsView(context.extensionUri, history, resultsActions(actionDeps), log, context.globalState);
  const explorer = new ToolExplorer(
    engine,
    interpreterPath,
    history,
    () => mcp.localClient(),
    async () => {
      const { bridge: tools, external } = await bridge.get();
      return { providers: () => tools.providers(), problems: () => external.problems };
    },
    stores.codeFiles,
    () => settings().backends.jupyter.url,
    () => settings().exposeVscodeTools,
  );
  const explorerTree = vscode.window.createTreeView(EXPLORER_VIEW_ID, { treeDataProvider: explorer, showCollapseAll: true });
  results.setCompanion(explorerTree);
  const pyodideSpare = new PyodideSpare(() => engine.get(), settings);
  const mcpProvider = new CodeModeMcpProvider(settings, interpreterPath, () => mcp.loopback(), context.extensionPath, () => pyodideSpare.want());
  const status = new RunStatusItem(
    () => personBackend(settings(), vscode.workspace.isTrusted),
    (kind) => describeBackend(kind, interpreterPath(), settings().backends),
  );

  context.subscriptions.push(
    log,
    runsChannel,
    problems,
    interpreter,
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
    interpreter.onDidChange((choice) => {
      void container.interpreter.changed(choice);
      status.update();
      explorer.refresh();
      mcpProvider.refresh();
    }),
    onSettingsChange((event) => {
      void container.settingsChanged(event).then(() => {
        explorer.refresh();
        if (event.affectsConfiguration('codeMode.pyodide.warmSpare') || event.affectsConfiguration('codeMode.defaultBackend')) pyodideSpare.apply();
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
    vscode.window.registerWebviewViewProvider(RESULTS_VIEW_ID, results, { webviewOptions: { retainContextWhenHidden: true } }),
    ...registerRunCommands({ settings, engine, interpreterPath, runsChannel: output, results, problems, toolApprovals }),
    registerGenerateCommand({ engine: () => engine.get(), toolsSummary: async () => (await bridge.get()).bridge.search(''), log, toolApprovals }, results),
    registerInstallCommand({ settings, engine: () => engine.get(), results }),
    ...registerJupyterCommands({ settings, tokens: container.jupyterTokens, engine }),
    ...registerExplorerCommands({ explorer, results, engine, codeFiles: stores.codeFiles, settings, rerun: (runId) => rerun(actionDeps, runId), toolApprovals }),
  );

  const activationMs = performance.now() - started;
  log.info(`activated in ${activationMs.toFixed(1)} ms`);
  // Never in an installed extension: another extension could read these exports.
  const testHooks: TestHooks | undefined =
    context.extensionMode === vscode.ExtensionMode.Test ? { answerToolApprovals: (standIn) => container.toolApprovals.answerWith(standIn) } : undefined;
  return { container, history, results, explorer, activationMs, runsChannelText: () => output.transcript(), runsChannelReveals: () => output.reveals, runStatus: () => status.snapshot(), ...(testHooks ? { testHooks } : {}) };
}

export function deactivate(): void {
  // Everything is in context.subscriptions.
}
