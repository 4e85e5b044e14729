// Node's permission model: the one confinement every platform's Node has. It bounds file access, child
// processes, workers, native addons and the inspector for every realm of the process, but not signals or
// sockets (Node 20), so on its own it is not the whole boundary (see bubblewrap.ts).
import { spawnSync } from 'node:child_process';
import { isInside, type Mount } from './fileView';

let checkedFlag: string | null | undefined;

/**
 * The flag that turns the permission model on, checked once by starting the runtime with it: a runtime may
 * list the flag and still refuse it (an Electron build), and Pyodide must start either way.
 */
export function permissionModelFlag(): string | undefined {
  if (checkedFlag !== undefined) return checkedFlag ?? undefined;
  const candidate = listedFlag();
  const works =
    candidate !== undefined &&
    spawnSync(process.execPath, [...permissionProbeFlags(candidate), '-e', ''], {
      env: minimalEnvironment(),
      timeout: 10_000,
    }).status === 0;
  checkedFlag = works ? candidate : null;
  return checkedFlag ?? undefined;
}

/**
 * The flags to try the permission model with, while it has not been tried yet; another start of the same runtime
 * may try them (bubblewrap.ts starts Node inside its sandbox with them, so that one start checks both) and
 * report with `permissionFlagsWorked`.
 */
export function untriedPermissionFlags(): string[] | undefined {
  const candidate = checkedFlag === undefined ? listedFlag() : undefined;
  return candidate === undefined ? undefined : permissionProbeFlags(candidate);
}

/** The runtime started with `untriedPermissionFlags()`. */
export function permissionFlagsWorked(flags: readonly string[]): void {
  checkedFlag = flags[0];
}

function listedFlag(): string | undefined {
  const listed = process.allowedNodeEnvironmentFlags;
  if (listed.has('--permission')) return '--permission';
  if (listed.has('--experimental-permission')) return '--experimental-permission';
  return undefined;
}

function permissionProbeFlags(flag: string): string[] {
  return [flag, '--allow-worker', '--no-warnings'];
}

/**
 * Node flags for a process that may read every mount, write the writable ones, start worker threads (Pyodide
 * runs on one) and nothing else: no child processes, no native addons, no inspector. The model cannot take
 * back part of a writable folder, so read-only mounts inside writable ones hold only by the OS sandbox.
 */
export function permissionFlags(mounts: readonly Mount[]): string[] {
  const enable = permissionModelFlag();
  if (!enable) return [];
  return [
    enable,
    ...outermost(mounts.map((mount) => mount.path)).map((dir) => `--allow-fs-read=${dir}`),
    ...outermost(mounts.filter((mount) => mount.writable).map((mount) => mount.path)).map(
      (dir) => `--allow-fs-write=${dir}`,
    ),
    '--allow-worker',
    '--no-warnings',
  ];
}

/** Only what Node itself needs: the host's variables (tokens, paths, proxies) never reach a confined process. */
export function minimalEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Inside VS Code, process.execPath is Electron, which only behaves as Node with this set.
  if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
  // Windows system libraries (crypto, sockets) locate themselves through it.
  if (process.platform === 'win32' && process.env.SystemRoot) env.SystemRoot = process.env.SystemRoot;
  return env;
}

/**
 * The paths not inside another one: Node 20 refuses a folder outright when a path inside it is granted as
 * well (measured: `--allow-fs-read=/a --allow-fs-read=/a/b` denies reading /a), and the outer grant covers it.
 */
function outermost(paths: string[]): string[] {
  return paths.filter(
    (candidate, index) =>
      !paths.some((other, otherIndex) => otherIndex !== index && other !== candidate && isInside(candidate, other)),
  );
}
