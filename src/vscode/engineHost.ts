import * as path from 'node:path';
import * as vscode from 'vscode';
import { defaultEngineConfig } from '../engine/config';
import type { Engine } from '../engine/engine';
import { createEngine, pyodideBackendFor } from '../engine/index';
import { createPythonBackend } from '../engine/python/backend';
import { attachCodeMode, type CodeMode } from '../engine/codemode/index';
import type { ServerSources } from '../engine/codemode/externalServers';
import { parseServers } from '../engine/codemode/serverConfig';
import type { ToolProvider } from '../engine/codemode/toolProvider';
import type { Logger, RunEvent } from '../engine/types';
import { startHttpMcpServer, type HttpMcpServer } from '../mcp/http';
import type { InterpreterChoice, InterpreterTracker } from './interpreter';
import { readSettings, type ExtensionSettings } from './settings';
import { VscodeToolsProvider } from './vscodeTools';
import { VscodeSettingsPort } from './settingsPort';
import type { McpServerOptions } from '../mcp/server';
import { TOOL_NAMES } from '../mcp/toolNames';
import { createStores, type Stores } from '../engine/stores/index';

/** Our own MCP tools as VS Code lists them (`mcp_<server>_<tool>`): Python must not call them through VS Code. */
function isOwnLmTool(name: string): boolean {
  return /code.?mode/i.test(name) && TOOL_NAMES.some((tool) => name.endsWith(`_${tool}`));
}

export const UNTRUSTED_REASON =
  'Workspace Python is off because this workspace is not trusted (Restricted Mode). Trust the workspace to use it; Pyodide stays available.';

/**
 * Owns the engine and the loopback MCP endpoint, both created on first use so activation stays cheap.
 * Listeners subscribe here, before the engine exists, and keep working across its lifetime.
 */
export class EngineHost implements vscode.Disposable {
  private engine: Promise<Engine> | undefined;
  private codeMode: Promise<CodeMode> | undefined;
  private loopback: Promise<HttpMcpServer> | undefined;
  private settings: ExtensionSettings;
  private interpreterChoice: InterpreterChoice | undefined;
  private pyodideProgressShown = false;
  private readonly runEvents = new vscode.EventEmitter<RunEvent>();
  private readonly stateChanges = new vscode.EventEmitter<void>();
  readonly onRunEvent = this.runEvents.event;
  readonly onStateChange = this.stateChanges.event;
  readonly logger: Logger;
  /** Code files, learnings and run history in the extension's global storage. */
  readonly stores: Stores;

  constructor(
    private readonly storageDir: string,
    private readonly log: vscode.LogOutputChannel,
    private readonly interpreter: InterpreterTracker,
  ) {
    this.settings = readSettings(defaultEngineConfig);
    this.logger = { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) };
    // Nothing touches the disk until a store is first used.
    this.stores = createStores(storageDir, this.logger);
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

  /** The code-mode bridge (external servers and VS Code's tools), attached to the engine on first use. */
  async getCodeMode(): Promise<CodeMode> {
    await this.getEngine();
    if (!this.codeMode) throw new Error('code mode failed to attach');
    return this.codeMode;
  }

  /** The loopback endpoint the MCP provider hands to VS Code; started on first resolve. */
  getLoopbackEndpoint(): Promise<HttpMcpServer> {
    this.loopback ??= Promise.all([this.getEngine(), this.getCodeMode()]).then(([engine, codeMode]) =>
      startHttpMcpServer(engine, {
        origin: 'mcp',
        log: this.logger,
        // Its one client is Copilot in this window, working in the sessions the person sees, restarts and shares
        // (codeMode.run.session "shared-with-agents"): its runs use the engine's shared sessions on purpose.
        shareSessions: true,
        sessionIdleMs: this.settings.mcpHttpSessionIdleMinutes * 60_000,
        ...this.serverOptions(codeMode),
      }),
    );
    return this.loopback;
  }

  /** Re-reads settings just written (configure) so the engine uses them before VS Code's change event arrives. */
  async settingsApplied(): Promise<void> {
    this.settings = readSettings(defaultEngineConfig);
    if (this.engine) (await this.engine).config = this.settings.engine;
  }

  async settingsChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
    const before = this.settings;
    this.settings = readSettings(defaultEngineConfig);
    if (event.affectsConfiguration('codeMode.pythonPath')) this.interpreter.settingChanged();
    if (this.codeMode) {
      const codeMode = await this.codeMode;
      codeMode.bridge.policy = this.settings.bridgePolicy;
      if (event.affectsConfiguration('codeMode.mcpServers')) await codeMode.external.setSources(this.serverSources());
      if (event.affectsConfiguration('codeMode.tools.vscodeTools')) await codeMode.bridge.setProviders('vscode', this.vscodeProviders());
    }
    if (!this.engine) return;
    const engine = await this.engine;
    engine.config = this.settings.engine;
    if (before.pythonMemoryLimitMb !== this.settings.pythonMemoryLimitMb) {
      await engine.setBackendFactory(this.pythonBackend(), `the memory cap of workspace-Python sessions changed to ${this.settings.pythonMemoryLimitMb || 'none'} MB`);
    }
    const { heapLimitMb, network, workspaceWritable } = this.settings.pyodide;
    if (before.pyodide.heapLimitMb !== heapLimitMb || before.pyodide.network !== network || before.pyodide.workspaceWritable !== workspaceWritable) {
      const workspace = workspaceWritable ? 'writable' : 'read-only';
      await engine.setBackendFactory(pyodideBackendFor(this.storageDir, this.settings.pyodide, this.logger), `the Pyodide settings changed (heap ${heapLimitMb} MB, network ${network}, workspace ${workspace})`);
    }
  }

  async interpreterChanged(choice: InterpreterChoice): Promise<void> {
    if (choice.path === this.interpreterChoice?.path) return;
    this.interpreterChoice = choice;
    if (!this.engine) return;
    const engine = await this.engine;
    const name = choice.path ?? 'python3 on PATH';
    await engine.setBackendFactory(this.pythonBackend(), `the workspace interpreter changed to ${name}`);
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
      pythonMemoryLimitMb: this.settings.pythonMemoryLimitMb,
      storageDir: this.storageDir,
      pyodide: this.settings.pyodide,
      workspaceRoots: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
      log: this.logger,
    });
    engine.onRunEvent((event) => this.runEvents.fire(event));
    engine.setHintsProvider((diagnostics) => this.stores.learnings.hintsFor(diagnostics));
    engine.onStateChange(() => {
      this.stateChanges.fire();
      this.showPyodideProgressOnce(engine);
    });
    if (!vscode.workspace.isTrusted) await engine.setBackendEnabled('python', false, UNTRUSTED_REASON);
    // Attached before any run, so `from code_mode import tools` works from the first one.
    this.codeMode = this.createCodeMode(engine);
    await this.codeMode;
    this.log.info(`engine ready (storage ${this.storageDir})`);
    return engine;
  }

  /** What every MCP server the extension builds gets: the bridge and the settings behind `configure`. */
  serverOptions(codeMode: CodeMode): Pick<McpServerOptions, 'bridge' | 'settings' | 'stores' | 'learningsCount'> {
    return { bridge: codeMode.bridge, settings: new VscodeSettingsPort(this), stores: this.stores, learningsCount: () => this.stores.learnings.count() };
  }

  private async createCodeMode(engine: Engine): Promise<CodeMode> {
    const codeMode = await attachCodeMode(engine, this.serverSources(), this.logger);
    codeMode.bridge.policy = this.settings.bridgePolicy;
    await codeMode.bridge.setProviders('vscode', this.vscodeProviders());
    codeMode.bridge.onDidChange(() => this.stateChanges.fire());
    return codeMode;
  }

  /** mcp_servers.json and .vscode/mcp.json at the workspace root (both watched), over the setting. */
  private serverSources(): ServerSources {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return {
      files: folder ? [path.join(folder, 'mcp_servers.json'), path.join(folder, '.vscode', 'mcp.json')] : [],
      workspaceFolder: folder,
      fromSettings: parseServers({ servers: this.settings.mcpServers }, { source: 'setting codeMode.mcpServers', workspaceFolder: folder }),
    };
  }

  private vscodeProviders(): ToolProvider[] {
    return this.settings.exposeVscodeTools ? [new VscodeToolsProvider(isOwnLmTool)] : [];
  }

  /** The first Pyodide load takes a few seconds (making the memory snapshot); say so once. */
  private showPyodideProgressOnce(engine: Engine): void {
    const loading = () => engine.describeSessions().some((s) => s.backend === 'pyodide' && s.info.state === 'loading');
    if (this.pyodideProgressShown || !loading()) return;
    this.pyodideProgressShown = true;
    this.warnIfSandboxIncomplete(engine);
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

  private pythonBackend() {
    return createPythonBackend({ pythonPath: this.interpreterChoice?.path, memoryLimitMb: this.settings.pythonMemoryLimitMb, log: this.logger });
  }

  /** Said once, when Pyodide first starts: agents are told it is a sandbox, so a weaker one must not be silent. */
  private warnIfSandboxIncomplete(engine: Engine): void {
    const sandbox = engine.sandbox('pyodide');
    if (!sandbox || sandbox.complete) return;
    // The backend has logged every gap already.
    void vscode.window
      .showWarningMessage(`Code Mode: the Pyodide sandbox is incomplete on this machine (${sandbox.mechanism}): ${sandbox.gaps[0]}.`, 'Show Details')
      .then((choice) => choice && this.log.show());
  }

  dispose(): void {
    void this.loopback?.then((server) => server.close());
    void this.codeMode?.then((codeMode) => codeMode.dispose());
    void this.engine?.then((engine) => engine.dispose());
    this.runEvents.dispose();
    this.stateChanges.dispose();
  }
}
