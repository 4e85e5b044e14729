// Deno's permission model: the boundary where bubblewrap cannot run (macOS, Windows, Linux without
// unprivileged user namespaces). The Pyodide host runs as `deno run` with no --allow-run, --allow-ffi,
// --allow-env, --allow-sys or --allow-net (unless the network setting is on), reads granted only to the
// folders of the file view and writes only to its writable ones, less the read-only folders inside them. Deno
// checks every operation of every realm in the process, workers included (a worker can narrow its permissions,
// never widen them), so signals, sockets, subprocesses and native code stay out of reach of whatever Python or
// a fresh JavaScript realm does.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { findOnPath } from '../executables';
import { assetsDir } from '../paths';
import { isInside, writableIn, type Mount } from './fileView';

/** The Deno release the extension is built and tested with (package.json's optional dependency). */
export const DENO_VERSION = '2.9.6';
/** Where the packaged extension carries its platform's binary, under dist/ (scripts/package-targets.mjs puts it there). */
const BUNDLED_DENO_DIR = 'deno';
const HOW_TO_GET_DENO = `install it with "npm install deno@${DENO_VERSION}" where Code Mode is installed, put deno (2.x) on PATH, or install the platform-specific package of the extension`;

let probed: { binary: string; version: string } | { unavailable: string } | undefined;

/** The Deno binary this machine can run: the extension's own, the optional dependency's, or one on PATH. */
export function deno(): { binary: string; version: string } | { unavailable: string } {
  if (probed) return probed;
  const candidates = [bundledBinary(), dependencyBinary(), findOnPath('deno')].filter((file): file is string => !!file);
  const refused: string[] = [];
  for (const binary of candidates) {
    const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000, env: denoEnvironment() });
    const version = /^deno (\d+)\.(\d+)\.(\d+)/.exec(result.stdout ?? '');
    // --deny-write and --deny-import, which this sandbox relies on, came with Deno 2.
    if (result.status === 0 && version && Number(version[1]) >= 2)
      return (probed = { binary, version: version[0].slice(5) });
    refused.push(
      `${binary}: ${version ? `version ${version[0].slice(5)} is older than 2` : (result.stderr || result.error?.message || `exit ${result.status}`).trim()}`,
    );
  }
  const why = refused.length ? `no usable Deno (${refused.join('; ')})` : 'Deno is not installed';
  return (probed = { unavailable: `${why}: ${HOW_TO_GET_DENO}` });
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
  mounts: readonly Mount[];
  network: 'off' | 'on';
  /** Symbolic links found in the mounts that lead out of what they may read or write (symlinkDenials). */
  links: LinkDenials;
  v8Flags?: string[];
}

/**
 * `deno run` arguments for `run`: every mount readable, writable mounts writable and the read-only mounts
 * inside them denied writing (Deno lets a deny win over an allow), no import from anywhere but the granted
 * folders, and nothing else.
 */
export function denoArgs(run: DenoRun): string[] {
  const writable = run.mounts.filter((mount) => mount.writable).map((mount) => mount.path);
  const readOnlyInsideWritable = run.mounts
    .filter((mount) => !mount.writable && writable.some((dir) => isInside(mount.path, dir)))
    .map((mount) => mount.path);
  const denyRead = run.links.denyRead;
  const denyWrite = [...readOnlyInsideWritable, ...run.links.denyWrite];
  const readable = grantable(
    run.mounts.map((mount) => mount.path),
    denyRead,
  );
  const writableGranted = grantable(writable, [...denyRead, ...denyWrite]);
  return [
    'run',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    // Remote and npm modules would be downloaded: code from Python could fetch and run anything with them.
    '--no-remote',
    '--no-npm',
    '--deny-import',
    `--allow-read=${pathList(readable)}`,
    ...(writableGranted.length ? [`--allow-write=${pathList(writableGranted)}`] : []),
    ...(denyRead.some(expressible) ? [`--deny-read=${pathList(denyRead.filter(expressible))}`] : []),
    ...(denyWrite.some(expressible) ? [`--deny-write=${pathList(denyWrite.filter(expressible))}`] : []),
    ...(run.network === 'on' ? ['--allow-net'] : []),
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

function pathList(paths: string[]): string {
  return paths.join(',');
}

/** Deno splits permission lists on commas, with no escape (measured on 2.9.6): a path with one cannot be named. */
function expressible(target: string): boolean {
  return !target.includes(',');
}

/**
 * The grants of `paths` that can be made safely: a path Deno cannot name is not granted, and neither is one
 * holding a denial Deno cannot name (it could not be taken back). Leaving a folder out only takes access away.
 */
function grantable(paths: string[], denials: string[]): string[] {
  const unnamable = denials.filter((denial) => !expressible(denial));
  return paths.filter((grant) => expressible(grant) && !unnamable.some((denial) => isInside(denial, grant)));
}

export interface LinkDenials {
  denyRead: string[];
  denyWrite: string[];
  /** Entries were left unexamined: the walk stopped at its bound. */
  truncated: boolean;
}

/** A walk past this many entries stops (a workspace with a huge tree); the backend logs that it did. */
export const MAX_WALKED_ENTRIES = 50_000;

/**
 * Deno checks the path it is given, not where a symbolic link leads (measured on 2.9.6: with read access to
 * a folder, a link in it to /etc/hostname reads that file). Code in the sandbox cannot make a link (Deno.symlink
 * needs unrestricted read and write), but the workspace may hold some already: each link that leads outside
 * what its mounts may read is denied reading and writing, and each that leads from a writable place to a
 * read-only one (or to nothing, where a write would create the target) is denied writing. bubblewrap needs
 * none of this: a link there resolves inside the sandbox's own view.
 */
export function symlinkDenials(mounts: readonly Mount[], maxEntries = MAX_WALKED_ENTRIES): LinkDenials {
  const denials: LinkDenials = { denyRead: [], denyWrite: [], truncated: false };
  const readable = mounts.map((mount) => mount.path);
  let walked = 0;
  const pending = outermostPaths(readable);
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++walked > maxEntries) {
        denials.truncated = true;
        return denials;
      }
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.isSymbolicLink()) denyLink(full, mounts, readable, denials);
    }
  }
  return denials;
}

function denyLink(link: string, mounts: readonly Mount[], readable: string[], denials: LinkDenials): void {
  let target: string | undefined;
  try {
    target = fs.realpathSync(link);
  } catch {
    target = undefined;
  }
  if (target === undefined || !readable.some((dir) => isInside(target, dir))) {
    denials.denyRead.push(link);
    denials.denyWrite.push(link);
  } else if (writableIn(link, mounts) && !writableIn(target, mounts)) {
    denials.denyWrite.push(link);
  }
}

/** The paths not inside another one: walking an inner one again would find its links twice. */
function outermostPaths(paths: string[]): string[] {
  return [...new Set(paths)].filter(
    (candidate) => !paths.some((other) => other !== candidate && isInside(candidate, other)),
  );
}
