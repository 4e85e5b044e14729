import * as path from 'node:path';
import * as vscode from 'vscode';
import { defaultEngineConfig } from '../engine/config';
import type { Engine } from '../engine/engine';
import { createEngine } from '../engine/index';
import { createPyodideBackend } from '../engine/pyodide/backend';
import { createPythonBackend } from '../engine/python/backend';
import type { Logger, RunEvent } from '../engine/types';
import { startLoopbackMcpServer, type LoopbackMcpServer } from '../mcp/http';
import type { InterpreterChoice, InterpreterTracker } from './interpreter';
import { readSettings, type ExtensionSettings } from './settings';

export const UNTRUSTED_REASON =
  'Workspace Python is off because this workspace is not trusted (Restricted Mode). Trust the workspace to use it; Pyodide stays available.';

/**
 * Owns the engine and the loopback MCP endpoint, both created on first use so activation stays cheap.
 * Listeners subscribe here, before the engine exists, and keep working across its lifetime.
 */
export class EngineHost implements vscode.Disposable {
  private engine: Promise<Engine> | undefined;
  private loopback: Promise<LoopbackMcpServer> | undefined;
  private settings: ExtensionSettings;
  private interpreterChoice: InterpreterChoice | undefined;
  private pyodideProgressShown = false;
  private readonly runEvents = new vscode.EventEmitter<RunEvent>();
  private readonly stateChanges = new vscode.EventEmitter<void>();
  readonly onRunEvent = this.runEvents.event;
  readonly onStateChange = this.stateChanges.event;
  readonly logger: Logger;

  constructor(
    private readonly storageDir: string,
    private readonly log: vscode.LogOutputChannel,
    private readonly interpreter: InterpreterTracker,
  ) {
    this.settings = readSettings(defaultEngineConfig);
    this.logger = { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) };
  }

  get isCreated(): boolean {
    return this.engine !== undefined;
  }

  get currentSettings(): ExtensionSettings {
    return this.settings;
  }

  get interpreterInUse(): InterpreterChoice | undefined {
    return this.interpreterChoice;
  }

  getEngine(): Promise<Engine> {
    this.engine ??= this.createEngine();
    return this.engine;
  }

  /** The loopback endpoint the MCP provider hands to VS Code; started on first resolve. */
  getLoopbackEndpoint(): Promise<LoopbackMcpServer> {
    this.loopback ??= this.getEngine().then((engine) => startLoopbackMcpServer(engine, { origin: 'mcp', log: this.logger }));
    return this.loopback;
  }

  async settingsChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
    const before = this.settings;
    this.settings = readSettings(defaultEngineConfig);
    if (event.affectsConfiguration('codeMode.pythonPath')) this.interpreter.settingChanged();
    if (!this.engine) return;
    const engine = await this.engine;
    engine.config = this.settings.engine;
    if (before.heapLimitMb !== this.settings.heapLimitMb) await engine.setBackendFactory(this.pyodideFactory());
  }

  async interpreterChanged(choice: InterpreterChoice): Promise<void> {
    if (choice.path === this.interpreterChoice?.path) return;
    this.interpreterChoice = choice;
    if (!this.engine) return;
    const engine = await this.engine;
    await engine.setBackendFactory(createPythonBackend({ pythonPath: choice.path, log: this.logger }));
    const name = choice.path ?? 'python3 on PATH';
    this.log.info(`workspace Python is now ${name}; its sessions were restarted`);
    void vscode.window.showInformationMessage(`Code Mode: workspace Python changed to ${name}. Its sessions were restarted: their variables are gone.`);
  }

  async trustChanged(trusted: boolean): Promise<void> {
    if (!this.engine) return;
    await (await this.engine).setBackendEnabled('python', trusted, UNTRUSTED_REASON);
  }

  private async createEngine(): Promise<Engine> {
    this.interpreterChoice ??= await this.interpreter.current();
    const engine = createEngine({
      config: this.settings.engine,
      pythonPath: this.interpreterChoice.path,
      storageDir: this.storageDir,
      pyodideHeapLimitMb: this.settings.heapLimitMb,
      log: this.logger,
    });
    engine.onRunEvent((event) => this.runEvents.fire(event));
    engine.onStateChange(() => {
      this.stateChanges.fire();
      this.showPyodideProgressOnce(engine);
    });
    if (!vscode.workspace.isTrusted) await engine.setBackendEnabled('python', false, UNTRUSTED_REASON);
    this.log.info(`engine ready (storage ${this.storageDir})`);
    return engine;
  }

  private pyodideFactory() {
    return createPyodideBackend({
      cacheDir: path.join(this.storageDir, 'pyodide-cache'),
      heapLimitMb: this.settings.heapLimitMb,
      log: this.logger,
    });
  }

  /** The first Pyodide load takes a few seconds (making the memory snapshot); say so once. */
  private showPyodideProgressOnce(engine: Engine): void {
    const loading = () => engine.describeSessions().some((s) => s.backend === 'pyodide' && s.info.state === 'loading');
    if (this.pyodideProgressShown || !loading()) return;
    this.pyodideProgressShown = true;
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Code Mode: loading Pyodide (first start prepares a snapshot)…' },
      () =>
        new Promise<void>((resolve) => {
          const listener = engine.onStateChange(() => {
            if (!loading()) {
              listener.dispose();
              resolve();
            }
          });
        }),
    );
  }

  dispose(): void {
    void this.loopback?.then((server) => server.close());
    void this.engine?.then((engine) => engine.dispose());
    this.runEvents.dispose();
    this.stateChanges.dispose();
  }
}
