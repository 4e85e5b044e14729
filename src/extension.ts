// The one composition root: wires commands, views and providers; every disposable goes into
// context.subscriptions. Nothing heavy happens here: the engine, interpreters and the MCP endpoint start on
// first use.
import * as vscode from 'vscode';
import { RunHistory } from './engine/history';
import { LocalMcpClient } from './mcp/localClient';
import { personBackend, personRunOptions, personSession } from './vscode/personRun';
import { registerCommands } from './vscode/commands';
import { registerGenerateCommand } from './vscode/generateCommand';
import { RunProblems } from './vscode/runProblems';
import { EngineHost } from './vscode/engineHost';
import { installPackagesCommand } from './vscode/installCommand';
import type { BackendKind } from './engine/types';
import { InterpreterTracker } from './vscode/interpreter';
import { CodeModeMcpProvider, MCP_PROVIDER_ID } from './vscode/mcpProvider';
import { RESULTS_VIEW_ID, ResultsView } from './vscode/resultsView';
import { RunOutputWriter } from './vscode/runOutput';
import { onSettingsChange } from './vscode/settings';
import { RunStatusItem, STATUS_MENU_COMMAND, type RunStatusSnapshot } from './vscode/statusBar';
import { EXPLORER_VIEW_ID, ToolExplorer, type ExplorerNode } from './vscode/toolExplorer';

export interface CodeModeApi {
  /** For tests and other extensions: the engine host (engine created on first use) and run history. */
  host: EngineHost;
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
}

export function activate(context: vscode.ExtensionContext): CodeModeApi {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('Code Mode for Python', { log: true });
  const runsChannel = vscode.window.createOutputChannel('Code Mode: Runs');
  const problems = new RunProblems();
  const interpreter = new InterpreterTracker(() => vscode.workspace.getConfiguration('codeMode').get<string>('pythonPath', '').trim(), log);
  const host = new EngineHost(context.globalStorageUri.fsPath, log, interpreter);
  const history = new RunHistory(100, host.stores.history);
  const output = new RunOutputWriter(runsChannel);

  let localClient: Promise<LocalMcpClient> | undefined;
  const tools = () =>
    (localClient ??= Promise.all([host.getEngine(), host.getCodeMode()]).then(([engine, codeMode]) =>
      LocalMcpClient.connect(engine, { origin: 'explorer', ...host.serverOptions(codeMode) }),
    ));

  const results = new ResultsView(
    context.extensionUri,
    history,
    {
      rerun: (runId) => rerun(runId),
      interrupt: async (runId) => {
        const record = history.get(runId);
        if (!record || !host.isCreated) return false;
        return (await host.getEngine()).interrupt(record.run.session, record.run.backend);
      },
      invokeTool: async (server, name, args) => {
        if (server) {
          const { bridge } = await host.getCodeMode();
          return { ok: true, content: await bridge.call(server, name, args) };
        }
        const result = await (await tools()).callTool(name, args);
        return { ok: !result.isError, content: result.content };
      },
    },
    log,
  );
  const explorer = new ToolExplorer(
    host,
    history,
    tools,
    async () => {
      const { bridge, external } = await host.getCodeMode();
      return { providers: () => bridge.providers(), problems: () => external.problems };
    },
    host.stores.codeFiles,
  );
  const rerun = async (runId: string) => {
    const record = history.get(runId);
    if (!record) return undefined;
    const engine = await host.getEngine();
    void results.reveal();
    return engine.run({ code: record.run.code, backend: record.run.backend, session: record.run.session, origin: 'command', ...personRunOptions(host.currentSettings.personRun) });
  };
  const mcpProvider = new CodeModeMcpProvider(host, context.extensionPath);
  const status = new RunStatusItem(
    () => personBackend(host.currentSettings, vscode.workspace.isTrusted),
    (kind) => (kind === 'python' ? `the workspace interpreter (${host.interpreterInUse?.path ?? 'python3 on PATH'})` : 'Pyodide (WebAssembly, sandboxed)'),
  );

  context.subscriptions.push(
    log,
    runsChannel,
    problems,
    interpreter,
    host,
    output,
    results,
    explorer,
    mcpProvider,
    status,
    { dispose: () => void localClient?.then((c) => c.close()) },
    { dispose: () => history.flush() },
    host.onRunEvent((event) => {
      history.handle(event);
      output.handle(event);
      results.handle(event);
      status.handle(event);
      if (event.type === 'started' || event.type === 'finished') explorer.refresh();
    }),
    host.onStateChange(() => explorer.refresh()),
    interpreter.onDidChange((choice) => {
      void host.interpreterChanged(choice);
      status.update();
      explorer.refresh();
      mcpProvider.refresh();
    }),
    onSettingsChange((event) => {
      void host.settingsChanged(event).then(() => explorer.refresh());
      status.update();
      if (event.affectsConfiguration('codeMode.mcp') || event.affectsConfiguration('codeMode.defaultBackend') || event.affectsConfiguration('codeMode.timeoutSeconds')) {
        mcpProvider.refresh();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      void host.trustChanged(true).then(() => explorer.refresh());
      status.update();
      mcpProvider.refresh();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => status.update()),
    vscode.commands.registerCommand(STATUS_MENU_COMMAND, () => status.showMenu()),
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, mcpProvider),
    vscode.window.createTreeView(EXPLORER_VIEW_ID, { treeDataProvider: explorer, showCollapseAll: true }),
    vscode.window.registerWebviewViewProvider(RESULTS_VIEW_ID, results, { webviewOptions: { retainContextWhenHidden: true } }),
    ...registerCommands({ host, runsChannel: output, results, problems }),
    registerGenerateCommand({ engine: () => host.getEngine(), toolsSummary: async () => (await host.getCodeMode()).bridge.search(''), log }, results),
    vscode.commands.registerCommand('codeMode.installPackages', (packages?: string[], backend?: BackendKind) => installPackagesCommand(host, packages, backend)),
    vscode.commands.registerCommand('codeMode.explorer.refresh', () => explorer.refresh()),
    vscode.commands.registerCommand('codeMode.explorer.openRun', (runId: string) => results.reveal(runId)),
    vscode.commands.registerCommand('codeMode.explorer.rerun', (node?: ExplorerNode) => (node?.kind === 'run' ? rerun(node.record.run.runId) : undefined)),
    vscode.commands.registerCommand('codeMode.explorer.runCodeFile', async (node?: ExplorerNode) => {
      if (node?.kind !== 'codeFile') return undefined;
      const engine = await host.getEngine();
      void results.reveal();
      const settings = host.currentSettings;
      return engine.run({
        code: (await host.stores.codeFiles.read(node.file.name)).content,
        origin: 'explorer',
        backend: personBackend(settings, vscode.workspace.isTrusted),
        session: personSession(settings.personRun),
        ...personRunOptions(settings.personRun),
      });
    }),
    vscode.commands.registerCommand('codeMode.explorer.invokeTool', (node?: ExplorerNode) => {
      if (node?.kind === 'tool') {
        results.showToolForm({ name: node.tool.name, description: node.tool.description ?? '', inputSchema: node.tool.inputSchema as Record<string, unknown> });
      } else if (node?.kind === 'externalTool') {
        results.showToolForm({ server: node.tool.server, name: node.tool.name, description: node.tool.description, inputSchema: node.tool.inputSchema });
      }
    }),
  );

  const activationMs = performance.now() - started;
  log.info(`activated in ${activationMs.toFixed(1)} ms`);
  return { host, history, results, explorer, activationMs, runsChannelText: () => output.transcript(), runsChannelReveals: () => output.reveals, runStatus: () => status.snapshot() };
}

export function deactivate(): void {
  // Everything is in context.subscriptions.
}
