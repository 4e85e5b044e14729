// Messages between the backend (extension or CLI process), the confined host process it starts, and the
// worker thread inside the host that runs Pyodide. Backend <-> host messages travel as JSON frames
// (framing.ts) over two pipes; the backend checks every one it receives against their schema, which is their one
// definition (hostMessages.ts), because the host process is within reach of the code it runs. Host <-> worker
// messages are structured clones.
import type { MessagePort } from 'node:worker_threads';
import type { Mount } from '../../sandbox/fileView';
import type { NetworkAccess } from '../../sandbox/index';
import type { ScriptRun, StreamName } from '../../types';
import type { FromHost } from './hostMessages';

/** File descriptors of the host process: it reads the backend's messages from one and writes its own to the other. */
export const HOST_INPUT_FD = 3;
export const HOST_OUTPUT_FD = 4;
/**
 * Where the Pyodide thread writes workspace writes for the server to make, and reads its answers, when the server
 * makes them (sandbox/writeProxyWire.ts).
 */
export const HOST_WRITE_REQUEST_FD = 5;
export const HOST_WRITE_REPLY_FD = 6;
/** The file a starting host writes a new memory snapshot to, in the outbox the backend gave it. */
export const OUTBOX_SNAPSHOT = 'snapshot';
/** The file a starting host writes V8's code cache of Pyodide's Emscripten script to (emscriptenScript.ts). */
export const OUTBOX_CODE_CACHE = 'code-cache';

export type { StreamName };
export type { FromHost, HostOutcome, LogLevel, OutputChunk, PackagesReply, ReadyInfo } from './hostMessages';

/** Passed to the host process as its only command-line argument (JSON). */
export interface HostConfig {
  /** Read-only inside the sandbox: the verified snapshot and the package cache. */
  cacheDir: string;
  heapLimitMb: number;
  /** Host folder mounted at the same path in Pyodide's file system, so files saved there can be shown. */
  scratchDir?: string;
  /** The cached snapshot to start from, if its bytes hash to `sha256` (checked by the host as it reads them). */
  snapshot?: SnapshotRef;
  /** V8's code cache of Pyodide's Emscripten script, if its bytes hash to `sha256` (checked as it is read). */
  codeCache?: SnapshotRef;
  /**
   * With no snapshot or no code cache to start from: the folder to write the new ones into (OUTBOX_SNAPSHOT,
   * OUTBOX_CODE_CACHE), before any user code runs.
   */
  outbox?: string;
  network: NetworkAccess;
  /** How a person turns the network on, named when code finds it off (the front end's setting). */
  networkSetting?: string;
  /** Host folders mounted at their own paths in Pyodide's file system; the first is where sessions start. */
  workspaceRoots: string[];
  /** What the sandbox lets the process read and write (sandbox/fileView.ts), so Python hears of a refused write at once. */
  mounts: Mount[];
  /**
   * Workspace folders the sandbox mounts read-only although they are writable: Pyodide's file layer asks the
   * server to make each write there (sandbox/writeProxy.ts).
   */
  writesThroughServer: string[];
}

/** A cached memory snapshot and the hash recorded when it was cached. */
export interface SnapshotRef {
  file: string;
  sha256: string;
}

export interface RunMessage {
  type: 'run';
  runId: string;
  code: string;
  script?: ScriptRun;
  /** Show the value of the code's last expression (RunOptions.echoLastExpression). */
  echoLastExpression: boolean;
  outputCapBytes: number;
}

export type HostCallReply =
  | { type: 'hostCallReply'; id: number; ok: true; value: unknown }
  | { type: 'hostCallReply'; id: number; ok: false; error: string };

/** One step of an install, prepared by the backend (wheel bytes already read and checked). */
export type InstallStep =
  | { kind: 'wheel'; name: string; filename: string; base64: string }
  /** A package of the Pyodide distribution, its files already in the package cache. */
  | { kind: 'pyodide'; name: string }
  | { kind: 'micropip'; name: string; requirement: string };

/** Install `steps` in order, then report the versions of `versionsOf` (a check has no steps). */
export interface PackagesMessage {
  type: 'packages';
  id: number;
  steps: InstallStep[];
  versionsOf: string[];
}

/** Backend -> host, over the child process IPC channel. */
export type ToHost = RunMessage | { type: 'interrupt' } | HostCallReply | PackagesMessage;

/** The worker's `workerData`: the host's own config, and the shared buffers the host owns, one set per worker. */
export interface WorkerInit extends HostConfig {
  indexURL: string;
  /** Int32Array[1] handed to pyodide.setInterruptBuffer; the host writes 2 to raise KeyboardInterrupt. */
  interruptBuffer: SharedArrayBuffer;
  /** Int32Array[1] counter the host bumps (and notifies) after posting a host-call reply or an interrupt. */
  callSignal: SharedArrayBuffer;
  /** Byte ring (see ring.ts) carrying stdout/stderr from the worker to the host. */
  outputRing: SharedArrayBuffer;
  /** Where host-call replies arrive; read synchronously with receiveMessageOnPort while Python waits. */
  replyPort: MessagePort;
}

/** Host -> worker. */
export type ToWorker = RunMessage | PackagesMessage;

/**
 * Host -> worker, first and once, to a worker given a snapshot: the host reads and checks it while the worker
 * thread starts and loads Pyodide's script.
 */
export type SnapshotMessage = { type: 'snapshot'; buffer: ArrayBuffer } | { type: 'snapshot'; rejected: string };

/** Worker -> host: what the host passes on to the backend as it is, and what it handles itself. */
export type FromWorker =
  | Extract<FromHost, { type: 'ready' | 'packagesDone' | 'log' | 'fatal' }>
  | (Omit<Extract<FromHost, { type: 'result' }>, 'output'> & { recycle: boolean })
  /** Sent while a cell runs (display() or an open figure); the host tags it with the run. */
  | Omit<Extract<FromHost, { type: 'display' }>, 'runId'>
  | Omit<Extract<FromHost, { type: 'hostCall' }>, 'runId'>
  /** The writer found the output ring changed behind its back (ring.ts): the instance cannot be trusted. */
  | { type: 'ringCorrupt'; message: string };
