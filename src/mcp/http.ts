import {
  isInitializeRequest,
  isLegacyRequest,
  ProtocolErrorCode,
  type JSONRPCMessage,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Engine, silentLogger, type Logger } from '../engine/index';
import { SharedEventBudget } from './eventStore';
import { bearerChallenge, NO_OAUTH, oauthAnswer } from './httpAuthAnswers';
import { classifyIncoming, errorReply, MAX_MESSAGE_BYTES, type JsonRpcErrorReply } from './jsonRpcInput';
import {
  DEFAULT_MAX_PREAUTH_CONNECTIONS,
  DEFAULT_PREAUTH_TIMEOUT_MS,
  guardConnections,
  serverTimeouts,
} from './httpConnections';
import { hostHeaders, hostInUrl } from './httpHosts';
import { HttpMcpSession, type HttpSessionOptions } from './httpSession';
import { DEFAULT_SESSION_IDLE_MINUTES } from './httpSessionIdle';
import { DEFAULT_MAX_HTTP_SESSIONS, HttpSessionTable } from './httpSessionTable';
import { sendWebResponse, webRequest } from './httpWebExchange';
import { SharedResultBudget } from './keptResults';
import { PausedCalls } from './pausedCalls';
import { createMcpServer, type McpServerOptions } from './server';
import { SessionHandles } from './sessionHandles';
import { TaskExtension } from './taskExtension';
import { watchToolList } from './toolListWatch';
import { createMcpHandlerClosingUnconnected } from './unconnectedServers';

export interface HttpMcpServer {
  /** http://HOST:PORT/mcp (http://localhost/mcp over a socket) */
  readonly url: string;
  /** The Unix domain socket or Windows pipe it listens on instead of a port, if it was given one. */
  readonly socketPath?: string;
  /** Send as `Authorization: Bearer <token>`. */
  readonly token: string;
  close(): Promise<void>;
}

export interface HttpMcpServerOptions extends McpServerOptions {
  log?: Logger;
  /** The address to listen on. Default 127.0.0.1; anything else is reachable from other machines. */
  host?: string;
  /** Default 0: a free port, which `url` names. */
  port?: number;
  /**
   * Listen on this Unix domain socket (or Windows named pipe) instead of a TCP port: nothing else on the machine
   * sees a port (nor offers to forward one), and the file's permissions bound who may connect. Clients send
   * `Host: localhost`.
   */
  socketPath?: string;
  /** The bearer token clients must send. Default: a random one, which `token` gives. */
  token?: string;
  /** Bytes; requests with a larger body are refused (413). Default: MAX_MESSAGE_BYTES, as on stdio. */
  maxBodyBytes?: number;
  /** Every client uses the engine's shared Python sessions. Default false: each MCP session has its own. */
  shareSessions?: boolean;
  /** An MCP session without a request for this long ends, and its Python sessions are freed. Default 30 minutes. */
  sessionIdleMs?: number;
  /**
   * MCP sessions live at once; a new one past it ends the least recently active idle one (httpSessionTable.ts),
   * or is refused (503) while every one is busy. Default DEFAULT_MAX_HTTP_SESSIONS.
   */
  maxHttpSessions?: number;
  /** A run whose response stream the client dropped is cancelled after this long unless it resumes. Default 30 s. */
  resumeGraceMs?: number;
  /**
   * Connections open at once that have not yet sent a request with the token; past it the oldest is closed.
   * Default DEFAULT_MAX_PREAUTH_CONNECTIONS.
   */
  maxPreAuthConnections?: number;
  /** A connection without a request with the token this long after it opened is closed. Default DEFAULT_PREAUTH_TIMEOUT_MS. */
  preAuthTimeoutMs?: number;
  /** Priming events carry their id only, for VS Code (see primingEvents.ts). Default false. */
  idOnlyPrimingEvents?: boolean;
}

const MCP_PATH = '/mcp';
const DEFAULT_RESUME_GRACE_MS = 30_000;

/**
 * Streamable HTTP with a bearer token, never for a browser: a request with a foreign Host (DNS rebinding) or any
 * Origin is refused. Connections that have not presented the token are few and short-lived (httpConnections.ts),
 * so a flood of them cannot use up the descriptors the clients with the token need. Each MCP session is an
 * HttpMcpSession: its own Python sessions unless shared, replayable events, dropped streams cancelled after a
 * grace period, and an end when idle.
 */
export async function startHttpMcpServer(engine: Engine, options: HttpMcpServerOptions = {}): Promise<HttpMcpServer> {
  const log = options.log ?? silentLogger;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_MESSAGE_BYTES;
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(32).toString('base64url');
  const expectedAuth = Buffer.from(`Bearer ${token}`);
  const maxPreAuthConnections = options.maxPreAuthConnections ?? DEFAULT_MAX_PREAUTH_CONNECTIONS;
  const preAuthTimeoutMs = options.preAuthTimeoutMs ?? DEFAULT_PREAUTH_TIMEOUT_MS;
  if (!(Number.isInteger(maxPreAuthConnections) && maxPreAuthConnections >= 1))
    throw new Error('maxPreAuthConnections must be a whole number of at least 1');
  if (!(preAuthTimeoutMs > 0)) throw new Error('preAuthTimeoutMs must be a positive number of milliseconds');
  const sessions = new HttpSessionTable<HttpMcpSession>(options.maxHttpSessions ?? DEFAULT_MAX_HTTP_SESSIONS, log);
  const sessionOptions: HttpSessionOptions = {
    ...options,
    log,
    shareSessions: options.shareSessions ?? false,
    idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MINUTES * 60_000,
    resumeGraceMs: options.resumeGraceMs ?? DEFAULT_RESUME_GRACE_MS,
    eventBudget: new SharedEventBudget(),
    taskResultBudget: new SharedResultBudget(),
  };
  // 2026-07-28 has no MCP sessions: a client keeps its Python sessions by passing back the handle a result gave it.
  const handles = sessionOptions.shareSessions
    ? undefined
    : new SessionHandles(engine, { idleMs: sessionOptions.idleMs, maxHandles: sessions.max });
  // A 2026 client's paused runs and tasks outlive the server of the request that started them: one of each here.
  const pausedCalls = new PausedCalls();
  const taskExtension = new TaskExtension();
  const modern: McpHttpHandler = createMcpHandlerClosingUnconnected(
    () =>
      createMcpServer(engine, {
        ...sessionOptions,
        sessionHandles: handles,
        pausedCalls,
        taskExtension,
      }),
    {
      legacy: 'reject',
      maxRequestBodySize: maxBodyBytes,
      onerror: (error) => log.info(`MCP HTTP (2026-07-28): ${error.message}`),
    },
  );
  // A 2026 client hears of a changed tool list on its subscriptions/listen stream, which the handler serves: the
  // servers it builds per request live too briefly to notice. Legacy sessions are told by their own server.
  const toolList = watchToolList(engine, options.bridge, () => modern.notify.toolsChanged());
  let allowedHosts: string[] = [];
  /** Every session was busy at the last initialize, which was refused. */
  let refusing = false;

  // -32000 is JSON-RPC's generic server error, which the SDK's own HTTP transport also answers refusals with.
  const answer = (
    res: http.ServerResponse,
    status: number,
    reply: JsonRpcErrorReply,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(reply));
  };
  const refuse = (
    res: http.ServerResponse,
    status: number,
    message: string,
    headers: Record<string, string> = {},
    code: number = -32000,
  ) => answer(res, status, errorReply(code, message), headers);
  // The rest of the body is never read, so the connection cannot carry another request: say so, then close it.
  const refuseTooLarge = (res: http.ServerResponse, declaredBytes?: number) => {
    const size = declaredBytes === undefined ? '' : ` ${declaredBytes} bytes,`;
    refuse(
      res,
      413,
      `Invalid request: the body is${size} over the limit of ${maxBodyBytes} bytes`,
      { connection: 'close' },
      ProtocolErrorCode.InvalidRequest,
    );
  };
  // A session id the server does not know (ended, or never given) gets 404, which tells the client to start anew.
  const refuseSession = (res: http.ServerResponse, sessionId: unknown) => {
    if (sessionId === undefined) return refuse(res, 400, 'Bad request: missing session');
    const why = typeof sessionId === 'string' ? sessions.whyEnded(sessionId) : undefined;
    const lost = sessionOptions.shareSessions ? '' : ', and its Python sessions with their variables ended with it';
    const message = why
      ? `Session expired: ${why}${lost}; initialize a new one`
      : 'Session not found: it ended or never existed; initialize a new one';
    refuse(res, 404, message, {}, -32001);
  };

  /** The POST's one JSON-RPC message, or undefined once the body has been refused (and answered). */
  const readMessage = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<JSONRPCMessage | undefined> => {
    const declaredBytes = Number(req.headers['content-length'] ?? 0);
    if (declaredBytes > maxBodyBytes) return void refuseTooLarge(res, declaredBytes);
    const bytes = await readBody(req, maxBodyBytes).catch((error: Error) => error);
    if (bytes instanceof Error) return void refuse(res, 400, `Bad request: ${bytes.message}`);
    if (bytes === undefined) return void refuseTooLarge(res);
    // Judged as stdio judges a line, so both transports (and both protocol revisions) answer the same broken
    // message the same way.
    const incoming = classifyIncoming(bytes.toString('utf8'));
    if (incoming.kind === 'drop')
      return void refuse(res, 400, `Invalid request: ${incoming.problem}`, {}, ProtocolErrorCode.InvalidRequest);
    if (incoming.kind === 'answer') return void answer(res, 400, incoming.reply);
    return incoming.message;
  };

  /** A 2025-era request: it belongs to an MCP session, or starts one with its initialize. */
  const serveLegacy = async (request: Request, res: http.ServerResponse, body?: JSONRPCMessage) => {
    const sessionId = request.headers.get('mcp-session-id') ?? undefined;
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (existing) return existing.handle(request, res, body);
    if (sessionId !== undefined || !isInitializeRequest(body)) return refuseSession(res, sessionId);
    if (!sessions.makeRoom()) {
      // Said once until one is admitted again: clients retrying would fill the log.
      if (!refusing) log.warn(`MCP HTTP: new sessions are refused: all ${sessions.max} MCP sessions are busy`);
      refusing = true;
      return refuse(
        res,
        503,
        `Service unavailable: all ${sessions.max} MCP sessions this server keeps are busy (a request or run under way in each); try again once one finishes`,
        { 'retry-after': '1' },
      );
    }

    refusing = false;
    // In the table before anything is awaited, so initializes that come at once cannot pass the cap together.
    const session = new HttpMcpSession(
      engine,
      sessionOptions,
      (started) => sessions.named(started),
      (ended, why) => sessions.ended(ended, why),
    );
    sessions.add(session);
    try {
      await session.connect();
      await session.handle(request, res, body);
    } finally {
      // An initialize the SDK refused leaves a session without an id, which no request can reach.
      if (session.id === undefined) {
        sessions.ended(session);
        void session.close();
      }
    }
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!allowedHosts.includes(req.headers.host ?? '')) return refuse(res, 403, 'Forbidden: unexpected Host');
    if (req.headers.origin !== undefined) return refuse(res, 403, 'Forbidden: browser origins are not allowed');
    const host = req.headers.host ?? '';
    const { pathname } = new URL(req.url ?? '/', `http://${host}`);
    const oauth = oauthAnswer(req.method ?? 'GET', pathname, host, MCP_PATH);
    if (oauth) {
      res.writeHead(oauth.status, oauth.headers);
      return res.end(oauth.body);
    }
    const auth = Buffer.from(req.headers.authorization ?? '');
    if (auth.length !== expectedAuth.length || !timingSafeEqual(auth, expectedAuth)) {
      return refuse(res, 401, `Unauthorized: ${NO_OAUTH}`, {
        'www-authenticate': bearerChallenge(host, MCP_PATH, req.headers.authorization !== undefined),
      });
    }
    guard.authenticated(req.socket);
    if (pathname !== MCP_PATH) return refuse(res, 404, 'Not found');

    const request = webRequest(req, res);
    let body: JSONRPCMessage | undefined;
    if (req.method === 'POST') {
      body = await readMessage(req, res);
      if (body === undefined) return;
    }
    // A 2026-07-28 request carries its protocol revision in its own _meta; anything without it is 2025-era.
    if (await isLegacyRequest(request, body, { maxRequestBodySize: maxBodyBytes }))
      return serveLegacy(request, res, body);
    return sendWebResponse(await modern.fetch(request, { parsedBody: body }), res);
  };

  const server = http.createServer(serverTimeouts, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error(`MCP HTTP request failed: ${String(error)}`);
      if (!res.headersSent) refuse(res, 500, 'Internal error');
      else res.end();
    });
  });
  const guard = guardConnections(server, { maxConnections: maxPreAuthConnections, timeoutMs: preAuthTimeoutMs }, log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (options.socketPath !== undefined) server.listen(options.socketPath, () => resolve());
    else server.listen(options.port ?? 0, host, () => resolve());
  });
  let url: string;
  if (options.socketPath !== undefined) {
    allowedHosts = ['localhost'];
    url = `http://localhost${MCP_PATH}`;
    log.info(`MCP over HTTP on the socket ${options.socketPath}`);
  } else {
    const port = (server.address() as AddressInfo).port;
    allowedHosts = hostHeaders(host, port);
    url = `http://${hostInUrl(host)}:${port}${MCP_PATH}`;
    log.info(`MCP over HTTP on ${url}`);
  }

  return {
    url,
    ...(options.socketPath !== undefined ? { socketPath: options.socketPath } : {}),
    token,
    close: async () => {
      toolList.dispose();
      pausedCalls.close();
      taskExtension.close();
      await Promise.all([
        ...sessions.all().map((s) => s.close().catch(() => undefined)),
        modern.close().catch(() => undefined),
      ]);
      await handles?.close();
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
