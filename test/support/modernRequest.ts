// Hand-built 2026-07-28 requests to a handler made by createMcpHandler, served in process: what a 2026 client puts
// on the wire (the per-request envelope, the routing headers), for tests where the wire itself is the subject.
import type { McpHttpHandler } from '@modelcontextprotocol/server';

export const MODERN_REVISION = '2026-07-28';

export interface ModernRequestOptions {
  /** The client's capabilities, declared with the request. */
  capabilities: object;
  /** Extra `_meta` keys (a progress token). */
  meta?: Record<string, unknown>;
  clientName?: string;
}

/** One 2026 request as a client puts it on the wire: the per-request envelope in `_meta`, the routing headers. */
export function modernRequest(
  id: number,
  method: string,
  params: Record<string, unknown>,
  options: ModernRequestOptions,
): Request {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
    'io.modelcontextprotocol/clientCapabilities': options.capabilities,
    'io.modelcontextprotocol/clientInfo': { name: options.clientName ?? 'code-mode-tests', version: '1' },
    ...options.meta,
  };
  // The spec's routing header: the tool's name, or the task's id for tasks/*.
  const name = (params.name ?? params.taskId) as string | undefined;
  return new Request('http://in-process.test/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_REVISION,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }),
  });
}

/** Sends one request; the answer is the JSON-RPC response (from a JSON body, or the SSE stream's answer) and the HTTP status. */
export async function sendModern<T>(
  handler: McpHttpHandler,
  id: number,
  method: string,
  params: Record<string, unknown>,
  options: ModernRequestOptions,
): Promise<T & { status: number }> {
  const response = await handler.fetch(modernRequest(id, method, params, options));
  const text = await response.text();
  const json = text.trimStart().startsWith('{')
    ? text
    : text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
        .filter((data) => data.includes('"id"'))
        .at(-1)!;
  return { status: response.status, ...(JSON.parse(json) as T) };
}
