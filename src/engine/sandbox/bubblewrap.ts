// bubblewrap (Linux): the process and everything it starts, every thread and every JS realm in it, live in
// fresh namespaces. No other process is visible (so none can be signalled), the network namespace holds only
// its own loopback (so no host port, inspector or outside address is reachable), and the file system shows
// only the system libraries, Node itself and the folders bound below. The guarantees come from the kernel,
// not from what JavaScript or Python code inside chooses to leave alone.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findSystemCommand } from '../executables';
import { isInside, type Mount } from './fileView';
import { minimalEnvironment, permissionFlagsWorked, untriedPermissionFlags } from './nodePermission';
import { seccompFilter } from './seccomp';

export type NetworkAccess = 'off' | 'on';

/** Read-only when present: what Node needs to start (the loader cache), and with network, to resolve names and check certificates. */
const SYSTEM_FILES = ['/etc/ld.so.cache'];
const NETWORK_FILES = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/pki',
];
/** Top-level folders that hold programs and libraries; merged-/usr systems have symlinks here. */
const SYSTEM_DIRS = ['/usr', '/lib', '/lib64', '/lib32', '/libx32', '/bin', '/sbin'];

let probed: { binary: string } | { unavailable: string } | undefined;

/** The bwrap binary, if it is installed and can create namespaces here (checked once per process). */
export function bubblewrap(): { binary: string } | { unavailable: string } {
  if (probed) return probed;
  if (process.platform !== 'linux')
    return (probed = { unavailable: `bubblewrap exists only on Linux, not on ${process.platform}` });
  const binary = findSystemCommand('bwrap');
  if (!binary)
    return (probed = {
      unavailable:
        'bubblewrap is not installed (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)',
    });
  const filter = seccompFilter('off');
  // The filter arrives on stdin here; the real sandbox reads it from a pipe of its own (seccompFd).
  const startNode = (nodeFlags: readonly string[]) =>
    spawnSync(
      binary,
      [...bubblewrapArgs([], 'off', '/', filter ? 0 : undefined), '--', runtimeExecutable(), ...nodeFlags, '-e', ''],
      {
        env: minimalEnvironment(),
        encoding: 'utf8',
        input: filter,
        timeout: 10_000,
      },
    );
  // While Node's permission model is untried, Node starts inside with its flags too, so one start of Node (a noticeable
  // part of a server's start) checks both. If that start fails, the sandbox is tried without them (and the model is
  // tried on its own when it is next asked for).
  const permission = untriedPermissionFlags();
  if (permission && startNode(permission).status === 0) {
    permissionFlagsWorked(permission);
    return (probed = { binary });
  }
  const result = startNode([]);
  if (result.status === 0) return (probed = { binary });
  const why = (result.stderr || result.error?.message || `exit ${result.status}`).trim();
  // Typical: unprivileged user namespaces are off (sysctl kernel.unprivileged_userns_clone, or AppArmor's restriction on Ubuntu 24.04).
  return (probed = { unavailable: `bubblewrap could not create a sandbox here: ${why}` });
}

/**
 * bwrap's arguments up to (not including) the `--` before the command. Every path is bound at its own path,
 * in the order given (fileView.ts puts parents first). With `seccompFd`, bwrap reads the filter of
 * seccomp.ts from that descriptor.
 */
export function bubblewrapArgs(
  mounts: readonly Mount[],
  network: NetworkAccess,
  cwd: string,
  seccompFd?: number,
): string[] {
  // A user namespace even when the server runs as root (bwrap would skip it), so no capability held inside
  // means anything outside; and none may be created inside, which closes a common kernel attack surface.
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--clearenv',
  ];
  for (const [name, value] of Object.entries(minimalEnvironment())) args.push('--setenv', name, value ?? '');
  if (seccompFd !== undefined) args.push('--seccomp', String(seccompFd));
  if (network === 'on') args.push('--share-net');
  for (const dir of SYSTEM_DIRS) {
    const stat = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else if (stat?.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  for (const file of [...SYSTEM_FILES, ...(network === 'on' ? NETWORK_FILES : [])])
    args.push('--ro-bind-try', file, file);
  // The kernel checks /proc/<pid>/mem writes against ptrace rules only: read-only, so nothing inside can
  // write into bwrap's own process (pid 1 here), which holds the namespace's capabilities.
  args.push('--dev', '/dev', '--proc', '/proc', '--remount-ro', '/proc', '--tmpfs', '/tmp');
  // After the fresh /tmp, so a runtime living there (a portable install, a test host) is not hidden by it.
  args.push(...runtimeBinds());
  for (const mount of mounts) args.push(mount.writable ? '--bind' : '--ro-bind', mount.path, mount.path);
  args.push('--chdir', cwd);
  return args;
}

/** The runtime a confined process runs: this process's own executable (Node, or Electron as Node), by its real path. */
export function runtimeExecutable(): string {
  return fs.realpathSync(process.execPath);
}

/**
 * bwrap's arguments that show the runtime inside the sandbox, read-only at its own path, when it lives outside
 * /usr (a version manager, code-server, a VS Code server folder, a portable install, anything under /tmp or
 * the home folder). Node is one file, and only that file is bound: its folder may be /tmp, the home folder or
 * a folder of other things, whose files (and Unix sockets, which a read-only mount does not keep anyone from
 * connecting to) must stay out. Electron needs the files beside it (ICU data, V8 snapshots, its libraries), so
 * its folder is bound, less the user data a portable VS Code keeps in `data/` there.
 */
export function runtimeBinds(
  executable = runtimeExecutable(),
  electron = process.versions.electron !== undefined,
): string[] {
  if (isInside(executable, '/usr')) return [];
  if (!electron) return ['--ro-bind', executable, executable];
  const dir = path.dirname(executable);
  const args = ['--ro-bind', dir, dir];
  const portableData = path.join(dir, 'data');
  if (fs.statSync(portableData, { throwIfNoEntry: false })?.isDirectory()) args.push('--tmpfs', portableData);
  return args;
}
