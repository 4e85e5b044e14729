// A tool that may run as an MCP task (the 2025-11-25 tasks utility, which the SDK has under experimental/tasks).
// Called plainly it runs now and answers the call, as any tool does. Called with `task`, the call is answered at
// once with a task; the run goes on, the client polls tasks/get and fetches the result with tasks/result whenever
// it likes, so no request has to stay open as long as the run.
import type {
  CreateTaskRequestHandlerExtra,
  TaskRequestHandlerExtra,
  ToolTaskHandler,
} from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ShapeOutput, ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestTaskStore } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorText } from '../engine/index';
import type { RunTaskStore } from './runTaskStore';
import type { RunChannel } from './shared';

/** How often a client should ask tasks/get; runs take seconds to an hour. */
const POLL_INTERVAL_MS = 1000;
/** How long a task and its result are kept when the client asks for no ttl. */
const DEFAULT_TTL_MS = 60 * 60_000;
const MAX_TTL_MS = 24 * 60 * 60_000;
/** A task lives at least this long past its run's time limit, so a run that ends in time always has its result kept. */
const TTL_PAST_RUN_LIMIT_MS = 60_000;

export type ToolCall<Shape extends ZodRawShapeCompat> = (
  args: ShapeOutput<Shape>,
  channel: RunChannel,
) => Promise<CallToolResult>;

export interface TaskCapableHandler<Shape extends ZodRawShapeCompat> extends ToolTaskHandler<Shape> {
  /** The call without `task`: the SDK would poll a task for it, sdkHandlers.answerPlainCallsDirectly runs this instead. */
  callWithoutTask: ToolCall<Shape>;
}

export interface ToolTaskOptions<Shape extends ZodRawShapeCompat> {
  /** Where a task's progress and log go once the call that made it has been answered. */
  server: Server;
  store: RunTaskStore;
  /** The run's time limit in seconds (0: none), which the task must outlive. */
  runLimitS: (args: ShapeOutput<Shape>) => number;
}

export function runsAsTask<Shape extends ZodRawShapeCompat>(
  call: ToolCall<Shape>,
  options: ToolTaskOptions<Shape>,
): TaskCapableHandler<Shape> {
  const { server, store } = options;
  const handler = {
    callWithoutTask: call,
    createTask: async (args: ShapeOutput<Shape>, extra: CreateTaskRequestHandlerExtra) => {
      const task = await extra.taskStore.createTask({
        ttl: taskTtlMs(extra.taskRequestedTtl, options.runLimitS(args)),
        pollInterval: POLL_INTERVAL_MS,
      });
      const signal = store.track(task);
      // The request is answered now: the run's progress (under the request's progress token, which the spec keeps
      // valid for the task's life) and its log messages go to the connection instead.
      const channel: RunChannel = {
        _meta: extra._meta,
        signal,
        sendNotification: (notification) => server.notification(notification),
        // A cancelled or expired task keeps its status: the update is refused and nothing is lost.
        awaitingInput: (waiting) =>
          extra.taskStore.updateTaskStatus(task.taskId, waiting ? 'input_required' : 'working').catch(() => undefined),
      };
      void settle(task.taskId, call(args, channel), signal, extra.taskStore, store);
      return { task };
    },
    // This SDK answers tasks/get and tasks/result from the store itself; the interface still asks for these.
    getTask: (_args: unknown, extra: TaskRequestHandlerExtra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args: unknown, extra: TaskRequestHandlerExtra) =>
      (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
  };
  // The SDK's handler types are conditional on the schema, which TypeScript cannot follow for a generic one.
  return handler as unknown as TaskCapableHandler<Shape>;
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
  taskStore: RequestTaskStore,
  store: RunTaskStore,
): Promise<void> {
  let result: CallToolResult;
  try {
    result = await running;
  } catch (error) {
    // As the SDK answers a tool that throws.
    result = { content: [{ type: 'text', text: errorText(error) }], isError: true };
  } finally {
    store.untrack(taskId);
  }
  // Cancelled: the task says so already. Expired or disconnected: nobody is left to collect it.
  if (signal.aborted) return;
  // The spec counts a tool result with isError as a failed task; tasks/result still gives the result, which says why.
  await taskStore.storeTaskResult(taskId, result.isError ? 'failed' : 'completed', result).catch(() => undefined);
}
