// The one holder of the extension's services, as GitLens' container.ts: each service is created on first use
// (a getter), after the services it takes, and disposed in reverse order of creation. Nothing heavy starts
// here: the engine, the interpreter and the MCP endpoint start when something first needs them.
import type * as vscode from 'vscode';
import { type Engine, createStores, type Stores, type Logger } from '../engine/index';
import type { InterpreterTracker } from './interpreter';
import { BridgeService } from './services/bridgeService';
import { EngineService } from './services/engineService';
import { InterpreterService } from './services/interpreterService';
import { JupyterTokens } from './services/jupyterTokens';
import { McpEndpoints } from './services/mcpEndpoints';
import { PersonRunService, type PersonRunViews } from './services/personRuns';
import { PyodideProgress } from './services/pyodideProgress';
import { SettingsCache } from './services/settingsCache';
import { TrustService } from './services/trustService';
import { VscodeSettingsPort } from './settingsPort';
import { ToolApprovalQuestions } from './toolApproval';

export interface ContainerDeps {
  storageDir: string;
  log: vscode.LogOutputChannel;
  interpreterTracker: InterpreterTracker;
  secrets: vscode.SecretStorage;
  /** Where a person's run shows; asked for at each run, since the views are made after the container. */
  personRunViews: () => PersonRunViews;
}

export class Container implements vscode.Disposable {
  readonly logger: Logger;
  /** Services with something to dispose, in the order they were created. */
  private readonly created: vscode.Disposable[] = [];
  private _settings: SettingsCache | undefined;
  private _stores: Stores | undefined;
  private _engine: EngineService | undefined;
  private _bridge: BridgeService | undefined;
  private _interpreter: InterpreterService | undefined;
  private _trust: TrustService | undefined;
  private _pyodideProgress: PyodideProgress | undefined;
  private _settingsPort: VscodeSettingsPort | undefined;
  private _mcp: McpEndpoints | undefined;
  private _jupyterTokens: JupyterTokens | undefined;
  private _toolApprovals: ToolApprovalQuestions | undefined;
  private _personRuns: PersonRunService | undefined;

  constructor(private readonly deps: ContainerDeps) {
    const { log } = deps;
    this.logger = { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) };
  }

  private track<T extends vscode.Disposable>(service: T): T {
    this.created.push(service);
    return service;
  }

  get settings(): SettingsCache {
    return (this._settings ??= new SettingsCache());
  }

  /** Code files, learnings and run history in the extension's global storage; nothing touches the disk until a store is used. */
  get stores(): Stores {
    return (this._stores ??= createStores(this.deps.storageDir, this.logger));
  }

  get engine(): EngineService {
    return (this._engine ??= this.track(
      new EngineService({
        storageDir: this.deps.storageDir,
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
    return (this._jupyterTokens ??= new JupyterTokens(this.deps.secrets));
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
    return (this._interpreter ??= new InterpreterService(
      this.deps.interpreterTracker,
      this.engine,
      this.settings,
      this.deps.storageDir,
      this.logger,
    ));
  }

  get trust(): TrustService {
    return (this._trust ??= new TrustService(this.engine));
  }

  get pyodideProgress(): PyodideProgress {
    return (this._pyodideProgress ??= new PyodideProgress(this.deps.log));
  }

  /** What `configure` reads and writes: VS Code settings, applied to the engine at once. */
  get settingsPort(): VscodeSettingsPort {
    return (this._settingsPort ??= new VscodeSettingsPort({
      current: () => this.settings.current,
      applyWritten: async () => {
        this.settings.reread();
        await this.engine.configure();
      },
    }));
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
    return (this._personRuns ??= this.track(
      new PersonRunService({
        engine: this.engine,
        settings: this.settings,
        interpreterPath: () => this.interpreter.inUse?.path,
        toolApprovals: this.toolApprovals.approvals,
        views: this.deps.personRunViews,
      }),
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
