import { Client, InMemoryTransport, type CallToolResult, type Tool } from '@modelcontextprotocol/client';
import type { Engine } from '../engine/index';
import { PRODUCT_VERSION } from '../version';
import { createMcpServer, type McpServerOptions } from './server';

/**
 * An MCP client wired in memory to the engine's own MCP server, so the tool explorer lists and invokes
 * exactly the tools agents see, through the same handlers.
 */
export class LocalMcpClient {
  private constructor(private readonly client: Client) {}

  static async connect(engine: Engine, options: McpServerOptions = {}): Promise<LocalMcpClient> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(engine, options).connect(serverSide);
    const client = new Client({ name: 'code-mode-explorer', version: PRODUCT_VERSION });
    await client.connect(clientSide);
    return new LocalMcpClient(client);
  }

  async listTools(): Promise<Tool[]> {
    return (await this.client.listTools()).tools;
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await this.client.callTool({ name, arguments: args })) as CallToolResult;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
