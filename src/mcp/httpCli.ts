// The CLI's --http mode: its flags, what they may be combined with, and serving. Off the machine only when asked
// for twice (a non-loopback --host and --allow-remote) and with a token the person chose (--token-file).
import * as fs from 'node:fs';
import type { Engine, Logger } from '../engine/index';
import { raiseFdSoftLimit } from './fdLimit';
import type { HttpMcpServer } from './http';
import { isLoopbackHost } from './httpHosts';
import { DEFAULT_SESSION_IDLE_MINUTES } from './httpSessionIdle';
import { DEFAULT_MAX_HTTP_SESSIONS } from './httpSessionTable';
import type { McpServerOptions } from './server';

export const HTTP_FLAGS = {
  http: { type: 'boolean' },
  host: { type: 'string' },
  port: { type: 'string' },
  'token-file': { type: 'string' },
  'allow-remote': { type: 'boolean' },
  'share-sessions': { type: 'boolean' },
  'http-session-idle-min': { type: 'string' },
  'max-http-sessions': { type: 'string' },
} as const;

export const HTTP_HELP = `  --http                      serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio, with a bearer
                              token; without --token-file a random one is printed once on stderr
  --host <address>            address to listen on (default: 127.0.0.1); another than loopback needs
                              --allow-remote and --token-file (put a TLS proxy in front, see docs/clients.md)
  --port <n>                  port to listen on (default: a free one, printed)
  --token-file <file>         read the bearer token from this file (at least 32 characters)
  --allow-remote              allow a --host that other machines can reach
  --share-sessions            let all HTTP clients share Python sessions (default: each has its own)
  --http-session-idle-min <m> end an HTTP session after this many minutes without a request, and free its
                              Python sessions (default: ${DEFAULT_SESSION_IDLE_MINUTES})
  --max-http-sessions <n>     MCP sessions kept at once; past it a new one ends the least recently active
                              idle one (its client is told on its next request), or gets a 503 while all
                              are busy (default: ${DEFAULT_MAX_HTTP_SESSIONS})`;

const MIN_TOKEN_LENGTH = 32;

export interface HttpCliOptions {
  host: string;
  port: number;
  /** Undefined: a random one, printed. */
  token?: string;
  shareSessions: boolean;
  sessionIdleMs: number;
  maxHttpSessions: number;
}

type HttpFlagValues = {
  [K in keyof typeof HTTP_FLAGS]?: (typeof HTTP_FLAGS)[K]['type'] extends 'boolean' ? boolean : string;
};

/** The --http options, undefined without --http; a flag that makes no sense throws (the CLI exits 2). */
export function parseHttpFlags(values: HttpFlagValues): HttpCliOptions | undefined {
  if (!values.http) {
    const stray = (Object.keys(HTTP_FLAGS) as (keyof typeof HTTP_FLAGS)[]).find((flag) => values[flag] !== undefined);
    if (stray) throw new Error(`--${stray} needs --http`);
    return undefined;
  }
  const host = values.host ?? '127.0.0.1';
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!(Number.isInteger(port) && port >= 0 && port <= 65535))
    throw new Error('--port must be a whole number from 0 to 65535');
  const idleMinutes =
    values['http-session-idle-min'] === undefined
      ? DEFAULT_SESSION_IDLE_MINUTES
      : Number(values['http-session-idle-min']);
  if (!(idleMinutes > 0)) throw new Error('--http-session-idle-min must be a positive number of minutes');
  const maxHttpSessions =
    values['max-http-sessions'] === undefined ? DEFAULT_MAX_HTTP_SESSIONS : Number(values['max-http-sessions']);
  if (!(Number.isInteger(maxHttpSessions) && maxHttpSessions >= 1))
    throw new Error('--max-http-sessions must be a whole number of at least 1');
  const tokenFile = values['token-file'];
  if (!isLoopbackHost(host) && !(values['allow-remote'] && tokenFile)) {
    throw new Error(
      `--host ${host} can be reached from other machines: it needs --allow-remote and --token-file, and a TLS proxy in front (plain HTTP carries the token and your code unencrypted). To stay on this machine, leave out --host.`,
    );
  }
  return {
    host,
    port,
    token: tokenFile === undefined ? undefined : readToken(tokenFile),
    shareSessions: values['share-sessions'] ?? false,
    sessionIdleMs: idleMinutes * 60_000,
    maxHttpSessions,
  };
}

function readToken(file: string): string {
  let token: string;
  try {
    token = fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new Error(`--token-file: cannot read ${file}: ${(error as Error).message}`);
  }
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new Error(
      `--token-file: the token in ${file} must be at least ${MIN_TOKEN_LENGTH} characters without spaces (e.g. from "openssl rand -hex 32")`,
    );
  }
  return token;
}

/**
 * Serves (the server logs its URL) with the soft limit on open files raised to the hard one first; a generated
 * token is printed once on stderr, one from a file never.
 */
export async function serveHttp(
  engine: Engine,
  http: HttpCliOptions,
  serverOptions: McpServerOptions,
  log: Logger,
): Promise<HttpMcpServer> {
  await raiseFdSoftLimit(log);
  // Loaded only here: the HTTP stack (the SDK's HTTP serving, and Node's fetch it touches as it loads) would slow
  // every start over stdio.
  const { startHttpMcpServer } = await import('./http.js');
  const server = await startHttpMcpServer(engine, { ...serverOptions, ...http, log });
  log.info(
    http.token === undefined
      ? `bearer token (send "Authorization: Bearer <token>"): ${server.token}`
      : 'bearer token: the one in --token-file',
  );
  return server;
}
