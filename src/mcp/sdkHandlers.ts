// Two places where the SDK's McpServer is adjusted: its tools/call handler answers an unknown tool as the
// spec asks, and its tools/list drops what says nothing. The SDK keeps its handlers in a private map with no
// public hook around them, so they are wrapped in place; `createMcpServer` fails loudly if the SDK moves them.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, type JSONRPCRequest, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolExtra } from './shared';

type RequestHandler = (request: JSONRPCRequest, extra: ToolExtra) => Promise<unknown>;

function wrapSdkHandler(server: McpServer, method: string, wrap: (inner: RequestHandler) => RequestHandler): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, RequestHandler> })._requestHandlers;
  const inner = handlers?.get(method);
  if (!handlers || !inner) throw new Error(`the MCP SDK no longer keeps its ${method} handler where sdkHandlers.ts expects it`);
  handlers.set(method, wrap(inner));
}

/**
 * A call of a tool this server does not offer gets JSON-RPC error -32602 (spec, server/tools, "Error Handling":
 * unknown tools are protocol errors); the SDK would turn it into a tool result. Bad arguments of a known tool
 * stay tool results, as the spec asks, so a model can read them and try again.
 */
export function refuseUnknownTools(server: McpServer, offers: (name: string) => boolean): void {
  wrapSdkHandler(server, 'tools/call', (callTool) => (request, extra) => {
    const name = (request.params as { name?: unknown } | undefined)?.name;
    // A plain error with a code: McpError would prefix "MCP error -32602: " to the message on the wire.
    if (typeof name === 'string' && !offers(name)) throw Object.assign(new Error(`Unknown tool: ${name}`), { code: ErrorCode.InvalidParams });
    return callTool(request, extra);
  });
}

/**
 * tools/list without the bytes that carry no meaning, since the list is read into a model's context: `$schema`
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
    if (value === undefined || key === '$schema' || (key === 'additionalProperties' && (value === true || isEmptyObject(value))) || (key === 'items' && isEmptyObject(value))) continue;
    if (DATA_KEYWORDS.has(key) || typeof value !== 'object' || value === null) kept[key] = value;
    // Under `properties` the keys are names, which may be anything: only the schemas under them are compacted.
    else if (key === 'properties') kept[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutDefaults(sub as object)]));
    else kept[key] = Array.isArray(value) ? value.map((sub: object) => withoutDefaults(sub)) : withoutDefaults(value);
  }
  return kept as T;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
