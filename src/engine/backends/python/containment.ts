// What keeps the processes of a workspace-Python session together, so that after a reset, a restart or the
// server's exit none of them survives, whatever the session's code did (killed its reaper, double-forked,
// called setsid). This backend is not a sandbox: the session keeps the user's whole file system, network and
// powers; only its processes are held.
//
// On Linux the session gets a PID namespace of its own, whose init (pid 1) is the session's reaper
// (processes.py). No process inside can signal it, none can leave the namespace, and when it ends the kernel
// kills every process inside. It ends with the process the engine started, which dies with the engine:
//   - bubblewrap: `bwrap --unshare-pid --as-pid-1 --die-with-parent --dev-bind / / --proc /proc`, the whole
//     file system as it is, with a /proc of the namespace's own;
//   - else util-linux: `setpriv --pdeathsig KILL unshare --pid --fork --kill-child --mount-proc`.
// Both need unprivileged user namespaces when the server does not run as root (some distributions restrict
// them); where neither works, the reaper is an ordinary process, which user code can kill, and elsewhere
// (macOS, Windows) only the driver's process group is ended. Either way it is said, in the log and in what
// `environment` reports.
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { findSystemCommand } from '../../executables';

/** Which mechanism to use: the best this machine has, or one in particular (tests). */
export type ContainmentChoice = 'auto' | 'bubblewrap' | 'unshare' | 'none';

export interface ProcessContainment {
  /**
   * pid-namespace: the session's own PID namespace, whose init is its reaper; reaper: a subreaper process
   * above the driver (Linux without namespaces); process-group: the driver's process group (elsewhere).
   */
  mechanism: 'pid-namespace' | 'reaper' | 'process-group';
  /** The program that makes the namespace. */
  via?: 'bubblewrap' | 'unshare';
  /** After a reset, a restart or the server's exit no process the session started survives, whatever its code did. */
  complete: boolean;
  /** What does not hold here, and why. */
  gaps: string[];
  /** The command line a program runs inside with: these arguments, then the program's own. Empty: run directly. */
  prefix: string[];
}

const probed = new Map<ContainmentChoice, ProcessContainment>();

/** The containment for new sessions on this machine (probed once per process and choice). */
export function processContainment(choice: ContainmentChoice = 'auto'): ProcessContainment {
  let found = probed.get(choice);
  if (!found) {
    found = probe(choice);
    probed.set(choice, found);
  }
  return found;
}

function probe(choice: ContainmentChoice): ProcessContainment {
  if (process.platform !== 'linux') {
    return {
      mechanism: 'process-group',
      complete: false,
      gaps: [
        `processes the code starts that leave the driver's process group (setsid, daemons) can outlive a reset, a restart and the server: ${process.platform} has no PID namespaces or subreapers`,
      ],
      prefix: [],
    };
  }
  const failures: string[] = [];
  for (const via of ['bubblewrap', 'unshare'] as const) {
    if (choice !== 'auto' && choice !== via) continue;
    const attempt = via === 'bubblewrap' ? bubblewrapPrefix() : unsharePrefix();
    if ('unavailable' in attempt) {
      failures.push(attempt.unavailable);
      continue;
    }
    const why = runsAsInit(attempt.prefix);
    if (why === undefined) return { mechanism: 'pid-namespace', via, complete: true, gaps: [], prefix: attempt.prefix };
    failures.push(`${via} could not make a PID namespace here: ${why}`);
  }
  const why = choice === 'none' ? 'no PID namespace was asked for' : failures.join('; ');
  return {
    mechanism: 'reaper',
    complete: false,
    gaps: [
      `no PID namespace (${why}): code that kills the session's reaper (its parent process) can leave processes that outlive a reset, a restart and the server, and end the session's memory check`,
    ],
    prefix: [],
  };
}

function bubblewrapPrefix(): { prefix: string[] } | { unavailable: string } {
  const bwrap = findSystemCommand('bwrap');
  if (!bwrap)
    return {
      unavailable:
        'bubblewrap is not installed (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)',
    };
  // The whole file system as it is (devices included), and a /proc that shows the namespace's processes, so the
  // reaper and the driver find theirs. Not a sandbox: no other namespace, and no capability is dropped that
  // the user had (when the server runs as root it stays root; otherwise bwrap maps the user to itself).
  return {
    prefix: [
      bwrap,
      '--unshare-pid',
      '--as-pid-1',
      '--die-with-parent',
      '--dev-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--',
    ],
  };
}

function unsharePrefix(): { prefix: string[] } | { unavailable: string } {
  const setpriv = findSystemCommand('setpriv');
  const unshare = findSystemCommand('unshare');
  if (!setpriv || !unshare) return { unavailable: 'util-linux setpriv and unshare are not installed' };
  const getuid = process.getuid?.bind(process);
  const getgid = process.getgid?.bind(process);
  const uid = getuid ? getuid() : 0;
  const gid = getgid ? getgid() : 0;
  // Without root a user namespace is what allows the others, with the user mapped to itself. --kill-child ends
  // the namespace's init with unshare, and setpriv's parent-death signal ends unshare with the engine.
  const user = uid === 0 ? [] : ['--user', `--map-user=${uid}`, `--map-group=${gid}`];
  return {
    prefix: [
      setpriv,
      '--pdeathsig',
      'KILL',
      '--',
      unshare,
      ...user,
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--propagation',
      'slave',
      '--',
    ],
  };
}

/** undefined when a command run with `prefix` is pid 1 of its own namespace; else why not. */
function runsAsInit(prefix: string[]): string | undefined {
  const result = spawnSync(prefix[0], [...prefix.slice(1), '/bin/sh', '-c', 'test "$$" = 1'], {
    encoding: 'utf8',
    timeout: 10_000,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (result.status === 0) return undefined;
  return (result.stderr || result.error?.message || `exit ${result.status ?? result.signal}`).trim().split('\n')[0];
}

/**
 * How the process the engine started ended, as the driver ended: in a namespace the reaper, being init, cannot
 * end itself by a signal, so it exits with 128 + the signal (as a shell would) and bubblewrap and unshare pass
 * that on.
 */
export function exitOfContained(
  code: number | null,
  signal: NodeJS.Signals | null,
): { code: number | null; signal: NodeJS.Signals | null } {
  if (signal || code === null || code <= 128) return { code, signal };
  const name = (Object.entries(os.constants.signals) as [NodeJS.Signals, number][]).find(
    ([, number]) => number === code - 128,
  )?.[0];
  return name ? { code: null, signal: name } : { code, signal };
}
