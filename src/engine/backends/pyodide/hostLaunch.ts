// Starting a session's confined Pyodide host process: what it may see (its file view), its configuration,
// the sandbox it runs in, and its pipes turned into checked messages for the session.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { errorText } from '../../errorText';
import { FrameDecoder, MAX_FRAME_FROM_INTERPRETER_BYTES } from '../../framing';
import { assetsDir } from '../../paths';
import { fileView, MAX_METADATA_WALK } from '../../sandbox/fileView';
import { sandboxReport, spawnConfinedHost, type NetworkAccess, type SandboxChoice } from '../../sandbox/index';
import { WriteProxy } from '../../sandbox/writeProxy';
import { serveWriteRequests } from '../../sandbox/writeRequests';
import type { Logger } from '../../types';
import type { BackendSessionOptions } from '../contract';
import { parseFromHost } from './hostMessages';
import {
  HOST_INPUT_FD,
  HOST_OUTPUT_FD,
  HOST_WRITE_REPLY_FD,
  HOST_WRITE_REQUEST_FD,
  type FromHost,
  type HostConfig,
  type SnapshotRef,
} from './protocol';
import { JS_HEAP_MB, sandboxDataLimitBytes, sandboxMemoryLimitMb, SandboxProcess } from './sandboxProcess';
import type { SnapshotCache, SnapshotOrigin } from './snapshotCache';

/** How much of the host process's own stderr is kept to explain a crash. */
const STDERR_KEPT_CHARS = 4000;
/**
 * Pyodide's WebAssembly compiled on the worker thread as it is instantiated, not by background tasks: those
 * held the worker's event loop for a while after every load, under Node and Deno alike (code still tiers up
 * to optimized code, so warm runs are as fast).
 */
const V8_FLAGS = ['--no-wasm-async-compilation'];

/** What every session of one backend shares. */
export interface SharedSetup {
  cacheDir: string;
  heapLimitMb: number;
  network: NetworkAccess;
  sandboxChoice: SandboxChoice;
  workspaceWritable: boolean;
  protectedPaths: string[];
  snapshots: SnapshotCache;
}

/** A started host process. */
export interface LaunchedHost {
  child: ChildProcess;
  toHost: Writable;
  /** The sandbox mechanism it runs under. */
  mechanism: string;
  /** Where a starting host writes a new snapshot or code cache, until the backend takes them. */
  outbox?: string;
  /** The snapshot it was told to start from, and where that came from. */
  snapshot?: SnapshotRef;
  snapshotOrigin?: SnapshotOrigin;
  /** The code cache it was told to use. */
  codeCache?: SnapshotRef;
  exited: Promise<void>;
  /** Its memory and its stops and starts, held from outside. */
  sandbox: SandboxProcess;
}

export interface HostListeners {
  message(message: FromHost): void;
  /** Whether one of its runs is under way: only then are its workspace writes made (sandbox/writeProxy.ts). */
  runUnderWay(): boolean;
  /**
   * It broke what the server holds it to (it is within reach of the code it runs): it sent something that is not a
   * valid message, or held more memory than its limit. `reason` is the server's own words.
   */
  malformed(reason: string): void;
  /** It ended, or could not be started; `reason` carries the end of what it wrote to stderr. */
  gone(reason: string): void;
}

export function launchHost(
  shared: SharedSetup,
  options: BackendSessionOptions,
  listeners: HostListeners,
): LaunchedHost {
  const log = options.log;
  const start = shared.snapshots.forStart();
  const snapshot = start?.snapshot;
  const codeCache = shared.snapshots.codeCacheForStart();
  const outbox = !snapshot || shared.snapshots.wantsCodeCache(codeCache) ? shared.snapshots.createOutbox() : undefined;
  const workspace = existingFolders(options.workspaceRoots ?? []);
  // The session's own folder (scratch.ts), bound read-write: no other session's is in this sandbox.
  const scratchDir = options.scratchDir && ensureFolder(options.scratchDir, log);
  const assets = fs.realpathSync(assetsDir());
  const view = (workspaceWritable: boolean) =>
    fileView({
      // The package cache, the snapshot and the code cache: read-only, so no session can change what another one loads.
      readOnly: [assets, shared.cacheDir, ...(workspaceWritable ? [] : workspace)],
      readWrite: [
        ...(workspaceWritable ? workspace : []),
        ...(scratchDir ? [scratchDir] : []),
        ...(outbox ? [outbox] : []),
      ],
      workspaceRoots: workspaceWritable ? workspace : [],
      protectedPaths: shared.protectedPaths,
    });
  // What the code may change. Deno asks its broker before each write; under bubblewrap the workspace is mounted
  // read-only and the server makes the writes these grants allow (sandbox/writeProxy.ts). Node's permission model
  // alone (no OS sandbox, no Deno) keeps its path grants, and says it is not complete.
  const grants = view(shared.workspaceWritable);
  const mechanism = sandboxReport(shared.network, shared.sandboxChoice).mechanism;
  const writesThroughServer = shared.workspaceWritable && mechanism === 'bubblewrap' ? workspace : [];
  const mounts = writesThroughServer.length > 0 ? view(false).mounts : grants.mounts;
  for (const root of grants.closed)
    log.warn(
      `${root} stays read-only in Pyodide although workspace write is on: it holds more than ${MAX_METADATA_WALK} entries, too many to look through for the repositories and virtual environments that must stay read-only`,
    );
  if (grants.skipped > 0)
    log.warn(
      `${grants.skipped} entries at the top of the workspace stay read-only in Pyodide: too many to mount one by one`,
    );
  const hostConfig: HostConfig = {
    cacheDir: shared.cacheDir,
    heapLimitMb: shared.heapLimitMb,
    scratchDir,
    snapshot,
    codeCache,
    outbox,
    network: shared.network,
    networkSetting: options.settingNames?.pyodideNetwork,
    workspaceRoots: workspace,
    mounts: grants.mounts,
    writesThroughServer,
  };
  const { child, report } = spawnConfinedHost(
    path.join(assets, 'pyodide-host.cjs'),
    [JSON.stringify(hostConfig)],
    // Deno's cache sits in the package cache: read-only to the code it runs, so no session can change what another one loads.
    {
      mounts,
      network: shared.network,
      cwd: assets,
      choice: shared.sandboxChoice,
      denoDir: path.join(shared.cacheDir, 'deno'),
      v8Flags: [...V8_FLAGS, `--max-old-space-size=${JS_HEAP_MB}`],
      dataLimitBytes: (runtime) => sandboxDataLimitBytes(sandboxMemoryLimitMb(shared.heapLimitMb), runtime),
      log,
    },
    writesThroughServer.length > 0 ? 4 : 2,
  );
  const writes =
    writesThroughServer.length > 0 ? new WriteProxy({ mounts: grants.mounts, network: shared.network }) : undefined;
  if (writes) {
    let refusalLogged = false;
    const pipes = child.stdio as unknown as Array<Readable & Writable>;
    serveWriteRequests(pipes[HOST_WRITE_REQUEST_FD]!, pipes[HOST_WRITE_REPLY_FD]!, {
      answer: (request, bytes) => {
        if (listeners.runUnderWay()) return writes.answer(request, bytes);
        // Logged once: code could send these in a loop.
        if (!refusalLogged)
          log.warn(`[pyodide ${child.pid}] a workspace write refused: it came while no run was under way`);
        refusalLogged = true;
        return { error: { code: 'EACCES', message: 'the workspace is written only while a cell runs' } };
      },
      malformed: (reason) => listeners.malformed(`malformed workspace write from the Pyodide process: ${reason}`),
    });
  }
  let stderrTail = '';
  let markExited = (): void => undefined;
  const exited = new Promise<void>((resolve) => {
    markExited = resolve;
    child.once('exit', () => resolve());
  });
  // A pipe breaking as the process dies is reported by its exit, not as an error of its own.
  for (const stream of child.stdio) stream?.on('error', () => undefined);
  child.stdout!.setEncoding('utf8').on('data', (text: string) => log.info(`[pyodide ${child.pid}] ${text.trimEnd()}`));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    stderrTail = (stderrTail + text).slice(-STDERR_KEPT_CHARS);
    log.warn(`[pyodide ${child.pid}] ${text.trimEnd()}`);
  });
  // Bounded from each frame's header, before its body is buffered: an oversized one ends the host.
  const decoder = new FrameDecoder(MAX_FRAME_FROM_INTERPRETER_BYTES);
  (child.stdio[HOST_OUTPUT_FD] as Readable).on('data', (chunk: Buffer) => {
    let messages: FromHost[];
    try {
      messages = decoder.push(chunk).map(parseFromHost);
    } catch (error) {
      listeners.malformed(`malformed message from the Pyodide process: ${errorText(error)}`);
      return;
    }
    for (const message of messages) listeners.message(message);
  });
  child.on('error', (error) => {
    log.error(`Pyodide host process error: ${error.message}`);
    // The runtime could not be executed at all: no 'exit' event will follow.
    if (child.pid === undefined) {
      markExited();
      listeners.gone(`could not start the Pyodide process: ${error.message}`);
    }
  });
  child.once('exit', (code, signal) => {
    writes?.dispose();
    if (outbox) shared.snapshots.discardOutbox(outbox);
    const how = signal
      ? `was killed (${signal})`
      : `exited with code ${code}${code !== null && code > 128 ? ` (signal ${code - 128})` : ''}`;
    // The process's own words, quoted: code in it can write anything there.
    const detail = stderrTail.trim() ? `; it wrote on stderr: ${JSON.stringify(stderrTail.trim())}` : '';
    listeners.gone(`the Pyodide process ${how}${detail}`);
  });
  return {
    child,
    toHost: child.stdio[HOST_INPUT_FD] as Writable,
    mechanism: report.mechanism,
    outbox,
    snapshot,
    snapshotOrigin: start?.origin,
    codeCache,
    exited,
    sandbox: new SandboxProcess(
      child,
      report.mechanism === 'bubblewrap',
      sandboxMemoryLimitMb(shared.heapLimitMb),
      (reason) => listeners.malformed(reason),
    ),
  };
}

/** `folder`, made again if someone removed it (the sandbox cannot bind a missing folder); undefined if it cannot be. */
function ensureFolder(folder: string, log: Logger): string | undefined {
  try {
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    return folder;
  } catch (error) {
    log.warn(`the scratch folder ${folder} could not be made, so this session has none: ${errorText(error)}`);
    return undefined;
  }
}

/** Real paths of the folders that exist: each is bound into the sandbox, and mounted in Pyodide, at that path. */
function existingFolders(folders: string[]): string[] {
  return folders.flatMap((folder) => {
    try {
      return fs.statSync(folder).isDirectory() ? [fs.realpathSync(folder)] : [];
    } catch {
      return [];
    }
  });
}
