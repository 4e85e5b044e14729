// The SDK's MCP client, for code mode's connections to other servers. Bundled on its own (dist/mcp-client.js) and
// loaded on first use (mcpClientLibrary.ts), so the extension and the CLI start without it: with its schemas it is
// as large as the rest of the CLI.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/**
 * The SDK probes a server's protocol revision over its own stdio transport on a sibling process started from the
 * same command, so a configured server would start twice (and do whatever it does at start twice). A transport
 * of another class makes the SDK probe in place: one process, asked `server/discover` first, then `initialize`
 * if it does not speak 2026.
 */
class StdioInPlace extends StdioClientTransport {}

export { Client, getDefaultEnvironment, StdioInPlace, StreamableHTTPClientTransport };
