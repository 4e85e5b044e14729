import * as path from 'node:path';
import { assetsDir } from '../paths';

export type McpClientLibrary = typeof import('./mcpClient');

let library: McpClientLibrary | undefined;

/** The MCP client bundle (mcpClient.ts), loaded when code mode first connects to a server. */
export function mcpClientLibrary(): McpClientLibrary {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle of its own, found at run time
  library ??= require(path.join(assetsDir(), 'mcp-client.js')) as McpClientLibrary;
  return library;
}
