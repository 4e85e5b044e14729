// How a Pyodide host process is confined. Python in Pyodide reaches the host process's JavaScript (`import
// js`), so the boundary has to hold for the whole process and every realm it could create, whatever the code
// inside does: it comes from the operating system where the platform has a mechanism (bubblewrap.ts), else from
// Deno's permission model (deno.ts), which checks every operation of every realm; Node's permission model
// beneath bubblewrap, or alone where neither exists, is the last resort.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import type { Writable } from 'node:stream';
import { bubblewrap, bubblewrapArgs, runtimeExecutable, type NetworkAccess } from './bubblewrap';
import { deno, denoArgs, denoEnvironment } from './deno';
import { BROKER_VARIABLE, startPermissionBroker } from './denoBroker';
import { findSystemCommand } from '../executables';
import type { Logger } from '../types';
import type { Mount } from './fileView';
import { minimalEnvironment, permissionFlags, permissionModelFlag } from './nodePermission';
import { seccompFilter } from './seccomp';

export type { NetworkAccess } from './bubblewrap';

export function isNetworkAccess(value: unknown): value is NetworkAccess {
  return value === 'off' || value === 'on';
}

/** What a person asks for: `auto` is bubblewrap where it works, else Deno, else Node's permission model alone. */
export type SandboxChoice = 'auto' | 'bubblewrap' | 'deno';
export const SANDBOX_CHOICES: readonly SandboxChoice[] = ['auto', 'bubblewrap', 'deno'];

export function isSandboxChoice(value: unknown): value is SandboxChoice {
  return SANDBOX_CHOICES.includes(value as SandboxChoice);
}

/** What confines Pyodide here, for the environment tool, SECURITY.md's promise and the logs. */
export interface SandboxReport {
  mechanism: 'bubblewrap' | 'deno' | 'node-permission' | 'none';
  /** Every clause of the sandbox contract holds (see SECURITY.md and docs/sandbox.md). */
  complete: boolean;
  network: NetworkAccess;
  /** Clauses that do not hold on this machine, and why. */
  gaps: string[];
}

export interface Confinement {
  /** Parents before children (see fileView.ts). */
  mounts: Mount[];
  network: NetworkAccess;
  cwd: string;
  choice: SandboxChoice;
  /** Deno's own cache folder, written by the runtime and not by the code it runs (the Deno mechanism only). */
  denoDir: string;
  /** V8 options for the runtime, Node or Deno. */
  v8Flags?: string[];
  /** RLIMIT_DATA for the runtime, given the mechanism that holds it (Linux, where prlimit is installed). */
  dataLimitBytes?: (runtime: 'deno' | 'node') => number;
  log: Logger;
}

/**
 * Starts the host script `script` with `args` confined as tightly as this machine and `confinement.choice`
 * allow, with stdin ignored, stdout and stderr piped, and `extraPipes` more pipes from fd 3 on. The script
 * runs under Node (bubblewrap, Node's permission model) or Deno (its Node compatibility).
 */
export function spawnConfinedHost(
  script: string,
  args: string[],
  confinement: Confinement,
  extraPipes: number,
): { child: ChildProcess; report: SandboxReport } {
  const report = sandboxReport(confinement.network, confinement.choice);
  const pipes = Array.from({ length: extraPipes }, () => 'pipe' as const);
  if (report.mechanism === 'deno') {
    const binary = (deno() as { binary: string }).binary;
    fs.mkdirSync(confinement.denoDir, { recursive: true });
    const broker = startPermissionBroker({ mounts: confinement.mounts, network: confinement.network });
    const denoRun = denoArgs({ script: [script, ...args], v8Flags: confinement.v8Flags });
    const [command, commandArgs] = bounded(binary, denoRun, confinement.dataLimitBytes?.('deno'), true);
    const child = spawn(command, commandArgs, {
      env: { ...denoEnvironment(confinement.denoDir), [BROKER_VARIABLE]: broker.address },
      cwd: confinement.cwd,
      stdio: ['ignore', 'pipe', 'pipe', ...pipes],
    });
    // prlimit and setpriv exec the runtime: the child's id is Deno's.
    if (child.pid !== undefined) broker.bind(child.pid);
    child.once('exit', () => broker.close());
    child.once('error', () => broker.close());
    return { child, report };
  }
  const node = [...(confinement.v8Flags ?? []), ...permissionFlags(confinement.mounts), script, ...args];
  if (report.mechanism !== 'bubblewrap') {
    const [command, commandArgs] = bounded(process.execPath, node, confinement.dataLimitBytes?.('node'), true);
    const child = spawn(command, commandArgs, {
      env: minimalEnvironment(),
      cwd: confinement.cwd,
      stdio: ['ignore', 'pipe', 'pipe', ...pipes],
    });
    return { child, report };
  }
  const filter = seccompFilter(confinement.network);
  const seccompFd = filter ? 3 + extraPipes : undefined;
  const bwrap = bubblewrap() as { binary: string };
  const bwrapArgs = [
    ...bubblewrapArgs(confinement.mounts, confinement.network, confinement.cwd, seccompFd),
    '--',
    runtimeExecutable(),
    ...node,
  ];
  const [command, commandArgs] = bounded(bwrap.binary, bwrapArgs, confinement.dataLimitBytes?.('node'), false);
  const child = spawn(command, commandArgs, {
    env: {},
    cwd: confinement.cwd,
    stdio: ['ignore', 'pipe', 'pipe', ...pipes, ...(filter ? (['pipe'] as const) : [])],
  });
  if (filter && seccompFd !== undefined) {
    const stream = child.stdio[seccompFd] as Writable;
    stream.on('error', () => undefined);
    stream.end(filter);
  }
  return { child, report };
}

/**
 * `binary` with `args`, started with RLIMIT_DATA at `dataLimit` by prlimit (util-linux), which execs it: the child's
 * pid is the runtime's, or bubblewrap's. `orphanKilled`: the kernel kills it when the server goes, so a process the
 * server stopped (SIGSTOP) never outlives it (bubblewrap does that itself with --die-with-parent).
 */
function bounded(
  binary: string,
  args: string[],
  dataLimit: number | undefined,
  orphanKilled: boolean,
): [string, string[]] {
  const limits = dataLimit === undefined ? undefined : sandboxLimits();
  if (!limits) return [binary, args];
  const command = orphanKilled && limits.setpriv ? [limits.setpriv, '--pdeathsig', 'KILL', '--', binary] : [binary];
  return [limits.prlimit, [`--data=${dataLimit}`, '--', ...command, ...args]];
}

let limitTools: { prlimit: string; setpriv?: string } | null | undefined;

/** prlimit and setpriv from util-linux, on Linux where they are installed (looked for once). */
export function sandboxLimits(): { prlimit: string; setpriv?: string } | undefined {
  if (limitTools === undefined) {
    const prlimit = process.platform === 'linux' ? findSystemCommand('prlimit') : undefined;
    limitTools = prlimit ? { prlimit, setpriv: findSystemCommand('setpriv') } : null;
  }
  return limitTools ?? undefined;
}

/** What the sandbox is on this machine with `network` and `choice`; the same for every session. */
export function sandboxReport(network: NetworkAccess, choice: SandboxChoice = 'auto'): SandboxReport {
  const bwrap = choice === 'deno' ? undefined : bubblewrap();
  if (bwrap && 'binary' in bwrap) return bubblewrapReport(network);
  const denoFound = choice === 'bubblewrap' ? undefined : deno();
  if (denoFound && 'binary' in denoFound) return { mechanism: 'deno', complete: true, network, gaps: [] };
  const missing = [
    ...(bwrap && 'unavailable' in bwrap ? [bwrap.unavailable] : []),
    ...(denoFound && 'unavailable' in denoFound ? [denoFound.unavailable] : []),
  ];
  return nodePermissionReport(network, missing.join('; '));
}

function bubblewrapReport(network: NetworkAccess): SandboxReport {
  const gaps = seccompFilter(network)
    ? []
    : [
        `no seccomp filter for ${process.arch}: code could start processes inside the sandbox (still without other processes or other files) and, with the network off, still connect to Unix sockets in the folders it can read`,
      ];
  if (permissionModelFlag() === undefined)
    gaps.push(
      "Node's permission model is unavailable in this runtime (a second layer only: bubblewrap holds the boundary)",
    );
  return { mechanism: 'bubblewrap', complete: gaps.length === 0, network, gaps };
}

/** Node's permission model alone: `missing` says why neither bubblewrap nor Deno confines the process. */
function nodePermissionReport(network: NetworkAccess, missing: string): SandboxReport {
  const permissionModel = permissionModelFlag() !== undefined;
  const gaps = [
    `${missing}: without an OS sandbox or Deno, code in Pyodide can signal other processes of this user`,
    ...(network === 'off'
      ? [
          'network is refused inside Pyodide but not by the operating system: a determined program can still open sockets',
        ]
      : []),
  ];
  if (!permissionModel)
    gaps.push(
      "Node's permission model is unavailable in this runtime: code in Pyodide can read and write files and start processes as this user",
    );
  return { mechanism: permissionModel ? 'node-permission' : 'none', complete: false, network, gaps };
}
