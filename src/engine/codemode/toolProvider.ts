import type { CallToolResult } from '@modelcontextprotocol/client';

export interface ToolSpec {
  server: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The tool's annotations say `readOnlyHint: true` (it changes nothing); absent counts as not read-only. */
  readOnly?: boolean;
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
  /** It asks a person itself before a call that needs it (VS Code's tools): code mode must not ask twice. */
  readonly confirmsCalls?: boolean;
  listTools(): Promise<ToolSpec[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  status(): ProviderStatus;
  close(): Promise<void>;
}
