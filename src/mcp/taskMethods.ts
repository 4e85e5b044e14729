// The 2025-11-25 tasks utility's methods (tasks/get, tasks/result, tasks/list, tasks/cancel) over one connection's
// RunTaskStore. The SDK keeps their wire vocabulary but no longer serves them, so they are registered as the SDK
// registers any method outside its typed set: with their params' schema. A 2026-07-28 connection never reaches
// them (that revision has no tasks/* methods; its tasks are an extension).
import { ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, type Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { TaskRequestError, type RunTaskStore } from './runTaskStore';

const byId = { params: z.looseObject({ taskId: z.string() }), result: z.looseObject({}) };
const listing = { params: z.looseObject({ cursor: z.string().optional() }).optional(), result: z.looseObject({}) };

export function serveTaskMethods(server: Server, store: RunTaskStore): void {
  server.registerCapabilities({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
  server.setRequestHandler('tasks/get', byId, ({ taskId }) =>
    answer(() => ({ ...known(store.getTask(taskId), taskId) })),
  );
  server.setRequestHandler('tasks/result', byId, ({ taskId }, ctx) =>
    answer(async () => {
      const { task, result } = await store.resultOf(taskId, ctx.mcpReq.signal);
      if (!result) {
        // The code the spec gives a task that can no longer do what was asked.
        const why = task.statusMessage ? ` (${task.statusMessage.replace(/\.$/, '')})` : '';
        throw new TaskRequestError(`Task ${taskId} was ${task.status}${why}: it has no result`);
      }
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
    }),
  );
  server.setRequestHandler('tasks/list', listing, (params) => answer(() => store.listTasks(params?.cursor)));
  server.setRequestHandler('tasks/cancel', byId, ({ taskId }) => answer(() => store.cancel(taskId)));
}

function known<T>(task: T | undefined, taskId: string): T {
  if (!task) throw new TaskRequestError(`Task not found: ${taskId}`);
  return task;
}

/** The store's complaints about the request are -32602, as the spec asks for an unknown or unfit task. */
async function answer<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TaskRequestError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    throw error;
  }
}
