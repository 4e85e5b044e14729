// A tool that may run as an MCP task (the 2025-11-25 tasks utility). Called plainly it runs now and answers the
// call, as any tool does. Called with `task`, the call is answered at once with a task; the run goes on, the client
// polls tasks/get and fetches the result with tasks/result whenever it likes, so no request has to stay open as
// long as the run.
import type { CallToolResult, Server } from '@modelcontextprotocol/server';
import { errorText } from '../engine/index';
import { askByElicitation, reportsOnConnection, runChannel } from './runChannel';
import type { RunTaskStore } from './runTaskStore';
import type { RunChannel } from './shared';
import type { TaskCall } from './toolRegistry';

/** How often a client should ask tasks/get; runs take seconds to an hour. */
const POLL_INTERVAL_MS = 1000;
/** How long a task and its result are kept when the client asks for no ttl. */
const DEFAULT_TTL_MS = 60 * 60_000;
const MAX_TTL_MS = 24 * 60 * 60_000;
/** A task lives at least this long past its run's time limit, so a run that ends in time always has its result kept. */
const TTL_PAST_RUN_LIMIT_MS = 60_000;

export type ToolCall<Args> = (args: Args, channel: RunChannel) => Promise<CallToolResult>;

export interface ToolTaskOptions<Args> {
  /** Where a task's progress and log go once the call that made it has been answered. */
  server: Server;
  store: RunTaskStore;
  /** The run's time limit in seconds (0: none), which the task must outlive. */
  runLimitS: (args: Args) => number;
}

/** The call of `call` as a task: the task at once, the result in the store when the run ends. */
export function runsAsTask<Args>(call: ToolCall<Args>, options: ToolTaskOptions<Args>): TaskCall<Args> {
  const { server, store } = options;
  return async (args, request, ctx) => {
    const task = store.createTask({
      ttl: taskTtlMs(request.ttl, options.runLimitS(args)),
      pollInterval: POLL_INTERVAL_MS,
    });
    const signal = store.track(task);
    // The request is answered now: the run's progress (under the request's progress token, which the spec keeps
    // valid for the task's life), its log messages and its questions go to the connection instead.
    const channel = runChannel(server, ctx, {
      signal,
      reports: reportsOnConnection(server, ctx.sessionId),
      ask: askByElicitation(server),
      awaitingInput: async (waiting) => store.updateTaskStatus(task.taskId, waiting ? 'input_required' : 'working'),
    });
    void settle(task.taskId, call(args, channel), signal, store);
    return { task, content: [] };
  };
}

/** The ttl asked for, kept within bounds and past the run's time limit. */
export function taskTtlMs(requestedMs: number | undefined, runLimitS: number): number {
  const floor = runLimitS > 0 ? runLimitS * 1000 + TTL_PAST_RUN_LIMIT_MS : 0;
  return Math.min(MAX_TTL_MS, Math.max(requestedMs ?? DEFAULT_TTL_MS, floor));
}

/** Stores the run's result in its task, unless the task was cancelled, expired or its connection ended meanwhile. */
async function settle(
  taskId: string,
  running: Promise<CallToolResult>,
  signal: AbortSignal,
  store: RunTaskStore,
): Promise<void> {
  let result: CallToolResult;
  try {
    result = await running;
  } catch (error) {
    // As a tool that throws is answered.
    result = { content: [{ type: 'text', text: errorText(error) }], isError: true };
  } finally {
    store.untrack(taskId);
  }
  // Cancelled: the task says so already. Expired or disconnected: nobody is left to collect it.
  if (signal.aborted) return;
  // The spec counts a tool result with isError as a failed task; tasks/result still gives the result, which says why.
  store.storeTaskResult(taskId, result.isError ? 'failed' : 'completed', result);
}
