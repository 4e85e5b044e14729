// Deno's permission checks, answered by the server from real paths. Deno compares the path it is given with its
// --allow lists and then lets the operating system follow links (2.9: "permissions are checked based on the
// symlink's location, not its target"), so a link in a granted folder, there when the session starts or made
// while it runs, would lead anywhere. With DENO_PERMISSION_BROKER_PATH set, Deno asks a broker instead of its
// flags for every check of every realm (one JSON line a question, one answer, over a Unix socket or a Windows
// named pipe), and opens the path it resolves after asking. The broker answers from where the path leads now:
// both the path asked for and its real path must lie in the grants. Deno is started with no grant flags, so a
// Deno that ignored the broker could read nothing and the session would not start.
//
// Writes never touch what git or the workspace-Python backend would run (a `.git` at any depth, a pyvenv.cfg),
// whether it exists yet or not: the broker sees each name, where bubblewrap's mounts can only cover what exists.
//
// The sandbox cannot make a link (Deno.symlink needs unscoped read and write, which is never answered yes), and it
// cannot move one: a write is refused on a link and on a folder holding one, so no folder with a link can be put
// where a checked path passes between the broker's answer and Deno's own lookup.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { isInside, writableIn, type Mount } from './fileView';

/** The environment variable Deno (2.5.3 and later) reads the broker's socket or pipe from. */
export const BROKER_VARIABLE = 'DENO_PERMISSION_BROKER_PATH';
/** A folder with more entries than this is not walked for links before it is renamed or removed: refused. */
export const MAX_FOLDER_WALK = 10_000;
/** Deno's questions are one path each; a longer line is not one of them. */
const MAX_QUESTION_BYTES = 1024 * 1024;

export interface BrokerGrants {
  mounts: readonly Mount[];
  network: 'off' | 'on';
}

export type BrokerAnswer = { allow: true } | { allow: false; reason: string };

/** The answer to Deno's question whether `permission` may be used on `value` (a path for read and write). */
export function decide(permission: string, value: string | null, grants: BrokerGrants): BrokerAnswer {
  if (permission === 'net')
    return grants.network === 'on'
      ? { allow: true }
      : refuse('Requires net access: the network is off in this sandbox');
  if (permission !== 'read' && permission !== 'write')
    return refuse(`Requires ${permission} access, which this sandbox never grants`);
  if (value === null)
    return refuse(`Requires ${permission} access to the whole file system, which this sandbox never grants`);
  if (!path.isAbsolute(value))
    return refuse(`Requires ${permission} access to "${value}": a relative path is not granted`);
  const asked = path.resolve(value);
  const real = realPathOf(asked);
  if (real === undefined) return refuse(`Requires ${permission} access to "${asked}": where it leads cannot be read`);
  const allowed = (target: string): boolean =>
    permission === 'read'
      ? grants.mounts.some((mount) => isInside(target, mount.path))
      : writableIn(target, grants.mounts);
  if (!allowed(asked)) return refuse(`Requires ${permission} access to "${asked}"`);
  if (permission === 'write' && (runsOnHost(asked) || runsOnHost(real)))
    return refuse(
      `Requires write access to "${asked}": repository metadata (.git) and virtual environments (pyvenv.cfg) are never written from this sandbox, whether they exist yet or not`,
    );
  if (!allowed(real))
    return refuse(
      `Requires ${permission} access to "${asked}": it leads to "${real}", outside what this sandbox may ${permission}`,
    );
  return permission === 'write' ? movable(asked) : { allow: true };
}

/** A path inside a `.git` (git runs its hooks and config) or a virtual environment's marker (its interpreter runs). */
function runsOnHost(target: string): boolean {
  const parts = target.split(path.sep);
  return parts.includes('.git') || parts.at(-1) === 'pyvenv.cfg';
}

/**
 * A write to a link or a folder also renames or removes it: refused for a link, and for a folder that holds one
 * (or more entries than can be walked now), so no link ever moves to where a checked path would pass through it.
 */
function movable(target: string): BrokerAnswer {
  const entry = fs.lstatSync(target, { throwIfNoEntry: false });
  if (entry?.isSymbolicLink())
    return refuse(
      `Requires write access to "${target}": a symbolic link is not written through, moved or removed here`,
    );
  if (!entry?.isDirectory()) return { allow: true };
  const found = linkInside(target);
  if (found === 'too many')
    return refuse(
      `Requires write access to "${target}": a folder of more than ${MAX_FOLDER_WALK} entries is not moved or removed whole here`,
    );
  return found
    ? refuse(
        `Requires write access to "${target}": it holds a symbolic link ("${found}"), so it is not moved or removed here`,
      )
    : { allow: true };
}

/** The first link under `dir`, 'too many' past the walk's bound, or undefined. */
function linkInside(dir: string): string | 'too many' | undefined {
  const pending = [dir];
  let walked = 0;
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      return current;
    }
    for (const entry of entries) {
      if (++walked > MAX_FOLDER_WALK) return 'too many';
      const full = path.join(current, entry.name);
      if (entry.isSymbolicLink()) return full;
      if (entry.isDirectory()) pending.push(full);
    }
  }
  return undefined;
}

/**
 * Where `target` leads now, links resolved, for a path whose last parts may not exist yet; undefined if unknowable,
 * as for a part that exists only as a link leading nowhere (what a write through it would create is not known).
 */
function realPathOf(target: string): string | undefined {
  const missing: string[] = [];
  let existing = target;
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(existing), ...missing.reverse());
    } catch (error) {
      const parent = path.dirname(existing);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === existing) return undefined;
      if (fs.lstatSync(existing, { throwIfNoEntry: false })) return undefined;
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

function refuse(reason: string): BrokerAnswer {
  return { allow: false, reason };
}

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
export function startPermissionBroker(grants: BrokerGrants): PermissionBroker {
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
function answer(line: string, grants: BrokerGrants, pid: number | undefined): string | undefined {
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
