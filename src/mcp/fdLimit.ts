// The soft limit on open file descriptors, raised to the hard one before an HTTP server listens: every connection
// holds a descriptor, and a process that runs out can no longer accept its own clients (nor open files or pipes).
// Node has no setrlimit, so on Linux util-linux's prlimit does it; elsewhere nothing is done, and the log says why.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import type { Logger } from '../engine/index';

export interface FdLimits {
  soft: number;
  hard: number;
}

export interface FdLimitOutcome {
  /** The limits after the attempt, where they could be read. */
  limits?: FdLimits;
  raised: boolean;
  /** What was done, as logged. */
  message: string;
}

/** The "Max open files" line of /proc/<pid>/limits; undefined where it cannot be read or a value is "unlimited". */
export function readFdLimits(pid: number = process.pid): FdLimits | undefined {
  let text: string;
  try {
    text = fs.readFileSync(pid === process.pid ? '/proc/self/limits' : `/proc/${pid}/limits`, 'utf8');
  } catch {
    return undefined;
  }
  const match = /^Max open files\s+(\d+)\s+(\d+)/m.exec(text);
  return match ? { soft: Number(match[1]), hard: Number(match[2]) } : undefined;
}

function prlimit(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    // An argument list, never a shell string.
    execFile('prlimit', args, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      const code = (error as NodeJS.ErrnoException).code;
      reject(new Error(code === 'ENOENT' ? 'prlimit (util-linux) is not installed' : stderr.trim() || error.message));
    });
  });
}

/**
 * Raises the soft limit on open file descriptors of `pid` (this process unless told) to its hard limit, and logs
 * what it did. Never throws: a limit that stays low is logged as a warning. Node itself raises its soft limit at
 * start when it runs as a program; an embedder such as Electron (VS Code's extension host) may tell it not to.
 */
export async function raiseFdSoftLimit(log: Logger, pid: number = process.pid): Promise<FdLimitOutcome> {
  const done = (outcome: FdLimitOutcome, level: 'info' | 'warn' = 'info'): FdLimitOutcome => {
    log[level](`file descriptors: ${outcome.message}`);
    return outcome;
  };
  if (process.platform !== 'linux') {
    const why =
      process.platform === 'win32'
        ? 'Windows has no such per-process limit on sockets'
        : `Node has no setrlimit and prlimit is Linux's (util-linux); on ${process.platform} the limit stays as the process was started with (raise it with "ulimit -n" before starting)`;
    return done({ raised: false, message: `the soft limit is left as it is: ${why}` });
  }
  const before = readFdLimits(pid);
  if (!before)
    return done(
      {
        raised: false,
        message: `the limit could not be read from /proc/${pid === process.pid ? 'self' : pid}/limits (or it is unlimited); it is left as it is`,
      },
      'warn',
    );
  if (before.soft >= before.hard)
    return done({ limits: before, raised: false, message: `the soft limit is already the hard one (${before.hard})` });
  try {
    await prlimit(['--pid', String(pid), `--nofile=${before.hard}:${before.hard}`]);
  } catch (error) {
    return done(
      {
        limits: readFdLimits(pid) ?? before,
        raised: false,
        message: `could not raise the soft limit from ${before.soft} to the hard one (${before.hard}): ${(error as Error).message}`,
      },
      'warn',
    );
  }
  const after = readFdLimits(pid);
  if (!after || after.soft !== before.hard) {
    return done(
      {
        limits: after ?? before,
        raised: false,
        message: `prlimit ran, but the soft limit is ${after?.soft ?? 'unknown'}, not ${before.hard}`,
      },
      'warn',
    );
  }
  return done({
    limits: after,
    raised: true,
    message: `raised the soft limit from ${before.soft} to the hard one (${after.hard}) with prlimit`,
  });
}
