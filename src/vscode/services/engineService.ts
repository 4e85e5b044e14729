import * as vscode from 'vscode';
import { type Engine, createEngine, type Stores, type Logger, type RunEvent } from '../../engine/index';
import {
  backendRemovals,
  engineSetup,
  factorySwaps,
  jupyterFactory,
  jupyterTokenKey,
  localFolders,
  type BackendEnvironment,
} from '../backends';
import { workspaceFolders } from '../common/workspace.apis';
import type { ExtensionSettings, SettingsService } from '../settings';

export interface EngineServiceDeps {
  storageDir: string;
  logger: Logger;
  settings: Pick<SettingsService, 'current'>;
  stores: Stores;
  /** The interpreter the python backend starts with, asked for when the engine is created. */
  startingPythonPath: () => Promise<string | undefined>;
  /** The interpreter in use now, for a python backend re-created by a settings change. */
  pythonPath: () => string | undefined;
  /** Runs once the engine exists, before anyone gets it (workspace trust, the code-mode bridge). */
  prepare: (engine: Engine) => Promise<void>;
  /** The stored token of the Jupyter Server `url` (secret storage). */
  jupyterToken: (url: string | undefined) => Promise<string | undefined>;
}

/**
 * The engine's lifetime: created on first use so activation stays cheap, configured from the settings,
 * disposed with the extension. Listeners subscribe here before the engine exists and keep working across it.
 */
export class EngineService implements vscode.Disposable {
  private engine: Promise<Engine> | undefined;
  /** The settings change being applied (new backends, another interpreter), which get() waits for. */
  private settling: Promise<void> = Promise.resolve();
  private readonly runEvents = new vscode.EventEmitter<RunEvent>();
  private readonly stateChanges = new vscode.EventEmitter<void>();
  readonly onRunEvent = this.runEvents.event;
  readonly onStateChange = this.stateChanges.event;

  constructor(private readonly deps: EngineServiceDeps) {}

  get isCreated(): boolean {
    return this.engine !== undefined;
  }

  /** The engine, once a settings change under way is applied: a run started right after a change uses the new backends. */
  get(): Promise<Engine> {
    const engine = (this.engine ??= this.create());
    return this.settling.then(() => engine);
  }

  /** Applies a settings change; get() waits for it (changes apply one after another). */
  applySettings(work: () => Promise<void>): Promise<void> {
    const applied = this.settling.then(work);
    this.settling = applied.catch(() => undefined);
    return applied;
  }

  /** The engine if it was created (or is being created); never creates one. */
  async ifCreated(): Promise<Engine | undefined> {
    return this.engine && (await this.engine);
  }

  /** Gives a created engine the current settings (configure wrote some; VS Code's change event comes later). */
  async configure(): Promise<void> {
    const engine = await this.ifCreated();
    engine?.configure(this.deps.settings.current.engine);
  }

  /** After a settings change: the new config, and backends whose settings changed re-created. */
  async settingsChanged(before: ExtensionSettings): Promise<void> {
    const engine = await this.ifCreated();
    if (!engine) return;
    const after = this.deps.settings.current;
    engine.configure(after.engine);
    for (const { kind, reason } of backendRemovals(before.backends, after.backends))
      await engine.removeBackend(kind, reason);
    for (const { factory, reason } of factorySwaps(
      before.backends,
      after.backends,
      await this.environment(this.deps.pythonPath()),
    )) {
      await engine.setBackendFactory(factory, reason);
    }
  }

  /** A token was stored or removed: the jupyter backend reconnects with it (its kernels restart). */
  async jupyterTokenChanged(): Promise<void> {
    const engine = await this.ifCreated();
    const factory =
      engine && jupyterFactory(this.deps.settings.current.backends, await this.environment(this.deps.pythonPath()));
    if (engine && factory) await engine.setBackendFactory(factory, 'the Jupyter Server token changed');
  }

  private async environment(pythonPath: string | undefined): Promise<BackendEnvironment> {
    const jupyterToken = await this.deps.jupyterToken(jupyterTokenKey(this.deps.settings.current.backends));
    return {
      storageDir: this.deps.storageDir,
      logger: this.deps.logger,
      pythonPath,
      jupyterToken,
      workspaceRoots: localFolders(workspaceFolders()),
    };
  }

  private async create(): Promise<Engine> {
    const { settings, stores, logger } = this.deps;
    const pythonPath = await this.deps.startingPythonPath();
    const engine = createEngine(engineSetup(settings.current, await this.environment(pythonPath)));
    engine.onRunEvent((event) => this.runEvents.fire(event));
    engine.setHintsProvider((diagnostics) => stores.learnings.hintsFor(diagnostics));
    engine.onStateChange(() => this.stateChanges.fire());
    await this.deps.prepare(engine);
    logger.info(`engine ready (storage ${this.deps.storageDir})`);
    return engine;
  }

  dispose(): void {
    void this.engine?.then((engine) => engine.dispose());
    this.runEvents.dispose();
    this.stateChanges.dispose();
  }
}
