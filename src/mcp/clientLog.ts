import type { LoggingLevel, Server } from '@modelcontextprotocol/server';
import type { ToolBridge } from '../engine/index';
import type { RunChannel } from './shared';

const LOGGER = 'code-mode-python';

/**
 * What happened on the server that a client should know of, as MCP `notifications/message`: a session's
 * interpreter replaced, a run refused by policy, packages installed (each tool tells what its calls did), an
 * external MCP server failing. A 2025 client picks the least severe level it wants with `logging/setLevel` (until
 * then everything is sent); a 2026 client names it in each request, and hears nothing about a request that names
 * none (the SDK applies both).
 */
export class ClientLog {
  /** External servers already reported as failed, with their error, so each failure is told once. */
  private readonly failedServers = new Map<string, string>();

  constructor(private readonly server: Server) {
    server.registerCapabilities({ logging: {} });
  }

  /** Sends one message; `channel` ties it to the call it is about (over HTTP it then travels on that call's stream). */
  send(level: LoggingLevel, data: Record<string, unknown>, channel?: RunChannel): Promise<void> {
    return (
      channel ? channel.log(level, data, LOGGER) : this.server.sendLoggingMessage({ level, logger: LOGGER, data })
    ).catch(() => undefined);
  }

  /** Reports external servers that failed since the last look; a server that recovers is reported again when it fails again. */
  async serversChecked(bridge: ToolBridge, extra?: RunChannel): Promise<void> {
    for (const provider of bridge.providers()) {
      const status = provider.status();
      if (status.state !== 'failed') {
        this.failedServers.delete(status.name);
        continue;
      }
      const error = status.error ?? 'failed';
      if (this.failedServers.get(status.name) === error) continue;
      this.failedServers.set(status.name, error);
      await this.send(
        'error',
        { event: 'server_failed', server: status.name, error, command: status.command ?? null },
        extra,
      );
    }
  }
}
