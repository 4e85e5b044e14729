// Talking to the Streamable HTTP server as clients do: the SDK client with the bearer token, and raw requests for
// what the SDK client would not send (no token, a browser Origin, a foreign Host, a stream dropped on purpose).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import * as http from 'node:http';
import { after, before } from 'node:test';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { startHttpMcpServer, type HttpMcpServer, type HttpMcpServerOptions } from '../../src/mcp/http';
import { testStorageDir } from './mcp';

export const initializeBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
});

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A raw POST, so headers can be set the way an attacker (or a browser) would; over `socketPath` when given. */
export function post(
  url: string,
  headers: Record<string, string>,
  body = initializeBody,
  socketPath?: string,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const options = {
      method: 'POST',
      socketPath,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    };
    const req = http.request(url, options, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The SDK client over HTTP with the token. `listening` settles once the server has accepted the stream the client
 * opens after initializing to hear from the server (its fetch is watched, not changed): from then on the server
 * knows the client is there.
 */
export async function connectHttp(
  url: string,
  token: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; listening: Promise<void> }> {
  const client = new Client({ name: 'http-test', version: '1' });
  let heard: () => void = () => undefined;
  const listening = new Promise<void>((resolve) => (heard = resolve));
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'GET' && response.ok) heard();
      return response;
    },
  });
  await client.connect(transport);
  return { client, transport, listening };
}

export interface SseEvent {
  id?: string;
  data: string;
}

/**
 * One SSE request of an existing MCP session (a POST with `body`, or a GET resuming after `lastEventId`): events
 * come to `onEvent` until it returns true, then the connection is dropped, as a client that goes away drops it.
 */
export function sseRequest(
  url: string,
  session: { token: string; sessionId: string },
  request: { body: string } | { lastEventId: string },
  onEvent: (event: SseEvent) => boolean,
): Promise<void> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${session.token}`,
    'mcp-session-id': session.sessionId,
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    accept: 'body' in request ? 'application/json, text/event-stream' : 'text/event-stream',
    ...('body' in request ? { 'content-type': 'application/json' } : { 'last-event-id': request.lastEventId }),
  };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'body' in request ? 'POST' : 'GET', headers }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode ?? 0}`));
      let buffered = '';
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const lines = buffered.slice(0, end).split('\n');
          buffered = buffered.slice(end + 2);
          const field = (name: string) =>
            lines
              .find((l) => l.startsWith(`${name}:`))
              ?.slice(name.length + 1)
              .trim();
          if (onEvent({ id: field('id'), data: field('data') ?? '' })) {
            req.destroy();
            resolve();
            return;
          }
        }
      });
      res.on('end', () => reject(new Error('the stream ended before the awaited event')));
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    if ('body' in request) req.end(request.body);
    else req.end();
  });
}

/** Polls `check` until it holds: the state the test waits for, never a fixed sleep. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * An engine on the workspace interpreter and the HTTP MCP server over it, for the suite (describe) this is called
 * in: made before its tests, closed after them.
 */
export function httpServerForSuite(options: HttpMcpServerOptions | ((engine: Engine) => HttpMcpServerOptions) = {}): {
  engine(): Engine;
  server(): HttpMcpServer;
} {
  let engine: Engine | undefined;
  let server: HttpMcpServer | undefined;
  before(async () => {
    engine = createEngine({ storageDir: testStorageDir, config: { defaultBackend: 'python' } });
    server = await startHttpMcpServer(engine, typeof options === 'function' ? options(engine) : options);
  });
  after(async () => {
    await server?.close();
    await engine?.dispose();
  });
  return { engine: () => engine!, server: () => server! };
}
