import * as fs from 'node:fs';

/** One /proc/<pid>/stat line fits many times over; shared, since scans are synchronous. */
const statBuffer = Buffer.alloc(4096);

function readStat(pid: string): string | undefined {
  let fd: number | undefined;
  try {
    // open + read into a shared buffer: cheaper than readFileSync, which counts with hundreds of processes.
    fd = fs.openSync(`/proc/${pid}/stat`, 'r');
    return statBuffer.toString('latin1', 0, fs.readSync(fd, statBuffer, 0, statBuffer.length, 0));
  } catch {
    return undefined; // ended since the listing
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Every live process below `root` (not `root` itself; zombies have ended and have no children), read from
 * /proc; empty where there is no /proc (macOS, Windows), where the process group is all a caller can kill.
 * Synchronous, so it also serves an exit hook: reading /proc is quick, even over every process on the system.
 */
export function descendantsOf(root: number): number[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const name of names) {
    const pid = Number(name);
    const stat = Number.isInteger(pid) ? readStat(name) : undefined;
    if (stat === undefined) continue;
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
    const [state, ppidText] = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 2);
    if (state === 'Z') continue;
    const ppid = Number(ppidText);
    const siblings = children.get(ppid);
    if (siblings) siblings.push(pid);
    else children.set(ppid, [pid]);
  }
  const found: number[] = [];
  const pending = [root];
  for (let parent = pending.pop(); parent !== undefined; parent = pending.pop()) {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

/**
 * SIGKILLs every process below `root`, children that left the process group with setsid included. With
 * more than one round it scans again while it finds any alive, for a process that forked between a scan and
 * its kill (a killed one forks no more).
 */
export function killDescendants(root: number, rounds: number): void {
  for (let round = 0; round < rounds; round++) {
    const found = descendantsOf(root);
    if (found.length === 0) return;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // ESRCH: gone already.
      }
    }
  }
}

/** The pids of `pid`'s children, from each of its threads' /proc children list; empty once it is gone. */
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const task of tasks) {
    try {
      for (const child of fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'latin1').split(' '))
        if (child) found.push(Number(child));
    } catch {
      // The thread ended since the listing.
    }
  }
  return found;
}

/**
 * The pid, as this process sees it, of the process below `root` that is `innerPid` in the PID namespace it
 * lives in (its last NSpid); undefined if there is none.
 */
export function outerPidOf(root: number, innerPid: number): number | undefined {
  const pending = [root];
  for (let seen = 0, parent = pending.pop(); parent !== undefined && seen < 10_000; parent = pending.pop(), seen++) {
    for (const child of childrenOf(parent)) {
      let status = '';
      try {
        status = fs.readFileSync(`/proc/${child}/status`, 'latin1');
      } catch {
        continue;
      }
      const ids = /^NSpid:\s*(.*)$/m.exec(status)?.[1].trim().split(/\s+/).map(Number) ?? [];
      if (ids.length > 1 && ids[ids.length - 1] === innerPid) return child;
      pending.push(child);
    }
  }
  return undefined;
}
