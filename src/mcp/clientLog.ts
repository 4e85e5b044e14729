import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  LoggingLevelSchema,
  SetLevelRequestSchema,
  type LoggingLevel,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolBridge } from '../engine/index';
import type { RunChannel } from './shared';

const LOGGER = 'code-mode-python';
const SEVERITY = LoggingLevelSchema.options;

/**
 * What happened on the server that a client should know of, as MCP `notifications/message`: a session's
 * interpreter replaced, a run refused by policy, packages installed (each tool tells what its calls did), an
 * external MCP server failing. The client picks the least severe level it wants with `logging/setLevel`; until
 * then everything is sent.
 */
export class ClientLog {
  private minimum: LoggingLevel = 'debug';
  /** External servers already reported as failed, with their error, so each failure is told once. */
  private readonly failedServers = new Map<string, string>();

  constructor(private readonly server: Server) {
    server.registerCapabilities({ logging: {} });
    // Our own handler rather than the SDK's, so the level is this connection's and applies to every message we send.
    server.setRequestHandler(SetLevelRequestSchema, (request) => {
      this.minimum = request.params.level;
      return {};
    });
  }

  /** Sends one message; `extra` ties it to the request it is about (over HTTP it then travels on that request's stream). */
  send(level: LoggingLevel, data: Record<string, unknown>, extra?: RunChannel): Promise<void> {
    if (SEVERITY.indexOf(level) < SEVERITY.indexOf(this.minimum)) return Promise.resolve();
    const notification: ServerNotification = {
      method: 'notifications/message',
      params: { level, logger: LOGGER, data },
    };
    return (extra ? extra.sendNotification(notification) : this.server.notification(notification)).catch(
      () => undefined,
    );
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
