// The CLI's stdio mode: one MCP server on the process's stdin and stdout. Loaded by the CLI once the engine is
// made and the spare interpreter is starting: the MCP server, its tools and the SDK's schemas take tens of
// milliseconds to load, which a spare started first spends on its own start.
import { serveStdio as serveBothRevisions } from '@modelcontextprotocol/server/stdio';
import type { Engine, Logger } from '../engine/index';
import { createMcpServer, type McpServerOptions } from './server';
import { PausedCalls } from './pausedCalls';
import { TaskExtension } from './taskExtension';
import { StdioLineTransport } from './stdioTransport';

/** Serves until stdin ends (then `onClosed`); resolves once the server listens. */
export async function serveStdio(
  engine: Engine,
  options: McpServerOptions,
  backend: string,
  log: Logger,
  onClosed: () => void,
): Promise<{ close(): Promise<void> }> {
  // Our own transport rather than the SDK's, which closes the connection on a line over its limit (stdioTransport.ts).
  // One of each for the connection, whichever server serves it: a 2026 client's paused runs and tasks.
  const pausedCalls = new PausedCalls();
  const taskExtension = new TaskExtension();
  const transport = new StdioLineTransport({
    log,
    onClosed: () => {
      pausedCalls.close();
      taskExtension.close();
      onClosed();
    },
  });
  // The opening exchange picks the revision (2025-11-25 `initialize`, or 2026-07-28's per-request envelope); the
  // server built for it serves the connection. A 2026 probe that a client abandons builds one that is never used.
  const handle = serveBothRevisions(() => createMcpServer(engine, { ...options, pausedCalls, taskExtension }), {
    transport,
    onerror: (error) => log.warn(`MCP over stdio: ${error.message}`),
  });
  // Started by hand in a terminal rather than by a client, it says what it waits for, or it looks hung.
  const byHand = process.stdin.isTTY ? '; connect an MCP client; Ctrl+C to stop' : '';
  log.info(`serving MCP over stdio (default backend: ${backend})${byHand}`);
  return handle;
}
