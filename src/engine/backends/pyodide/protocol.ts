// Messages between the backend (extension or CLI process), the confined host process it starts, and the
// worker thread inside the host that runs Pyodide. Backend <-> host messages travel as JSON frames
// (framing.ts) over two pipes; the backend validates every one it receives (hostMessages.ts), because the
// host process is within reach of the code it runs. Host <-> worker messages are structured clones.
import type { MessagePort } from 'node:worker_threads';
import type { Mount } from '../../sandbox/fileView';
import type { NetworkAccess } from '../../sandbox/index';
import type { ScriptRun, StreamName } from '../../types';
import type { BackendDisplay, BackendOutcome } from '../contract';

/** File descriptors of the host process: it reads the backend's messages from one and writes its own to the other. */
export const HOST_INPUT_FD = 3;
export const HOST_OUTPUT_FD = 4;
/** The file a starting host writes a new memory snapshot to, in the outbox the backend gave it. */
export const OUTBOX_SNAPSHOT = 'snapshot';
/** The file a starting host writes V8's code cache of Pyodide's Emscripten script to (emscriptenScript.ts). */
export const OUTBOX_CODE_CACHE = 'code-cache';

export type LogLevel = 'info' | 'warn' | 'error';
export type { StreamName };

/** Text a run wrote, or how many bytes of a stream the worker dropped at that point to stay within the cap. */
export type OutputChunk = { stream: StreamName; text: string } | { stream: StreamName; dropped: number };

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
}

/** A cached memory snapshot and the hash recorded when it was cached. */
export interface SnapshotRef {
  file: string;
  sha256: string;
}

/** What the worker reports once Pyodide can run code. */
export interface ReadyInfo {
  pyodideVersion: string;
  pythonVersion: string;
  fromSnapshot: boolean;
  /** Why the snapshot it was given was not used (unreadable, not the bytes that were cached, or not restorable). */
  snapshotRejected?: string;
  /**
   * V8's code cache of Pyodide's script: read from the one it was given, not (none given, or refused), or not
   * possible in this runtime (emscriptenScript.ts).
   */
  codeCache: 'used' | 'unused' | 'unsupported';
  /** Why the code cache it was given was not used (unreadable, not the bytes that were cached, or refused by V8). */
  codeCacheRejected?: string;
  loadMs: number;
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

export interface PackagesReply {
  type: 'packagesDone';
  id: number;
  /** One per step: undefined when it worked, else why not. */
  errors: (string | undefined)[];
  versions: Record<string, string | null>;
  /** The whole request failed (the worker died); nothing above is known. */
  failed?: string;
}

/** Backend -> host, over the child process IPC channel. */
export type ToHost = RunMessage | { type: 'interrupt' } | HostCallReply | PackagesMessage;

/** Host -> backend. */
export type FromHost =
  | ({ type: 'ready' } & ReadyInfo)
  /**
   * Between runs, the instance was lost (its worker failed, its ring was corrupted): the backend ends this process.
   * A loss during a run is that run's crashed result instead.
   */
  | { type: 'lost'; reason: string }
  | ({ type: 'output'; runId: string } & OutputChunk)
  | { type: 'display'; runId: string; display: BackendDisplay }
  /** `output` is what the run wrote since the last 'output' message: one message instead of two on the fast path. */
  | { type: 'result'; runId: string; outcome: BackendOutcome; output: OutputChunk[] }
  /** Made by the code of run `runId`: the backend answers only calls of the run it has under way. */
  | { type: 'hostCall'; id: number; runId: string; method: string; params: unknown }
  | PackagesReply
  | { type: 'log'; level: LogLevel; message: string }
  /** Pyodide cannot be loaded at all; the host exits after sending this. */
  | { type: 'fatal'; message: string };

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

/** Worker -> host. */
export type FromWorker =
  | ({ type: 'ready' } & ReadyInfo)
  | { type: 'result'; runId: string; outcome: BackendOutcome; recycle: boolean }
  /** Sent while a cell runs (display() or an open figure); the host tags it with the run. */
  | { type: 'display'; display: BackendDisplay }
  | { type: 'hostCall'; id: number; method: string; params: unknown }
  | PackagesReply
  | { type: 'log'; level: LogLevel; message: string }
  /** The writer found the output ring changed behind its back (ring.ts): the instance cannot be trusted. */
  | { type: 'ringCorrupt'; message: string }
  | { type: 'fatal'; message: string };
