// The one holder of the extension's services and views, as GitLens' container.ts: each is created on first use
// (a getter), after the services it takes, and disposed in reverse order of creation. Nothing heavy starts
// here: the engine, the interpreter and the MCP endpoint start when something first needs them.
import * as vscode from 'vscode';
import { type Engine, createStores, RunHistory, type Stores, type Logger, type SettingsPort } from '../engine/index';
import { describeBackend } from './backends';
import * as commandsApis from './common/commands.apis';
import * as pythonApis from './common/python.apis';
import * as windowApis from './common/window.apis';
import * as workspaceApis from './common/workspace.apis';
import { resultsActions } from './features/resultsActions';
import { CodeModeMcpProvider } from './mcpProvider';
import { openSetting } from './openSetting';
import { PyodideSpare } from './pyodideSpare';
import { RunProblems } from './runProblems';
import { BridgeService } from './services/bridgeService';
import { EngineService } from './services/engineService';
import { InterpreterService } from './services/interpreterService';
import { JupyterTokens } from './services/jupyterTokens';
import { McpEndpoints } from './services/mcpEndpoints';
import { PersonRunService } from './services/personRuns';
import { PyodideProgress } from './services/pyodideProgress';
import { TrustService } from './services/trustService';
import { SettingsService } from './settings';
import { ToolApprovalQuestions } from './toolApproval';
import { ResultsView, type ResultsActions } from './views/resultsView';
import { RunOutputWriter } from './views/runOutput';
import { RunStatusItem } from './views/statusBar';
import { EXPLORER_VIEW_ID, ToolExplorer } from './views/toolExplorer';

/** How many runs the Results view and Recent Runs keep. */
const HISTORY_RUNS = 100;

export class Container implements vscode.Disposable {
  /** The extension's log (the "Code Mode for Python" output channel). */
  readonly log: vscode.LogOutputChannel;
  readonly logger: Logger;
  /** Set by VS Code only when it runs extension tests (--extensionTestsPath); never in an installed extension. */
  readonly underTest: boolean;
  /** Services and views with something to dispose, in the order they were created. */
  private readonly created: vscode.Disposable[] = [];
  private _settings: SettingsService | undefined;
  private _stores: Stores | undefined;
  private _engine: EngineService | undefined;
  private _bridge: BridgeService | undefined;
  private _interpreter: InterpreterService | undefined;
  private _trust: TrustService | undefined;
  private _pyodideProgress: PyodideProgress | undefined;
  private _settingsPort: SettingsPort | undefined;
  private _mcp: McpEndpoints | undefined;
  private _jupyterTokens: JupyterTokens | undefined;
  private _toolApprovals: ToolApprovalQuestions | undefined;
  private _personRuns: PersonRunService | undefined;
  private _history: RunHistory | undefined;
  private _output: RunOutputWriter | undefined;
  private _resultsActions: ResultsActions | undefined;
  private _results: ResultsView | undefined;
  private _explorer: ToolExplorer | undefined;
  private _status: RunStatusItem | undefined;
  private _pyodideSpare: PyodideSpare | undefined;
  private _mcpProvider: CodeModeMcpProvider | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    const log = this.track(vscode.window.createOutputChannel('Code Mode for Python', { log: true }));
    this.log = log;
    this.logger = { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) };
    this.underTest = context.extensionMode === vscode.ExtensionMode.Test;
  }

  private get storageDir(): string {
    return this.context.globalStorageUri.fsPath;
  }

  private track<T extends vscode.Disposable>(service: T): T {
    this.created.push(service);
    return service;
  }

  get settings(): SettingsService {
    return (this._settings ??= new SettingsService(workspaceApis));
  }

  /** Code files, learnings and run history in the extension's global storage; nothing touches the disk until a store is used. */
  get stores(): Stores {
    return (this._stores ??= createStores(this.storageDir, this.logger));
  }

  get engine(): EngineService {
    return (this._engine ??= this.track(
      new EngineService({
        storageDir: this.storageDir,
        logger: this.logger,
        settings: this.settings,
        stores: this.stores,
        startingPythonPath: async () => (await this.interpreter.current()).path,
        pythonPath: () => this.interpreter.inUse?.path,
        prepare: (engine) => this.prepareEngine(engine),
        jupyterToken: (url) => this.jupyterTokens.get(url),
      }),
    ));
  }

  get jupyterTokens(): JupyterTokens {
    return (this._jupyterTokens ??= new JupyterTokens(this.context.secrets));
  }

  /** A new engine, before anyone gets it: Pyodide's first-load notice, workspace trust, the code-mode bridge. */
  private async prepareEngine(engine: Engine): Promise<void> {
    this.pyodideProgress.watch(engine);
    await this.trust.apply(engine);
    await this.bridge.attach(engine);
  }

  get bridge(): BridgeService {
    return (this._bridge ??= this.track(new BridgeService(this.engine, this.settings, this.logger)));
  }

  get interpreter(): InterpreterService {
    return (this._interpreter ??= this.track(
      new InterpreterService({
        engine: this.engine,
        settings: this.settings,
        storageDir: this.storageDir,
        logger: this.logger,
        python: pythonApis,
        window: windowApis,
        workspace: workspaceApis,
      }),
    ));
  }

  get trust(): TrustService {
    return (this._trust ??= new TrustService(this.engine));
  }

  get pyodideProgress(): PyodideProgress {
    return (this._pyodideProgress ??= new PyodideProgress(this.log));
  }

  /** What `configure` reads and writes: VS Code settings, applied to the engine at once. */
  get settingsPort(): SettingsPort {
    return (this._settingsPort ??= this.settings.portFor(this.engine));
  }

  get mcp(): McpEndpoints {
    return (this._mcp ??= this.track(
      new McpEndpoints(
        this.engine,
        this.bridge,
        this.settings,
        this.settingsPort,
        this.stores,
        this.toolApprovals,
        this.logger,
      ),
    ));
  }

  /** The window's question before a tool call from Python that needs a yes, and the tools allowed for this session. */
  get toolApprovals(): ToolApprovalQuestions {
    return (this._toolApprovals ??= new ToolApprovalQuestions());
  }

  /** A person's runs, from every place that starts one, with the same follow-ups. */
  get personRuns(): PersonRunService {
    return (this._personRuns ??= new PersonRunService({
      engine: this.engine,
      settings: this.settings,
      interpreterPath: () => this.interpreter.inUse?.path,
      toolApprovals: this.toolApprovals.approvals,
      // The views take this service (their Re-run): reached when a run shows, they are made by then.
      views: { present: () => this.results.present(), revealRunsChannel: () => this.output.reveal(true) },
      problems: this.track(new RunProblems()),
      openSetting,
      window: this.underTest ? this.countingInputBoxes() : windowApis,
      workspace: workspaceApis,
      commands: commandsApis,
    }));
  }

  /** How many input boxes a person's runs have asked VS Code for (counted only while extension tests run). */
  get inputBoxesAsked(): number {
    return this.inputBoxCount;
  }
  private inputBoxCount = 0;

  /** A test knows a question's box is on its way without guessing how long the workbench takes to show it. */
  private countingInputBoxes(): typeof windowApis {
    return {
      ...windowApis,
      showInputBox: (options, closeOn) => {
        this.inputBoxCount += 1;
        return windowApis.showInputBox(options, closeOn);
      },
    };
  }

  /** This window's runs (yours and the agents'), oldest first, kept in the history store; flushed on dispose. */
  get history(): RunHistory {
    if (this._history) return this._history;
    const history = new RunHistory(HISTORY_RUNS, this.stores.history);
    this.track({ dispose: () => history.flush() });
    return (this._history = history);
  }

  /** The runs output channel ("Code Mode: Runs"); under test it keeps a transcript for the tests to read. */
  get output(): RunOutputWriter {
    return (this._output ??= this.track(
      new RunOutputWriter(this.track(vscode.window.createOutputChannel('Code Mode: Runs')), this.underTest),
    ));
  }

  /** What the results page and the explorer's Re-run ask: re-run, interrupt, call a tool. */
  get resultsActions(): ResultsActions {
    return (this._resultsActions ??= resultsActions({
      history: this.history,
      engine: this.engine,
      bridge: this.bridge,
      tools: () => this.mcp.localClient(),
      personRuns: this.personRuns,
    }));
  }

  get results(): ResultsView {
    return (this._results ??= this.track(
      new ResultsView({
        extensionUri: this.context.extensionUri,
        history: this.history,
        actions: this.resultsActions,
        log: this.log,
        memory: this.context.globalState,
        settings: this.settings,
      }),
    ));
  }

  /** The Tool Explorer, with its tree view, which the results view keeps in sight beside it (ResultsView.setCompanion). */
  get explorer(): ToolExplorer {
    if (this._explorer) return this._explorer;
    const explorer = this.track(
      new ToolExplorer({
        engine: this.engine,
        interpreterLabel: () => this.interpreter.label(),
        history: this.history,
        tools: () => this.mcp.localClient(),
        servers: async () => {
          const { bridge: tools, external } = await this.bridge.get();
          return { providers: () => tools.providers(), problems: () => external.problems };
        },
        codeFiles: this.stores.codeFiles,
        jupyterServer: () => this.settings.current.backends.jupyter.url,
        vscodeToolsOn: () => this.settings.current.exposeVscodeTools,
      }),
    );
    this.results.setCompanion(
      this.track(vscode.window.createTreeView(EXPLORER_VIEW_ID, { treeDataProvider: explorer, showCollapseAll: true })),
    );
    return (this._explorer = explorer);
  }

  /** The status bar item of your runs: their backend, and the results not seen yet. */
  get status(): RunStatusItem {
    return (this._status ??= this.track(
      new RunStatusItem(
        () => this.personRuns.backend(),
        (kind) => describeBackend(kind, this.interpreter.label(), this.settings.current.backends),
      ),
    ));
  }

  /** The spare Pyodide interpreter, kept from the first Python file opened or the first agent run. */
  get pyodideSpare(): PyodideSpare {
    return (this._pyodideSpare ??= this.track(
      new PyodideSpare(
        () => this.engine.get(),
        () => this.settings.current,
      ),
    ));
  }

  /** The Code Mode server as VS Code's MCP server definition provider hands it to agents. */
  get mcpProvider(): CodeModeMcpProvider {
    return (this._mcpProvider ??= this.track(
      new CodeModeMcpProvider(
        () => this.settings.current,
        () => this.interpreter.inUse?.path,
        () => this.mcp.loopback(),
        this.context.extensionPath,
        () => this.pyodideSpare.want(),
      ),
    ));
  }

  /**
   * A settings change reaches the cache, the interpreter, the bridge and the engine, in that order; runs wait for
   * it (EngineService.get), so one started just after a change runs on what the change set up.
   */
  settingsChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
    const before = this.settings.reread();
    return this.engine.applySettings(async () => {
      if (event.affectsConfiguration('codeMode.pythonPath')) await this.interpreter.settingChanged();
      await this.bridge.settingsChanged(event);
      await this.engine.settingsChanged(before);
    });
  }

  dispose(): void {
    for (const service of this.created.reverse()) service.dispose();
    this.created.length = 0;
  }
}
