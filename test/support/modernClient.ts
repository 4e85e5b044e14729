// The built CLI as a client of protocol revision 2026-07-28 sees it over stdio: the SDK v2 Client pinned to that
// revision (with every frame it receives kept, for the wire facts the Client consumes before they reach code), and
// hand-built 2026 requests with the per-request `_meta` envelope, for what no Client lets a test choose.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as readline from 'node:readline';
import { Client, type ClientCapabilities, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cliPath, testStorageDir } from './mcp';

export const MODERN_REVISION = '2026-07-28';

/** The reserved `_meta` keys of a 2026-07-28 request (the envelope), and the server's identity on its results. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** One JSON-RPC message as it crossed the pipe. */
export type Frame = Record<string, unknown> & {
  id?: string | number;
  method?: string;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  result?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  error?: { code: number; message: string; data?: unknown };
};

/** Messages in the order they came, and a way to wait for one that has not come yet; waiting ends when the stream does. */
export class FrameLog {
  readonly frames: Frame[] = [];
  private readonly waiters = new Set<() => void>();
  private ended: Error | undefined;

  push(frame: Frame): void {
    this.frames.push(frame);
    for (const wake of [...this.waiters]) wake();
  }

  /** No more frames will come (the process ended): whoever waits is told. */
  end(reason: Error): void {
    this.ended ??= reason;
    for (const wake of [...this.waiters]) wake();
  }

  /** The first frame matching `predicate`, already here or once it arrives. */
  waitFor(predicate: (frame: Frame) => boolean, what: string): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const found = this.frames.find(predicate);
        if (found) {
          this.waiters.delete(look);
          resolve(found);
        } else if (this.ended) {
          this.waiters.delete(look);
          reject(new Error(`${what} never came: ${this.ended.message}`));
        }
      };
      this.waiters.add(look);
      look();
    });
  }

  /** The answer (result or error) to the request `id`. */
  answerTo(id: string | number): Promise<Frame> {
    return this.waitFor((f) => f.id === id && f.method === undefined, `the answer to request ${JSON.stringify(id)}`);
  }

  /** Frames that came before `frame` (which must have come). */
  before(frame: Frame): Frame[] {
    const index = this.frames.indexOf(frame);
    if (index === -1) throw new Error('that frame is not in this log');
    return this.frames.slice(0, index);
  }
}

export interface ModernConnection {
  client: Client;
  transport: StdioClientTransport;
  /** Every message the server sent after connect() resolved, as the transport parsed it off the pipe. */
  received: FrameLog;
  /** Every message the client sent after connect() resolved. */
  sent: Frame[];
  stderr: () => string;
  close(): Promise<void>;
}

export interface ModernConnectOptions {
  args?: string[];
  capabilities?: ClientCapabilities;
  /** Answers the server's elicitations (on 2026-07-28 the SDK fulfils `input_required` results through it). */
  onElicit?: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>;
}

/**
 * The SDK v2 Client pinned to 2026-07-28, over the SDK's own StdioClientTransport (so the era is asked on a
 * short-lived sibling process, as any SDK client asks it, and this transport's child is started once, after).
 * Rejects as the SDK does when the server does not offer the revision.
 */
export async function connectModern(options: ModernConnectOptions = {}): Promise<ModernConnection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, '--storage', testStorageDir, ...(options.args ?? [])],
    env: { ...(process.env as Record<string, string>) },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client(
    { name: 'code-mode-tests-2026', version: '1.0.0' },
    { capabilities: options.capabilities ?? {}, versionNegotiation: { mode: { pin: MODERN_REVISION } } },
  );
  if (options.onElicit) {
    const answer = options.onElicit;
    client.setRequestHandler('elicitation/create', (request) => answer(request));
  }
  const received = new FrameLog();
  const sent: Frame[] = [];
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close().catch(() => undefined);
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\nserver stderr:\n${stderr.slice(-2000)}`,
      {
        cause: error,
      },
    );
  }
  // The Transport interface's own seams: what arrives goes through onmessage, what leaves through send.
  const deliver = transport.onmessage;
  transport.onmessage = (message) => {
    received.push(message as Frame);
    deliver?.call(transport, message);
  };
  const closed = transport.onclose;
  transport.onclose = () => {
    received.end(new Error(`the server's stdio closed; stderr:\n${stderr.slice(-2000)}`));
    closed?.call(transport);
  };
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    sent.push(message as Frame);
    return send(message);
  };
  return { client, transport, received, sent, stderr: () => stderr, close: () => client.close() };
}

/** The id of the last request the client sent with `method` (and, for tools/call, this tool name). */
export function lastSentId(sent: Frame[], method: string, toolName?: string): string | number {
  const found = [...sent]
    .reverse()
    .find((f) => f.method === method && f.id !== undefined && (toolName === undefined || f.params?.name === toolName));
  if (found?.id === undefined) throw new Error(`no ${method}${toolName ? ` ${toolName}` : ''} request was sent`);
  return found.id;
}

/**
 * The built CLI spoken to in hand-built 2026-07-28 requests, no SDK client in between: every request carries the
 * envelope (plus whatever `_meta` the test adds, e.g. a logLevel), and every line the server writes is kept.
 */
export class ModernRawStdio {
  readonly received = new FrameLog();
  readonly exited: Promise<number | null>;
  private stderrText = '';
  private nextId = 1;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly capabilities: Record<string, unknown>,
  ) {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      let frame: Frame;
      try {
        frame = JSON.parse(line) as Frame;
      } catch {
        frame = { unparsable: line };
      }
      this.received.push(frame);
    });
    child.stderr.on('data', (chunk: Buffer) => (this.stderrText += chunk.toString()));
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) =>
      child.on('exit', (code) => {
        this.received.end(new Error(`the server exited (${code}); stderr:\n${this.stderrText.slice(-2000)}`));
        resolve(code);
      }),
    );
  }

  static start(args: string[] = [], capabilities: Record<string, unknown> = {}): ModernRawStdio {
    const child = spawn(process.execPath, [cliPath, '--storage', testStorageDir, ...args]);
    return new ModernRawStdio(child, capabilities);
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** The envelope every request of this client carries. */
  envelope(): Record<string, unknown> {
    return {
      [META.protocolVersion]: MODERN_REVISION,
      [META.clientInfo]: { name: 'raw-2026-test', version: '1' },
      [META.clientCapabilities]: this.capabilities,
    };
  }

  /** Sends one request (with the envelope and `meta` in its `_meta`); returns its id. */
  send(method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): number {
    const id = this.nextId++;
    const request = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...this.envelope(), ...meta } } };
    this.child.stdin.write(`${JSON.stringify(request)}\n`);
    return id;
  }

  /** Sends one request and waits for its answer. */
  request(method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): Promise<Frame> {
    return this.received.answerTo(this.send(method, params, meta));
  }

  /** Ends stdin, as a client leaving does, and waits for the server to exit. */
  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.stdin.end();
      this.child.kill('SIGTERM');
    }
    await this.exited;
  }
}
