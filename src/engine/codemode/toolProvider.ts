import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface ToolSpec {
  server: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ProviderStatus {
  name: string;
  state: 'idle' | 'connecting' | 'connected' | 'failed' | 'closed';
  error?: string;
  stderrTail?: string;
  /** The command line or URL, for messages. */
  command?: string;
  /** Which config it came from. */
  source?: string;
  toolCount?: number;
}

/** A set of tools Python can call: an external MCP server, or VS Code's own tools in the extension. */
export interface ToolProvider {
  readonly name: string;
  readonly description?: string;
  listTools(): Promise<ToolSpec[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  status(): ProviderStatus;
  close(): Promise<void>;
}
