// Connections of the HTTP server before they authenticate. Every open connection holds a file descriptor, and
// anyone who can reach the port can open one without a token: left alone, enough idle ones use up the process's
// descriptors and the server can no longer accept the client that has the token. So a connection that has not
// yet presented a valid token is bounded twice: it has a short time to do so, and only so many may wait at once
// (past that the oldest is closed). One that presented the token once is the client's, and is not bounded here.
import * as http from 'node:http';
import type * as net from 'node:net';
import type { Logger } from '../engine/index';
import { errorReply } from './jsonRpcInput';

/** Connections that may be open at once without having presented a valid token. */
export const DEFAULT_MAX_PREAUTH_CONNECTIONS = 64;
/** How long a new connection has to send a request with a valid token. */
export const DEFAULT_PREAUTH_TIMEOUT_MS = 10_000;
/** Node's headersTimeout: every request's headers must be in within this long of its first byte. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** Node's requestTimeout: every request must be in whole (headers and body) within this long. */
export const REQUEST_TIMEOUT_MS = 60_000;
/** How often Node checks those two (its default, 30 s, would let a request overstay them by that much). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** The createServer options that set Node's own timeouts. */
export const serverTimeouts: http.ServerOptions = {
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
};

export interface PreAuthLimits {
  maxConnections: number;
  timeoutMs: number;
}

export interface ConnectionGuard {
  /** The connection carried a request with a valid token: it is no longer bounded here. */
  authenticated(socket: net.Socket): void;
}

/** An HTTP reply written straight to the connection (no request of it is being answered): a JSON-RPC error, then close. */
function rawReply(status: number, message: string): string {
  const body = JSON.stringify(errorReply(-32000, message));
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

/** Closing connections for the cap is logged at most this often (a flood would fill the log otherwise). */
const REPORT_EVERY_MS = 60_000;

/**
 * Bounds `server`'s connections that have not authenticated, and answers what is not HTTP (or comes too slowly)
 * with a JSON-RPC error rather than Node's bare status line.
 */
export function guardConnections(server: http.Server, limits: PreAuthLimits, log: Logger): ConnectionGuard {
  /** Unauthenticated connections, oldest first (a Map keeps insertion order), each with its deadline. */
  const waiting = new Map<net.Socket, NodeJS.Timeout>();
  /** The response each connection is sending, if any: nothing may be written into the middle of one. */
  const answering = new WeakMap<net.Socket, http.ServerResponse>();
  let closedForCap = 0;
  let reportTimer: NodeJS.Timeout | undefined;

  const mayWrite = (socket: net.Socket) => {
    const res = answering.get(socket);
    return socket.writable && (!res || !res.headersSent || res.writableFinished);
  };
  /**
   * Says why, then closes at once (the descriptor is freed now). Nothing is written into a response under way,
   * nor, with `unasked`, to a connection that had an answer already: it is not waiting for one.
   */
  const drop = (socket: net.Socket, status: number, message: string, unasked = false) => {
    if (mayWrite(socket) && !(unasked && answering.has(socket))) socket.write(rawReply(status, message));
    socket.destroy();
  };
  const forget = (socket: net.Socket) => {
    clearTimeout(waiting.get(socket));
    waiting.delete(socket);
  };

  const noteClosedForCap = () => {
    closedForCap++;
    if (reportTimer) return;
    log.warn(
      `MCP HTTP: ${limits.maxConnections} connections are open without a valid token, the most allowed: the oldest is closed as each new one comes (is something flooding the endpoint?)`,
    );
    closedForCap = 0;
    reportTimer = setTimeout(function report() {
      if (closedForCap === 0) {
        reportTimer = undefined;
        return;
      }
      log.warn(
        `MCP HTTP: closed ${closedForCap} more connections without a valid token for the cap in the last minute`,
      );
      closedForCap = 0;
      reportTimer = setTimeout(report, REPORT_EVERY_MS).unref();
    }, REPORT_EVERY_MS).unref();
  };

  server.on('connection', (socket: net.Socket) => {
    // Full: the oldest waiting connection goes, not the new one. A client with the token sends its request as
    // soon as it connects, so it is the newest and is authenticated long before it could become the oldest;
    // refusing new connections instead would let anyone who holds the cap's worth of idle ones lock it out.
    if (waiting.size >= limits.maxConnections) {
      const oldest = waiting.keys().next().value as net.Socket;
      forget(oldest);
      drop(
        oldest,
        503,
        `Service unavailable: too many connections are open without a valid token (at most ${limits.maxConnections}); this one, the oldest, was closed`,
        true,
      );
      noteClosedForCap();
    }
    const deadline = setTimeout(() => {
      forget(socket);
      drop(
        socket,
        408,
        `Request timeout: no request with a valid bearer token within ${limits.timeoutMs / 1000} s of connecting`,
        true,
      );
    }, limits.timeoutMs);
    deadline.unref();
    waiting.set(socket, deadline);
    socket.once('close', () => forget(socket));
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => answering.set(req.socket, res));

  // What Node's HTTP parser refuses, and requests that overstay headersTimeout or requestTimeout.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: net.Socket) => {
    forget(socket);
    if (error.code === 'ECONNRESET' || !mayWrite(socket)) return void socket.destroy();
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      return drop(socket, 408, 'Request timeout: the request did not arrive in time');
    if (error.code === 'HPE_HEADER_OVERFLOW') return drop(socket, 431, 'Request header fields too large');
    drop(socket, 400, `Bad request: this is not well-formed HTTP/1.1 (${error.code ?? error.message})`);
  });

  return { authenticated: forget };
}
