// The one holder of the extension's services, as GitLens' container.ts: each service is created on first use
// (a getter), after the services it takes, and disposed in reverse order of creation. Nothing heavy starts
// here: the engine, the interpreter and the MCP endpoint start when something first needs them.
import type * as vscode from 'vscode';
import { type Engine, createStores, type Stores, type Logger, type SettingsPort } from '../engine/index';
import * as commandsApis from './common/commands.apis';
import * as pythonApis from './common/python.apis';
import * as windowApis from './common/window.apis';
import * as workspaceApis from './common/workspace.apis';
import { openSetting } from './openSetting';
import { RunProblems } from './runProblems';
import { BridgeService } from './services/bridgeService';
import { EngineService } from './services/engineService';
import { InterpreterService } from './services/interpreterService';
import { JupyterTokens } from './services/jupyterTokens';
import { McpEndpoints } from './services/mcpEndpoints';
import { PersonRunService, type PersonRunViews } from './services/personRuns';
import { PyodideProgress } from './services/pyodideProgress';
import { TrustService } from './services/trustService';
import { SettingsService } from './settings';
import { ToolApprovalQuestions } from './toolApproval';

export interface ContainerDeps {
  storageDir: string;
  log: vscode.LogOutputChannel;
  secrets: vscode.SecretStorage;
  /** Where a person's run shows; asked for at each run, since the views are made after the container. */
  personRunViews: () => PersonRunViews;
}

export class Container implements vscode.Disposable {
  readonly logger: Logger;
  /** Services with something to dispose, in the order they were created. */
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

  constructor(private readonly deps: ContainerDeps) {
    const { log } = deps;
    this.logger = { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) };
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
    return (this._interpreter ??= this.track(
      new InterpreterService({
        engine: this.engine,
        settings: this.settings,
        storageDir: this.deps.storageDir,
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
    return (this._pyodideProgress ??= new PyodideProgress(this.deps.log));
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
      views: this.deps.personRunViews,
      problems: this.track(new RunProblems()),
      openSetting,
      window: windowApis,
      workspace: workspaceApis,
      commands: commandsApis,
    }));
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
