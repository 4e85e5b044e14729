// The one way a run's channel (RunChannel, shared.ts) is built. A tools/call's run talks back four ways: a plain
// call on its own request; a 2025 task on the connection, its call answered at once (toolTasks.ts); a 2026 paused
// call on whichever round of it is open (pausedCalls.ts); a 2026 extension task on its call while that waits, then
// into the task's status (taskExtension.ts). What they share comes from the call's request: its `_meta` (the
// progress token) and whether its client can be asked. They differ only in RunWays.
import type { RequestId, Server, ServerContext } from '@modelcontextprotocol/server';
import { isModernRequest, requestCapabilities } from './requestEnvelope';
import type { RunChannel } from './shared';

/** Where a run's progress and log messages go. */
export type RunReports = Pick<RunChannel, 'notify' | 'log'>;

/** What differs between the ways a run talks back. */
export interface RunWays extends Pick<RunChannel, 'signal' | 'awaitingInput' | 'nobodyWaits'> {
  reports: RunReports;
  /** How its questions reach the person. */
  ask: RunChannel['elicit'];
}

/** The channel of a run serving the tools/call `ctx` that came to `server`. */
export function runChannel(server: Server, ctx: ServerContext, ways: RunWays): RunChannel {
  const { reports, ask, ...rest } = ways;
  const capabilities = isModernRequest(ctx) ? requestCapabilities(ctx) : server.getClientCapabilities();
  return { _meta: ctx.mcpReq._meta, canAsk: Boolean(capabilities?.elicitation), ...reports, elicit: ask, ...rest };
}

/** The channel of a plain call: everything on the call's own request, which its signal cancels. */
export function plainChannel(server: Server, ctx: ServerContext): RunChannel {
  return runChannel(server, ctx, {
    signal: ctx.mcpReq.signal,
    reports: reportsOnRequest(() => ctx),
    ask: askByElicitation(server, ctx.mcpReq.id),
  });
}

/** Reports on the request `open()` gives (over HTTP they travel on its stream); dropped while none is open. */
export function reportsOnRequest(open: () => ServerContext | undefined): RunReports {
  return {
    notify: async (notification) => open()?.mcpReq.notify(notification),
    log: async (level, data, logger) => open()?.mcpReq.log(level, data, logger),
  };
}

/** Reports on the connection, tied to no request: a 2025 task's, whose call has been answered. */
export function reportsOnConnection(server: Server, sessionId: string | undefined): RunReports {
  return {
    notify: (notification) => server.notification(notification),
    log: (level, data, logger) => server.sendLoggingMessage({ level, logger, data }, sessionId),
  };
}

/** Questions as elicitation requests to the client, tied to the request `related` while it is open. */
export function askByElicitation(server: Server, related?: RequestId): RunChannel['elicit'] {
  return (form, options) =>
    server.elicitInput(form, related === undefined ? options : { ...options, relatedRequestId: related });
}
