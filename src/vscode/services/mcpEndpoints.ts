import type * as vscode from 'vscode';
import type { CodeMode, Stores, Logger, SettingsPort } from '../../engine/index';
import {
  LocalMcpClient,
  raiseFdSoftLimit,
  startHttpMcpServer,
  type HttpMcpServer,
  type McpServerOptions,
} from '../../mcp/index';
import type { BridgeService } from './bridgeService';
import type { EngineService } from './engineService';
import type { SettingsService } from '../settings';
import { loopbackSocket } from '../loopbackSocket';
import type { ToolApprovalQuestions } from '../toolApproval';

/**
 * Our MCP server inside the extension host, two ways: the local HTTP endpoint the MCP provider hands to Copilot
 * (started on first resolve; on a socket where VS Code can use one, see loopbackSocket.ts), and the in-process
 * client the Tool Explorer lists and invokes tools with.
 */
export class McpEndpoints implements vscode.Disposable {
  private loopbackServer: Promise<HttpMcpServer> | undefined;
  private releaseSocket: (() => void) | undefined;
  private local: Promise<LocalMcpClient> | undefined;

  constructor(
    private readonly engine: EngineService,
    private readonly bridge: BridgeService,
    private readonly settings: Pick<SettingsService, 'current'>,
    private readonly settingsPort: SettingsPort,
    private readonly stores: Stores,
    private readonly toolApprovals: ToolApprovalQuestions,
    private readonly logger: Logger,
  ) {}

  /**
   * What every MCP server the extension builds gets: the bridge, the settings behind `configure`, and the window's
   * tool-approval question (a modal here in VS Code, rather than an elicitation back through Copilot's chat).
   */
  private serverOptions(
    codeMode: CodeMode,
  ): Pick<McpServerOptions, 'bridge' | 'settings' | 'stores' | 'learningsCount' | 'toolApprovals'> {
    return {
      bridge: codeMode.bridge,
      settings: this.settingsPort,
      stores: this.stores,
      learningsCount: () => this.stores.learnings.count(),
      toolApprovals: this.toolApprovals.approvals,
    };
  }

  loopback(): Promise<HttpMcpServer> {
    // The extension host shares its descriptors with every extension, and Electron may not have raised its soft
    // limit as Node does at start: raised before the endpoint listens (fdLimit.ts), as the CLI's --http does.
    this.loopbackServer ??= Promise.all([this.engine.get(), this.bridge.get(), raiseFdSoftLimit(this.logger)]).then(
      ([engine, codeMode]) => {
        const socket = loopbackSocket();
        this.releaseSocket = socket?.release;
        return startHttpMcpServer(engine, {
          origin: 'mcp',
          ...(socket ? { socketPath: socket.path } : {}),
          log: this.logger,
          // Its one client is Copilot in this window, working in the sessions the person sees, restarts and shares
          // (codeMode.run.session "shared-with-agents"): its runs use the engine's shared sessions on purpose.
          shareSessions: true,
          // VS Code logs a warning for the SDK's priming events otherwise (primingEvents.ts).
          idOnlyPrimingEvents: true,
          sessionIdleMs: this.settings.current.mcpHttpSessionIdleMinutes * 60_000,
          ...this.serverOptions(codeMode),
        });
      },
    );
    return this.loopbackServer;
  }

  /** The Tool Explorer's client of our own tools (runs it starts are the explorer's). */
  localClient(): Promise<LocalMcpClient> {
    this.local ??= Promise.all([this.engine.get(), this.bridge.get()]).then(([engine, codeMode]) =>
      LocalMcpClient.connect(engine, { origin: 'explorer', ...this.serverOptions(codeMode) }),
    );
    return this.local;
  }

  dispose(): void {
    void this.local?.then((client) => client.close());
    void this.loopbackServer?.then((server) => server.close()).finally(() => this.releaseSocket?.());
  }
}
