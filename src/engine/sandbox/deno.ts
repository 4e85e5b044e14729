// Deno's permission model: the boundary where bubblewrap cannot run (macOS, Windows, Linux without
// unprivileged user namespaces). The Pyodide host runs as `deno run` with no grant flags: every permission
// check is answered by the server's broker (denoBroker.ts), which allows reads in the folders of the file view
// and writes in its writable ones, judged by where a path really leads, the network only when it is on, and
// nothing else (no processes, native code, environment or system information). Deno checks every operation of
// every realm in the process, workers included, so signals, sockets, subprocesses and native code stay out of
// reach of whatever Python or a fresh JavaScript realm does.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { findOnPath } from '../executables';
import { assetsDir } from '../paths';

/** The Deno release the extension is built and tested with (package.json's optional dependency). */
export const DENO_VERSION = '2.9.6';
/** The first Deno that asks a permission broker (DENO_PERMISSION_BROKER_PATH), which this sandbox relies on. */
const BROKER_SINCE = [2, 5, 3];
/** Where the packaged extension carries its platform's binary, under dist/ (scripts/package-targets.mjs puts it there). */
const BUNDLED_DENO_DIR = 'deno';
const HOW_TO_GET_DENO = `install it with "npm install deno@${DENO_VERSION}" where Code Mode is installed, put deno (2.5.3 or later) on PATH, or install the platform-specific package of the extension`;

let probed: { binary: string; version: string } | { unavailable: string } | undefined;

/** The Deno binary this machine can run: the extension's own, the optional dependency's, or one on PATH. */
export function deno(): { binary: string; version: string } | { unavailable: string } {
  if (probed) return probed;
  const candidates = [bundledBinary(), dependencyBinary(), findOnPath('deno')].filter((file): file is string => !!file);
  const refused: string[] = [];
  for (const binary of candidates) {
    const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000, env: denoEnvironment() });
    const version = /^deno (\d+)\.(\d+)\.(\d+)/.exec(result.stdout ?? '');
    if (result.status === 0 && version && brokerSupported(version.slice(1).map(Number)))
      return (probed = { binary, version: version[0].slice(5) });
    refused.push(
      `${binary}: ${version ? `version ${version[0].slice(5)} is older than ${BROKER_SINCE.join('.')}` : (result.stderr || result.error?.message || `exit ${result.status}`).trim()}`,
    );
  }
  const why = refused.length ? `no usable Deno (${refused.join('; ')})` : 'Deno is not installed';
  return (probed = { unavailable: `${why}: ${HOW_TO_GET_DENO}` });
}

function brokerSupported(version: number[]): boolean {
  const newer = BROKER_SINCE.findIndex((part, i) => version[i] !== part);
  return newer < 0 || version[newer] > BROKER_SINCE[newer];
}

/** dist/deno/deno[.exe] in a platform-specific package of the extension. */
function bundledBinary(): string | undefined {
  const file = path.join(assetsDir(), BUNDLED_DENO_DIR, executableName());
  if (!fs.existsSync(file)) return undefined;
  // The package keeps the executable bit; an unpacker that drops it would leave the binary unusable.
  if (process.platform !== 'win32' && !executable(file)) {
    try {
      fs.chmodSync(file, 0o755);
    } catch {
      // A read-only installation: the probe then says why the binary cannot run.
    }
  }
  return file;
}

/** The binary of the `@deno/<platform>` package that npm installed beside the `deno` package (the CLI). */
function dependencyBinary(): string | undefined {
  const target = denoTarget();
  if (!target) return undefined;
  try {
    // Resolved from the package root, as the bundle itself sits in dist/.
    const manifest = createRequire(path.join(path.dirname(assetsDir()), 'package.json')).resolve(
      `@deno/${target}/package.json`,
    );
    const file = path.join(path.dirname(manifest), executableName());
    return fs.existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** The `@deno/*` package name of this platform, as the `deno` package's installer names them; undefined where Deno ships none. */
export function denoTarget(
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): string | undefined {
  if (arch !== 'x64' && arch !== 'arm64') return undefined;
  if (platform === 'linux') return `linux-${arch}-glibc`;
  if (platform === 'darwin' || platform === 'win32') return `${platform}-${arch}`;
  return undefined;
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function executableName(): string {
  return process.platform === 'win32' ? 'deno.exe' : 'deno';
}

export interface DenoRun {
  /** The host script and its arguments. */
  script: string[];
  v8Flags?: string[];
}

/**
 * `deno run` arguments for `run`: no grant at all. Every check of files and the network is asked of the server's
 * permission broker (denoBroker.ts), which answers from real paths; a Deno that did not ask it could do nothing.
 * No module comes from the network or npm, and none is imported from anywhere but the host's own files.
 */
export function denoArgs(run: DenoRun): string[] {
  return [
    'run',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    // Deno's warning that the broker is experimental, on every start; errors still show.
    '--quiet',
    // Remote and npm modules would be downloaded: code from Python could fetch and run anything with them.
    '--no-remote',
    '--no-npm',
    '--deny-import',
    ...(run.v8Flags?.length ? [`--v8-flags=${run.v8Flags.join(',')}`] : []),
    ...run.script,
  ];
}

/** Deno's environment: no update check, no colour codes in what it prints, its cache where the session may keep it. */
export function denoEnvironment(denoDir?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
  if (denoDir) env.DENO_DIR = denoDir;
  if (process.platform === 'win32' && process.env.SystemRoot) env.SystemRoot = process.env.SystemRoot;
  return env;
}
