// The tasks methods of both revisions. 2025-11-25's tasks utility (tasks/get, tasks/result, tasks/list,
// tasks/cancel) over one connection's RunTaskStore; 2026-07-28's tasks extension (tasks/get, tasks/update,
// tasks/cancel) over the TaskExtension, which outlives the servers of single requests. The SDK keeps 2025's wire
// vocabulary but no longer serves it, so the methods are registered as the SDK registers any method outside its
// typed set: with their params' schema (the SDK lets 2026 requests reach the names the extension takes back).
import { ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, type Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { TaskRequestError, type RunTaskStore } from './runTaskStore';
import { isModernRequest } from './requestEnvelope';
import { TASKS_EXTENSION, type TaskExtension } from './taskExtension';

const byId = { params: z.looseObject({ taskId: z.string() }), result: z.looseObject({}) };
const listing = { params: z.looseObject({ cursor: z.string().optional() }).optional(), result: z.looseObject({}) };

export function serveTaskMethods(server: Server, store: RunTaskStore, extension?: TaskExtension): void {
  server.registerCapabilities({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
  if (extension) {
    server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    server.setRequestHandler('tasks/update', byId, ({ taskId }, ctx) => {
      if (isModernRequest(ctx)) return extension.update(taskId, ctx);
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
    });
  }
  server.setRequestHandler('tasks/get', byId, ({ taskId }, ctx) => {
    if (extension && isModernRequest(ctx)) return extension.get(taskId, ctx) as unknown as Record<string, unknown>;
    return answer(() => store.getTask(taskId));
  });
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
  server.setRequestHandler('tasks/cancel', byId, ({ taskId }, ctx) => {
    if (extension && isModernRequest(ctx)) return extension.cancel(taskId, ctx);
    return answer(() => store.cancel(taskId) as unknown as Record<string, unknown>);
  });
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
