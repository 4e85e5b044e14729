import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine } from '../engine/engine';
import { silentLogger, type Logger } from '../engine/types';
import { createMcpServer, type McpServerOptions } from './server';

export interface LoopbackMcpServer {
  /** http://127.0.0.1:PORT/mcp */
  readonly url: string;
  /** Send as `Authorization: Bearer <token>`. */
  readonly token: string;
  close(): Promise<void>;
}

export interface LoopbackOptions extends McpServerOptions {
  log?: Logger;
  /** Bytes; requests with a larger body are refused (413). */
  maxBodyBytes?: number;
}

const MCP_PATH = '/mcp';

/**
 * Streamable HTTP on 127.0.0.1 for the VS Code MCP client. Only loopback, only with the random bearer token,
 * and never for a browser: a request with a foreign Host (DNS rebinding) or any Origin is refused.
 */
export async function startLoopbackMcpServer(engine: Engine, options: LoopbackOptions = {}): Promise<LoopbackMcpServer> {
  const log = options.log ?? silentLogger;
  const maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const token = randomBytes(32).toString('base64url');
  const expectedAuth = Buffer.from(`Bearer ${token}`);
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let port = 0;

  const refuse = (res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
    if (!allowedHosts.includes(req.headers.host ?? '')) return refuse(res, 403, 'Forbidden: unexpected Host');
    if (req.headers.origin !== undefined) return refuse(res, 403, 'Forbidden: browser origins are not allowed');
    const auth = Buffer.from(req.headers.authorization ?? '');
    if (auth.length !== expectedAuth.length || !timingSafeEqual(auth, expectedAuth)) {
      return refuse(res, 401, 'Unauthorized: a valid bearer token is required', { 'www-authenticate': 'Bearer' });
    }
    if (new URL(req.url ?? '/', `http://${req.headers.host}`).pathname !== MCP_PATH) return refuse(res, 404, 'Not found');

    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (req.method !== 'POST') {
      if (!existing) return refuse(res, 400, 'Bad request: unknown or missing session');
      return existing.handleRequest(req, res);
    }
    const body = await readJsonBody(req, maxBodyBytes).catch((error: Error) => error);
    if (body instanceof Error) return refuse(res, body.message === 'too large' ? 413 : 400, `Bad request: ${body.message}`);
    if (existing) return existing.handleRequest(req, res, body);
    if (sessionId !== undefined || !isInitializeRequest(body)) return refuse(res, 400, 'Bad request: unknown or missing session');

    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await createMcpServer(engine, options).connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error(`MCP HTTP request failed: ${String(error)}`);
      if (!res.headersSent) refuse(res, 500, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  log.info(`MCP over HTTP on http://127.0.0.1:${port}${MCP_PATH}`);

  return {
    url: `http://127.0.0.1:${port}${MCP_PATH}`,
    token,
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close().catch(() => undefined)));
      transports.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readJsonBody(req: http.IncomingMessage, maxBytes: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new Error('too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new Error('the body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}
