import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  attachCodeMode,
  type CodeMode,
  type ServerSources,
  parseServers,
  type ToolProvider,
  type Engine,
  type Logger,
} from '../../engine/index';
import { TOOL_NAMES } from '../../mcp/index';
import { VscodeToolsProvider } from '../vscodeTools';
import type { EngineService } from './engineService';
import type { SettingsService } from '../settings';

/** Our own MCP tools as VS Code lists them (`mcp_<server>_<tool>`): Python must not call them through VS Code. */
function isOwnLmTool(name: string): boolean {
  return /code.?mode/i.test(name) && TOOL_NAMES.some((tool) => name.endsWith(`_${tool}`));
}

/**
 * The code-mode bridge: external MCP servers and VS Code's own tools, callable from Python. Attached to the
 * engine when it is created (before any run, so `from code_mode import tools` works from the first one).
 */
export class BridgeService implements vscode.Disposable {
  private codeMode: Promise<CodeMode> | undefined;
  private readonly changes = new vscode.EventEmitter<void>();
  /** A server or provider came, went or changed its tools. */
  readonly onDidChange = this.changes.event;

  constructor(
    private readonly engine: EngineService,
    private readonly settings: Pick<SettingsService, 'current'>,
    private readonly logger: Logger,
  ) {}

  async attach(engine: Engine): Promise<void> {
    this.codeMode = this.create(engine);
    await this.codeMode;
  }

  /** The bridge, creating the engine (which attaches it) on first use. */
  async get(): Promise<CodeMode> {
    await this.engine.get();
    if (!this.codeMode) throw new Error('code mode failed to attach');
    return this.codeMode;
  }

  async settingsChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!this.codeMode) return;
    const codeMode = await this.codeMode;
    codeMode.bridge.policy = this.settings.current.bridgePolicy;
    codeMode.bridge.approval = this.settings.current.approvalPolicy;
    if (event.affectsConfiguration('codeMode.mcpServers')) await codeMode.external.setSources(this.serverSources());
    if (event.affectsConfiguration('codeMode.tools.vscodeTools'))
      await codeMode.bridge.setProviders('vscode', this.vscodeProviders());
  }

  private async create(engine: Engine): Promise<CodeMode> {
    const codeMode = await attachCodeMode(engine, this.serverSources(), this.logger);
    codeMode.bridge.policy = this.settings.current.bridgePolicy;
    codeMode.bridge.approval = this.settings.current.approvalPolicy;
    await codeMode.bridge.setProviders('vscode', this.vscodeProviders());
    codeMode.bridge.onDidChange(() => this.changes.fire());
    return codeMode;
  }

  /** mcp_servers.json and .vscode/mcp.json at the workspace root (both watched), over the setting. */
  private serverSources(): ServerSources {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return {
      files: folder ? [path.join(folder, 'mcp_servers.json'), path.join(folder, '.vscode', 'mcp.json')] : [],
      workspaceFolder: folder,
      fromSettings: parseServers(
        { servers: this.settings.current.mcpServers },
        { source: 'setting codeMode.mcpServers', workspaceFolder: folder },
      ),
    };
  }

  /** VS Code's language-model tools, without our own (tool filter), unless codeMode.tools.vscodeTools is off. */
  private vscodeProviders(): ToolProvider[] {
    return this.settings.current.exposeVscodeTools ? [new VscodeToolsProvider(isOwnLmTool)] : [];
  }

  dispose(): void {
    void this.codeMode?.then((codeMode) => codeMode.dispose());
    this.changes.dispose();
  }
}
