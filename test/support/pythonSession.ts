// Looking at the processes workspace-Python backend sessions start and leave, for the python-backend test files
// (runs themselves go through test/support/backendRuns.ts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { outerPidOf } from '../../src/engine/backends/python/processTree';
import type { BackendOutcome, BackendSession } from '../../src/engine/backends/contract';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ProcStat {
  ppid: number;
  state: string;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name may hold spaces and parentheses; the fields after its last ')' do not.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** Running, as opposed to exited: a zombie no longer runs, it only waits for a parent to reap it. */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return (readStat(pid)?.state ?? 'Z') === 'Z';
}

export async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(50);
  assert.ok(condition(), what);
}

export async function waitUntilGone(pid: number): Promise<void> {
  await waitUntil(() => isGone(pid), `process ${pid} is still running`);
}

/** Every process below `root` in /proc, zombies included, as "pid state" strings. */
export function descendants(root: number): string[] {
  const children = new Map<number, { pid: number; state: string }[]>();
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    const stat = Number.isInteger(pid) ? readStat(pid) : undefined;
    if (!stat) continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), { pid, state: stat.state }]);
  }
  const found: string[] = [];
  const queue = [root];
  while (queue.length) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      found.push(`${child.pid} ${child.state}`);
      queue.push(child.pid);
    }
  }
  return found;
}

/** The pid of the process the backend spawned (its direct child), which is the root of all the session's processes. */
export function spawnedPid(driverPid: number): number {
  const parent = readStat(driverPid)?.ppid;
  // Without a reaper process the driver is the spawned process itself.
  return parent === process.pid || parent === undefined ? driverPid : parent;
}

/**
 * A pid the session's code printed, as this process sees it: in a session with a PID namespace of its own
 * (containment.ts) code sees the namespace's pids. Found while the process runs.
 */
export function outerPid(session: BackendSession, pid: number): number {
  return outerPidOf(spawnedPid(session.info().pid as number), pid) ?? pid;
}

export function assertCrashed(outcome: BackendOutcome, pattern: RegExp): void {
  assert.equal(outcome.status, 'crashed');
  if (outcome.status === 'crashed') assert.match(outcome.message, pattern);
}
