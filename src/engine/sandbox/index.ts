// How a Pyodide host process is confined. Python in Pyodide reaches the host process's JavaScript (`import
// js`), so the boundary has to hold for the whole process and every realm it could create, whatever the code
// inside does: it comes from the operating system where the platform has a mechanism, and from Node's
// permission model beneath it everywhere.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { bubblewrap, bubblewrapArgs, runtimeExecutable, type NetworkAccess } from './bubblewrap';
import type { Mount } from './fileView';
import { minimalEnvironment, permissionFlags, permissionModelFlag } from './nodePermission';
import { seccompFilter } from './seccomp';

export type { NetworkAccess } from './bubblewrap';

export function isNetworkAccess(value: unknown): value is NetworkAccess {
  return value === 'off' || value === 'on';
}

/** What confines Pyodide here, for the environment tool, the README's promise and the logs. */
export interface SandboxReport {
  mechanism: 'bubblewrap' | 'node-permission' | 'none';
  /** Every clause of the sandbox contract holds (see the README's security model). */
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
}

/**
 * Starts `node <nodeArgs>` confined as tightly as this machine allows, with stdin ignored, stdout and stderr
 * piped, and `extraPipes` more pipes from fd 3 on.
 */
export function spawnConfinedNode(nodeArgs: string[], confinement: Confinement, extraPipes: number): { child: ChildProcess; report: SandboxReport } {
  const node = [...permissionFlags(confinement.mounts), ...nodeArgs];
  const report = sandboxReport(confinement.network);
  const pipes = Array.from({ length: extraPipes }, () => 'pipe' as const);
  const bwrap = bubblewrap();
  if (!('binary' in bwrap)) {
    const child = spawn(process.execPath, node, { env: minimalEnvironment(), cwd: confinement.cwd, stdio: ['ignore', 'pipe', 'pipe', ...pipes] });
    return { child, report };
  }
  const filter = seccompFilter();
  const seccompFd = filter ? 3 + extraPipes : undefined;
  const args = [...bubblewrapArgs(confinement.mounts, confinement.network, confinement.cwd, seccompFd), '--', runtimeExecutable(), ...node];
  const child = spawn(bwrap.binary, args, { env: {}, cwd: confinement.cwd, stdio: ['ignore', 'pipe', 'pipe', ...pipes, ...(filter ? (['pipe'] as const) : [])] });
  if (filter && seccompFd !== undefined) {
    const stream = child.stdio[seccompFd] as Writable;
    stream.on('error', () => undefined);
    stream.end(filter);
  }
  return { child, report };
}

/** What the sandbox is on this machine with `network`; the same for every session. */
export function sandboxReport(network: NetworkAccess): SandboxReport {
  const bwrap = bubblewrap();
  const permissionModel = permissionModelFlag() !== undefined;
  if ('binary' in bwrap) {
    const gaps = seccompFilter() ? [] : [`no seccomp filter for ${process.arch}: code could start processes inside the sandbox (still without network, other processes or other files)`];
    if (!permissionModel) gaps.push("Node's permission model is unavailable in this runtime (a second layer only: bubblewrap holds the boundary)");
    return { mechanism: 'bubblewrap', complete: gaps.length === 0, network, gaps };
  }
  const gaps = [
    `${bwrap.unavailable}: without an OS sandbox, code in Pyodide can signal other processes of this user`,
    ...(network === 'off' ? ['network is refused inside Pyodide but not by the operating system: a determined program can still open sockets'] : []),
  ];
  if (!permissionModel) gaps.push("Node's permission model is unavailable in this runtime: code in Pyodide can read and write files and start processes as this user");
  return { mechanism: permissionModel ? 'node-permission' : 'none', complete: false, network, gaps };
}
