// Deno's permission checks, answered by the server from real paths. Deno compares the path it is given with its
// --allow lists and then lets the operating system follow links (2.9: "permissions are checked based on the
// symlink's location, not its target"), so a link in a granted folder, there when the session starts or made
// while it runs, would lead anywhere. With DENO_PERMISSION_BROKER_PATH set, Deno asks a broker instead of its
// flags for every check of every realm (one JSON line a question, one answer, over a Unix socket or a Windows
// named pipe), and opens the path it resolves after asking. The broker answers from where the path leads now:
// both the path asked for and its real path must lie in the grants. Deno is started with no grant flags, so a
// Deno that ignored the broker could read nothing and the session would not start.
//
// The answers are pathGrants.ts's. The sandbox cannot make a link (Deno.symlink needs unscoped read and write,
// which is never answered yes), and it cannot move one (pathGrants.ts).
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { decide, type Grants } from './pathGrants';

/** The environment variable Deno (2.5.3 and later) reads the broker's socket or pipe from. */
export const BROKER_VARIABLE = 'DENO_PERMISSION_BROKER_PATH';
/** Deno's questions are one path each; a longer line is not one of them. */
const MAX_QUESTION_BYTES = 1024 * 1024;

export interface PermissionBroker {
  /** Where Deno connects (BROKER_VARIABLE). */
  address: string;
  /** Answers only the process with this id (the one started with `address`); questions before it are held. */
  bind(pid: number): void;
  close(): void;
}

/**
 * A broker for one Deno process, listening before the process starts. It takes one connection and answers only
 * questions that carry the bound process id; any other connection, or a question it cannot read, is cut, which
 * ends the Deno process (it exits when it cannot ask).
 */
export function startPermissionBroker(grants: Grants): PermissionBroker {
  const dir = process.platform === 'win32' ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-broker-'));
  const address = dir
    ? path.join(dir, 'broker.sock')
    : `\\\\.\\pipe\\code-mode-broker-${process.pid}-${Math.random().toString(36).slice(2)}`;
  let boundPid: number | undefined;
  let connected = false;
  const waiting: Array<() => void> = [];
  const server = net.createServer((socket) => {
    if (connected) return socket.destroy();
    connected = true;
    socket.on('error', () => undefined);
    let buffered = '';
    socket.setEncoding('utf8').on('data', (text: string) => {
      buffered += text;
      if (buffered.length > MAX_QUESTION_BYTES) return socket.destroy();
      let end: number;
      while ((end = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        const answerLine = (): void => {
          const reply = answer(line, grants, boundPid);
          if (reply === undefined) socket.destroy();
          else socket.write(`${reply}\n`);
        };
        if (boundPid === undefined) waiting.push(answerLine);
        else answerLine();
      }
    });
  });
  server.on('error', () => undefined);
  server.listen(address);
  return {
    address,
    bind(pid) {
      boundPid = pid;
      for (const answerLine of waiting.splice(0)) answerLine();
    },
    close() {
      server.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The answer line to one question line, or undefined when the line is not a question from `pid`. */
function answer(line: string, grants: Grants, pid: number | undefined): string | undefined {
  let question: { pid?: unknown; id?: unknown; permission?: unknown; value?: unknown };
  try {
    question = JSON.parse(line) as typeof question;
  } catch {
    return undefined;
  }
  const { id, permission, value } = question;
  if (question.pid !== pid || typeof id !== 'number' || typeof permission !== 'string') return undefined;
  if (value !== null && value !== undefined && typeof value !== 'string') return undefined;
  const decision = decide(permission, value ?? null, grants);
  return JSON.stringify(decision.allow ? { id, result: 'allow' } : { id, result: 'deny', reason: decision.reason });
}
