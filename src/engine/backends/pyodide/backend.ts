// The Pyodide backend: one confined host process per session (host.ts), which runs Pyodide on a worker thread
// (worker.ts). A separate process means nothing Python does (runaway memory, a wasm abort, a stuck C loop)
// can take the extension or CLI down, and a restart is a plain SIGKILL. The process is confined by the
// sandbox (sandbox/index.ts), and everything it sends is checked (hostMessages.ts) before it is believed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assetsDir } from '../../paths';
import { sandboxReport, type NetworkAccess, type SandboxChoice, type SandboxReport } from '../../sandbox/index';
import { type Logger, silentLogger } from '../../types';
import type { BackendFactory } from '../contract';
import type { SharedSetup } from './hostLaunch';
import { sandboxBounds } from './sandboxBounds';
import { PyodideSession } from './session';
import { SHIPPED_SNAPSHOT_DIR, SnapshotCache } from './snapshotCache';

export interface PyodideBackendConfig {
  /**
   * Cap on the WebAssembly heap of each instance in MB; runaway allocation raises MemoryError there and the
   * instance is recycled. Default 1024; at least 64; values above 4096 mean no cap beyond wasm's own 4 GiB.
   */
  heapLimitMb?: number;
  /** Where the Pyodide memory snapshot and packages are cached (shared by all sessions; read-only to Python). */
  cacheDir: string;
  /** Whether code in Pyodide may use the network (default off). */
  network?: NetworkAccess;
  /** What confines the host process (default auto: bubblewrap where it works, else Deno); see sandbox/index.ts. */
  sandbox?: SandboxChoice;
  /** Whether code in Pyodide may change files in the workspace folders (default: it sees them read-only). */
  workspaceWritable?: boolean;
  /**
   * Files the host reads as configuration (a --servers file), read-only to Pyodide wherever they are, on top
   * of the protected names at the top of every workspace folder (sandbox/fileView.ts).
   */
  protectedPaths?: string[];
  /**
   * The folder of the memory snapshots shipped with the build, which an empty cache starts from (default
   * dist/pyodide-snapshot/). false: none, so a first start makes its snapshot (what tests of that start need).
   */
  shippedSnapshotDir?: string | false;
  /** Backend-level messages; each session also logs to its own BackendSessionOptions.log. */
  log?: Logger;
}

const DEFAULT_HEAP_LIMIT_MB = 1024;
/** Below this a Pyodide instance cannot even start. */
const MIN_HEAP_LIMIT_MB = 64;
/** 32-bit WebAssembly cannot address more: a larger limit is no limit. */
const MAX_HEAP_LIMIT_MB = 4096;

export function createPyodideBackend(config: PyodideBackendConfig): BackendFactory {
  const requested = config.heapLimitMb ?? DEFAULT_HEAP_LIMIT_MB;
  if (!(requested >= MIN_HEAP_LIMIT_MB))
    throw new RangeError(`heapLimitMb must be at least ${MIN_HEAP_LIMIT_MB}, got ${requested}`);
  const heapLimitMb = Math.min(Math.floor(requested), MAX_HEAP_LIMIT_MB);
  const backendLog = config.log ?? silentLogger;
  const network = config.network ?? 'off';
  const sandboxChoice = config.sandbox ?? 'auto';
  const workspaceWritable = config.workspaceWritable ?? false;
  const report = (): SandboxReport => sandboxReport(network, sandboxChoice);
  let shared: SharedSetup | undefined;
  // Created on first use: the folders and the snapshot check cost nothing until Pyodide is wanted.
  const setup = (): SharedSetup => {
    if (shared) return shared;
    fs.mkdirSync(config.cacheDir, { recursive: true });
    // Bound into the sandbox at its own path, so the path must not go through symlinks.
    const cacheDir = fs.realpathSync(config.cacheDir);
    const sandbox = report();
    const shippedDir = config.shippedSnapshotDir ?? path.join(assetsDir(), SHIPPED_SNAPSHOT_DIR);
    for (const gap of sandbox.gaps) backendLog.warn(`Pyodide sandbox (${sandbox.mechanism}): ${gap}`);
    return (shared = {
      cacheDir,
      heapLimitMb,
      network,
      sandboxChoice,
      workspaceWritable,
      protectedPaths: (config.protectedPaths ?? []).map(realPathOfPossiblyMissing),
      snapshots: new SnapshotCache(
        cacheDir,
        pyodideDir(),
        path.join(assetsDir(), 'pyodide-worker.cjs'),
        backendLog,
        sandbox.mechanism === 'deno' ? 'deno' : undefined,
        shippedDir || undefined,
      ),
    });
  };
  return {
    kind: 'pyodide',
    create: (options) => new PyodideSession(setup, options, backendLog),
    sandbox: report,
    describe: async () => sandboxBounds(report().mechanism, heapLimitMb),
  };
}

function pyodideDir(): string {
  return path.join(assetsDir(), 'pyodide');
}

/** Mounts are compared by real path: a protected file's folder may be reached through a symlink. */
function realPathOfPossiblyMissing(target: string): string {
  const absolute = path.resolve(target);
  let folder = absolute;
  const rest: string[] = [];
  while (!fs.existsSync(folder) && path.dirname(folder) !== folder) {
    rest.unshift(path.basename(folder));
    folder = path.dirname(folder);
  }
  try {
    return path.join(fs.realpathSync(folder), ...rest);
  } catch {
    return absolute;
  }
}
