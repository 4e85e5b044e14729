import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as readline from 'node:readline';
import { cliPath, testStorageDir } from './mcp';

export type RawMessage = Record<string, unknown> & { id?: unknown; error?: { code: number; message: string } };

/**
 * The built CLI driven byte by byte, with no MCP client in between: what a broken or hostile client would
 * write goes in as is, and every line that comes out is kept for the test to look for.
 */
export class RawStdioServer {
  private readonly received: RawMessage[] = [];
  private readonly waiters = new Set<() => void>();
  private stderrText = '';
  readonly exited: Promise<number | null>;

  /** Every message the server wrote, in the order it wrote them (answerTo takes from `received` only). */
  readonly arrived: RawMessage[] = [];

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as RawMessage;
      this.received.push(message);
      this.arrived.push(message);
      for (const wake of this.waiters) wake();
    });
    child.stderr.on('data', (chunk: Buffer) => (this.stderrText += chunk.toString()));
    // The server may stop reading while a test is still writing a big line; that is the test's business.
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  static async start(args: string[], capabilities: Record<string, unknown> = {}): Promise<RawStdioServer> {
    const server = new RawStdioServer(spawn(process.execPath, [cliPath, '--storage', testStorageDir, ...args]));
    const init = await server.request(0, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities,
      clientInfo: { name: 'raw-stdio-test', version: '1' },
    });
    if (!('result' in init)) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
    server.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    return server;
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Waits until stderr matches: logs travel on their own pipe, so they can trail the answer on stdout. */
  async stderrMatching(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
    for (const deadline = Date.now() + timeoutMs; !pattern.test(this.stderrText);) {
      if (Date.now() > deadline)
        throw new Error(`stderr never matched ${pattern} within ${timeoutMs} ms:\n${this.stderrText.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.stderrText;
  }

  write(bytes: string | Buffer): void {
    this.child.stdin.write(bytes);
  }

  endInput(): void {
    this.child.stdin.end();
  }

  async request(
    id: number | string,
    method: string,
    params?: Record<string, unknown>,
    timeoutMs?: number,
  ): Promise<RawMessage> {
    this.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) })}\n`);
    return this.answerTo(id, timeoutMs);
  }

  /** The first message carrying `id` (null for answers to what had no readable id), not yet taken. */
  answerTo(id: unknown, timeoutMs = 120_000): Promise<RawMessage> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const index = this.received.findIndex((m) => m.id === id && ('result' in m || 'error' in m));
        if (index === -1) return;
        done();
        resolve(this.received.splice(index, 1)[0]);
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `no answer with id ${JSON.stringify(id)} within ${timeoutMs} ms; stderr:\n${this.stderrText.slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(look);
      };
      this.waiters.add(look);
      look();
    });
  }

  private readonly takenRequests = new Set<RawMessage>();

  /** The next request from the server (e.g. elicitation/create) with this method not taken yet, once it arrives. */
  async requestFromServer(method: string, timeoutMs = 120_000): Promise<RawMessage> {
    for (const deadline = Date.now() + timeoutMs; ;) {
      const found = this.arrived.find((m) => m.method === method && 'id' in m && !this.takenRequests.has(m));
      if (found) {
        this.takenRequests.add(found);
        return found;
      }
      if (Date.now() > deadline) throw new Error(`no ${method} request from the server within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Answers (results or errors) received and not taken by answerTo. */
  untakenAnswers(): RawMessage[] {
    return this.received.filter((m) => 'result' in m || 'error' in m);
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
