import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine } from '../engine/engine';
import { silentLogger, type Logger } from '../engine/types';
import { errorReply, MAX_MESSAGE_BYTES } from './jsonRpcInput';
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
  /** Bytes; requests with a larger body are refused (413). Default: MAX_MESSAGE_BYTES, as on stdio. */
  maxBodyBytes?: number;
}

const MCP_PATH = '/mcp';

/**
 * Streamable HTTP on 127.0.0.1 for the VS Code MCP client. Only loopback, only with the random bearer token,
 * and never for a browser: a request with a foreign Host (DNS rebinding) or any Origin is refused.
 */
export async function startLoopbackMcpServer(engine: Engine, options: LoopbackOptions = {}): Promise<LoopbackMcpServer> {
  const log = options.log ?? silentLogger;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_MESSAGE_BYTES;
  const token = randomBytes(32).toString('base64url');
  const expectedAuth = Buffer.from(`Bearer ${token}`);
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let port = 0;

  // -32000 is JSON-RPC's generic server error, which the SDK's own HTTP transport also answers refusals with.
  const refuse = (res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code: number = -32000) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(errorReply(code, message)));
  };
  // The rest of the body is never read, so the connection cannot carry another request: say so, then close it.
  const refuseTooLarge = (res: http.ServerResponse, declaredBytes?: number) => {
    const size = declaredBytes === undefined ? '' : ` ${declaredBytes} bytes,`;
    refuse(res, 413, `Invalid request: the body is${size} over the limit of ${maxBodyBytes} bytes`, { connection: 'close' }, ErrorCode.InvalidRequest);
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
    const declaredBytes = Number(req.headers['content-length'] ?? 0);
    if (declaredBytes > maxBodyBytes) return refuseTooLarge(res, declaredBytes);
    const bytes = await readBody(req, maxBodyBytes).catch((error: Error) => error);
    if (bytes instanceof Error) return refuse(res, 400, `Bad request: ${bytes.message}`);
    if (bytes === undefined) return refuseTooLarge(res);
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      return refuse(res, 400, 'Parse error: the body is not valid JSON', {}, ErrorCode.ParseError);
    }
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

/** The whole body, or undefined as soon as it passes `maxBytes` (what came so far is dropped, the rest never read). */
function readBody(req: http.IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        req.pause();
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
