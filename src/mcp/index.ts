// The MCP server's only door for the extension: everything src/vscode/ and src/extension.ts use of the MCP server
// is exported here, and lint keeps them from reaching past it (eslint.config.mjs). The CLI (cli.ts) is its own entry.
export { startHttpMcpServer, type HttpMcpServer } from './http';
export { DEFAULT_SESSION_IDLE_MINUTES } from './httpSessionIdle';
export { raiseFdSoftLimit } from './fdLimit';
export { LocalMcpClient } from './localClient';
export type { McpServerOptions } from './server';
export { TOOL_NAMES, type ToolName } from './toolNames';
