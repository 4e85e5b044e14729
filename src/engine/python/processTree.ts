import * as fs from 'node:fs';

/**
 * Every process below `root` (not `root` itself), read from /proc; empty where there is no /proc (macOS,
 * Windows), where the process group is all a caller can kill. Synchronous, so it also serves an exit hook.
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
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // ended since the listing
    }
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ', 2)[1]);
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
 * SIGKILLs every process below `root`, children that left the process group with setsid included. Scans a
 * few times, as a process may fork between a scan and its kill (and a killed one forks no more).
 */
export function killDescendants(root: number): void {
  for (let round = 0; round < 3; round++) {
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
