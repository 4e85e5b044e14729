// The CLI's stdio mode: one MCP server on the process's stdin and stdout. Loaded by the CLI once the engine is
// made and the spare interpreter is starting: the MCP server, its tools and the SDK's schemas take tens of
// milliseconds to load, which a spare started first spends on its own start.
import type { Engine, Logger } from '../engine/index';
import { createMcpServer, type McpServerOptions } from './server';
import { StdioLineTransport } from './stdioTransport';

/** Serves until stdin ends (then `onClosed`); resolves once the server listens. */
export async function serveStdio(
  engine: Engine,
  options: McpServerOptions,
  backend: string,
  log: Logger,
  onClosed: () => void,
): Promise<{ close(): Promise<void> }> {
  const server = createMcpServer(engine, options);
  const transport = new StdioLineTransport({ log });
  // Closed at the end of stdin (or when stdout fails): the client is gone.
  transport.onclose = onClosed;
  await server.connect(transport);
  // Started by hand in a terminal rather than by a client, it says what it waits for, or it looks hung.
  const byHand = process.stdin.isTTY ? '; connect an MCP client; Ctrl+C to stop' : '';
  log.info(`serving MCP over stdio (default backend: ${backend})${byHand}`);
  return server;
}
