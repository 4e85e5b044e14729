// Where the SDK's McpServer is adjusted: its tools/call handler answers an unknown tool (or a task asked of a tool
// that cannot be one) as the spec asks, a task-capable tool called without a task answers directly, its
// tools/list drops what says nothing, and incoming requests skip a costly guess at what they are. The SDK keeps
// these in private members with no public hook around them, so they are wrapped in place; `createMcpServer` fails
// loudly if the SDK moves them.
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCRequest,
  type ListToolsResult,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolExtra } from './shared';
import type { TaskCapableHandler } from './toolTasks';

type RequestHandler = (request: JSONRPCRequest, extra: ToolExtra) => Promise<unknown>;

function wrapSdkHandler(server: McpServer, method: string, wrap: (inner: RequestHandler) => RequestHandler): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, RequestHandler> })._requestHandlers;
  const inner = handlers?.get(method);
  if (!handlers || !inner)
    throw new Error(`the MCP SDK no longer keeps its ${method} handler where sdkHandlers.ts expects it`);
  handlers.set(method, wrap(inner));
}

/**
 * A call of a tool this server does not offer gets JSON-RPC error -32602 (spec, server/tools, "Error Handling":
 * unknown tools are protocol errors); the SDK would turn it into a tool result. A call with `task` of a tool that
 * does not run as a task gets -32601 (spec, basic/utilities/tasks, "Tool-Level Negotiation"); the SDK would answer
 * with a plain result, which the client refuses as a task. Bad arguments of a known tool stay tool results, as the
 * spec asks, so a model can read them and try again.
 */
export function refuseCallsNotOffered(server: McpServer, offered: (name: string) => RegisteredTool | undefined): void {
  wrapSdkHandler(server, 'tools/call', (callTool) => (request, extra) => {
    const params = request.params as { name?: unknown; task?: unknown } | undefined;
    const name = params?.name;
    if (typeof name === 'string') {
      const tool = offered(name);
      if (!tool) throw codedError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      if (params?.task !== undefined && (tool.execution?.taskSupport ?? 'forbidden') === 'forbidden') {
        throw codedError(ErrorCode.MethodNotFound, `${name} does not run as a task: call it without "task"`);
      }
    }
    return callTool(request, extra);
  });
}

/** The members of the SDK's McpServer that its tools/call handler uses for a task-capable tool called without a task. */
interface ToolCallInternals {
  handleAutomaticTaskPolling(tool: RegisteredTool, request: CallToolRequest, extra: ToolExtra): Promise<CallToolResult>;
  validateToolInput(tool: RegisteredTool, args: unknown, name: string): Promise<unknown>;
}

/**
 * A tool that may run as a task (`execution.taskSupport: 'optional'`), called without `task`, answers as any tool
 * does: arguments checked, the tool's plain call run, errors as tool results. The SDK would instead make a task of
 * the call and poll it every pollInterval until it ends — a second added to every call, a task in tasks/list the
 * client never asked for. So a client without tasks sees exactly what it saw before the tool could be a task.
 * The result is not checked against the output schema on the way out: run_python builds it from the engine's typed
 * result, the check took a twentieth of a warm call, and clients check it on arrival (the SDK's client does, against
 * the schema it listed; the MCP suite's clients list the tools first, so every result in it is checked).
 */
export function answerPlainCallsDirectly(server: McpServer): void {
  const internals = server as unknown as ToolCallInternals;
  if (typeof internals.handleAutomaticTaskPolling !== 'function' || typeof internals.validateToolInput !== 'function') {
    throw new Error(
      'the MCP SDK no longer handles task-capable tools called without a task where sdkHandlers.ts expects it',
    );
  }
  internals.handleAutomaticTaskPolling = async (tool, request, extra) => {
    const { name } = request.params;
    const callWithoutTask = (tool.handler as Partial<TaskCapableHandler<never>>).callWithoutTask;
    if (!callWithoutTask) throw new Error(`${name} has no call without a task`);
    const args = await internals.validateToolInput(tool, request.params.arguments, name);
    return callWithoutTask(args as never, extra);
  };
}

/**
 * tools/list in the JSON Schema every model provider takes (a list of types as anyOf), and without the bytes that
 * carry no meaning, since the list is read into a model's context: `$schema`
 * (the schemas use only keywords that mean the same in draft-07 and in 2020-12, MCP's default dialect),
 * keywords set to what JSON Schema assumes anyway (`additionalProperties: true` or `{}`, `items: {}`), and
 * `execution: {taskSupport: "forbidden"}` (the default when absent).
 */
export function compactToolList(server: McpServer): void {
  wrapSdkHandler(server, 'tools/list', (listTools) => async (request, extra) => {
    const list = (await listTools(request, extra)) as ListToolsResult;
    return {
      ...list,
      tools: list.tools.map(({ execution, inputSchema, outputSchema, ...tool }) => ({
        ...tool,
        // The SDK drops arguments a tool does not declare rather than refusing them: no `additionalProperties: false`.
        inputSchema: withoutDefaults({ ...inputSchema, additionalProperties: undefined }),
        ...(outputSchema ? { outputSchema: withoutDefaults(outputSchema) } : {}),
        ...(execution && execution.taskSupport !== 'forbidden' ? { execution } : {}),
      })),
    };
  });
}

/** Keywords whose values are data (names, values), not schemas: left as they are. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'required', 'type', 'pattern']);

function withoutDefaults<T extends object>(schema: T): T {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (
      value === undefined ||
      key === '$schema' ||
      (key === 'additionalProperties' && (value === true || isEmptyObject(value))) ||
      (key === 'items' && isEmptyObject(value))
    )
      continue;
    // A list of types (what the SDK makes of a union of primitives) is said as anyOf, which every model provider
    // takes; Gemini's function declarations refuse a list (test/support/providerSchemaRules.ts).
    if (key === 'type' && Array.isArray(value)) kept.anyOf = value.map((type: unknown) => ({ type }));
    else if (DATA_KEYWORDS.has(key) || typeof value !== 'object' || value === null) kept[key] = value;
    // Under `properties` the keys are names, which may be anything: only the schemas under them are compacted.
    else if (key === 'properties')
      kept[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, withoutDefaults(sub as object)]),
      );
    else kept[key] = Array.isArray(value) ? value.map((sub: object) => withoutDefaults(sub)) : withoutDefaults(value);
  }
  return kept as T;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/**
 * Errors as JSON-RPC means them, for every method. A request whose params do not fit its method's schema
 * (`tools/call` without a name, `logging/setLevel` with an unknown level, `tasks/get` with a numeric id) gets
 * -32602 with a short message; the SDK would answer -32603 with the whole zod dump. Only the check of the params
 * is caught: the SDK runs it before the handler, synchronously, so an error the handler raises keeps its code.
 * An error the SDK raises as an McpError loses the "MCP error -32602: " its message starts with, which the
 * client's SDK adds again on its side.
 */
export function answerExactErrors(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, RequestHandler> })._requestHandlers;
  if (!handlers) throw new Error('the MCP SDK no longer keeps its request handlers where sdkHandlers.ts expects them');
  const exact =
    (inner: RequestHandler): RequestHandler =>
    (request, extra) => {
      let answer: Promise<unknown>;
      try {
        answer = inner(request, extra);
      } catch (error) {
        const problems = paramsProblems(error);
        if (problems === undefined) throw error;
        throw codedError(ErrorCode.InvalidParams, `Invalid params for ${request.method}: ${problems}`);
      }
      return answer.catch((error: unknown) => {
        throw withoutSdkPrefix(error);
      });
    };
  for (const [method, handler] of handlers) handlers.set(method, exact(handler));
  // Handlers set later (the SDK adds tools/list and tools/call with the first tool) are made exact too.
  const set = handlers.set.bind(handlers);
  handlers.set = (method, handler) => set(method, exact(handler));
}

/**
 * tasks/result of a cancelled task says so with -32602, the code the spec gives a task that can no longer do what
 * was asked; the SDK would answer -32603 "has no result stored".
 */
export function explainCancelledTaskResults(
  server: McpServer,
  tasks: { getTask(taskId: string): Promise<{ status: string; statusMessage?: string } | null> },
): void {
  wrapSdkHandler(server, 'tasks/result', (taskResult) => async (request, extra) => {
    try {
      return await taskResult(request, extra);
    } catch (error) {
      const taskId = (request.params as { taskId?: unknown } | undefined)?.taskId;
      const task = typeof taskId === 'string' ? await tasks.getTask(taskId).catch(() => null) : null;
      if (task?.status !== 'cancelled') throw error;
      const why = task.statusMessage ? ` (${task.statusMessage.replace(/\.$/, '')})` : '';
      throw codedError(ErrorCode.InvalidParams, `Task ${taskId} was cancelled${why}: it has no result`);
    }
  });
}

/** A plain error with a code: McpError would prefix "MCP error -32602: " to the message on the wire. */
function codedError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function withoutSdkPrefix(error: unknown): unknown {
  if (!(error instanceof McpError)) return error;
  const prefix = `MCP error ${error.code}: `;
  return error.message.startsWith(prefix)
    ? Object.assign(codedError(error.code, error.message.slice(prefix.length)), { data: error.data })
    : error;
}

/** `params.name: expected string, received undefined` for a zod error, at most three of them; else undefined. */
function paramsProblems(error: unknown): string | undefined {
  const issues = (error as { name?: unknown; issues?: unknown } | null)?.issues;
  // zod 4's core error is named $ZodError, its classic one ZodError.
  if (!(error instanceof Error) || !/^\$?ZodError$/.test(error.name) || !Array.isArray(issues)) return undefined;
  const described = (issues as { path?: unknown[]; message?: string }[]).slice(0, 3).map((issue) => {
    const where = (issue.path ?? []).map(String).join('.');
    return where ? `${where}: ${issue.message ?? 'invalid'}` : (issue.message ?? 'invalid');
  });
  return described.join('; ') + (issues.length > 3 ? ` (and ${issues.length - 3} more)` : '');
}

/** The members of the SDK's Server (a Protocol) that take a message once it is known to be a request. */
interface RequestDispatchInternals {
  connect(transport: Transport): Promise<void>;
  _onrequest(request: JSONRPCRequest, extra?: MessageExtraInfo): void;
}

/**
 * Incoming requests go straight to the SDK's request dispatch. The SDK tells a request from a response by trying
 * the two response schemas on it first: two failed zod parses per request, each building a ZodError with a stack
 * trace that nobody reads, about 80 µs of a warm run_python's time outside the engine. Both our transports have
 * checked every message against the SDK's JSONRPCMessageSchema already (stdio: jsonRpcInput.ts; HTTP: the SDK's
 * transport), whose branches are strict, so a message with `method` and `id` is a request; the handler of its
 * method still checks its params. Anything else (notifications, responses) takes the SDK's way.
 */
export function dispatchRequestsDirectly(server: McpServer): void {
  const protocol = server.server as unknown as RequestDispatchInternals;
  if (typeof protocol._onrequest !== 'function' || typeof protocol.connect !== 'function') {
    throw new Error('the MCP SDK no longer dispatches requests where sdkHandlers.ts expects it');
  }
  const connect = protocol.connect.bind(protocol);
  protocol.connect = async (transport) => {
    await connect(transport);
    // Set by the SDK's connect; no transport of ours sets one of its own before, which the SDK would also call.
    const sdkOnMessage = transport.onmessage;
    if (!sdkOnMessage) return;
    transport.onmessage = (message, extra) => {
      if ('method' in message && 'id' in message) protocol._onrequest(message, extra);
      else sdkOnMessage(message, extra);
    };
  };
}
