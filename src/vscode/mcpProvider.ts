import * as path from 'node:path';
import * as vscode from 'vscode';
import { PRODUCT_VERSION } from '../version';
import type { HttpMcpServer } from '../mcp/index';
import { loopbackUri } from './loopbackSocket';
import type { ExtensionSettings } from './settings';

export const MCP_PROVIDER_ID = 'codeMode.mcp';
const LABEL = 'Code Mode for Python';

/**
 * Gives Copilot agent mode the Code Mode server with zero set-up. By default the server runs inside the
 * extension host over local HTTP, on a Unix socket or named pipe where VS Code can use one (agent runs share the
 * output channel, results and history); the `codeMode.mcp.transport: stdio` setting launches the bundled CLI
 * instead, on the extension host's own Node.
 */
export class CodeModeMcpProvider implements vscode.McpServerDefinitionProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeMcpServerDefinitions = this.changed.event;

  constructor(
    private readonly settings: () => ExtensionSettings,
    /** The workspace interpreter in use, if one was chosen yet. */
    private readonly interpreterPath: () => string | undefined,
    /** The loopback endpoint, started on first call. */
    private readonly loopback: () => Promise<HttpMcpServer>,
    private readonly extensionPath: string,
    /** VS Code starts the server: agents are about to run Python. */
    private readonly onStart: () => void,
  ) {}

  /** Settings that change what the server is (transport, backend, trust) make VS Code ask again. */
  refresh(): void {
    this.changed.fire();
  }

  provideMcpServerDefinitions(): vscode.McpServerDefinition[] {
    const settings = this.settings();
    const version = `${PRODUCT_VERSION}-${settings.mcpTransport}-${settings.engine.defaultBackend}-${vscode.workspace.isTrusted ? 't' : 'u'}`;
    if (settings.mcpTransport === 'stdio') {
      const args = [
        path.join(this.extensionPath, 'dist', 'cli.js'),
        '--backend',
        settings.engine.defaultBackend,
        '--timeout',
        String(settings.engine.timeoutS),
      ];
      const python = this.interpreterPath();
      if (!vscode.workspace.isTrusted) args.push('--pyodide-only');
      if (!settings.pyodideWarmSpare) args.push('--no-pyodide-spare');
      else if (python) args.push('--python', python);
      // In the desktop extension host process.execPath is Electron: ELECTRON_RUN_AS_NODE makes it plain Node.
      return [
        new vscode.McpStdioServerDefinition(LABEL, process.execPath, args, { ELECTRON_RUN_AS_NODE: '1' }, version),
      ];
    }
    // The real port and token are only known once the server starts, in resolveMcpServerDefinition.
    return [new vscode.McpHttpServerDefinition(LABEL, vscode.Uri.parse('http://127.0.0.1/mcp'), {}, version)];
  }

  async resolveMcpServerDefinition(server: vscode.McpServerDefinition): Promise<vscode.McpServerDefinition> {
    // Over stdio the CLI keeps its own spare (unless --no-pyodide-spare).
    if (!(server instanceof vscode.McpHttpServerDefinition)) return server;
    this.onStart();
    const endpoint = await this.loopback();
    server.uri = loopbackUri(endpoint);
    server.headers = { Authorization: `Bearer ${endpoint.token}` };
    return server;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
