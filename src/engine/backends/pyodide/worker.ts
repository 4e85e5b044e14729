// The worker thread that runs Pyodide inside the host process. While Python runs, this thread is busy, so
// whatever has to happen meanwhile (interrupts, forwarding output, answering host calls) is done by the
// host's main thread through shared memory; this side only reads it or blocks on it.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { PyodideInterface } from 'pyodide';
import type { BackendDisplay } from '../contract';
import codeModeSource from '../runtime/code_mode.py';
import { compileHarnessIntoSnapshot, HarnessCode } from './harnessCode';
import { loadEmscriptenScript, type LoadedScript } from './emscriptenScript';
import {
  HOST_WRITE_REPLY_FD,
  HOST_WRITE_REQUEST_FD,
  OUTBOX_CODE_CACHE,
  OUTBOX_SNAPSHOT,
  type FromWorker,
  type HostCallReply,
  type HostOutcome,
  type LogLevel,
  type SnapshotMessage,
  type ToWorker,
  type WorkerInit,
} from './protocol';
import { DISPLAY_MARK, RingCorruption, RingWriter, STDERR, STDOUT, type RecordTag, type StreamId } from './ring';
import { guardWorkerCreation, refusalsAsErrno, withholdProcessPowers } from './harden';
import { shimConstantsBinding } from './constantsBinding';
import { makeMemorySnapshot, restoreMemorySnapshot } from './pyodideSnapshots';
import { distributionUrl, packageCacheDir } from './packagePlan';
import { WorkerPackages } from './workerPackages';
import { CappedStream } from './cappedStream';
import { capHeapGrowth } from './heapCap';
import { refuseWritesWhereReadOnly } from './readOnlyMounts';
import { routeWorkspaceWrites, type AskServer, type EmscriptenOpen } from './workspaceWrites';
import { writeChannel } from './writeChannel';

type LoadPyodide = (typeof import('pyodide'))['loadPyodide'];
type PyodideOptions = NonNullable<Parameters<LoadPyodide>[0]>;

const init = workerData as WorkerInit;
const port = parentPort!;
const interruptBuffer = new Int32Array(init.interruptBuffer);
const callSignal = new Int32Array(init.callSignal);
const ring = new RingWriter(init.outputRing);

function post(message: FromWorker): void {
  port.postMessage(message);
}

function log(level: LogLevel, message: string): void {
  post({ type: 'log', level, message });
}

// ---- loading, with a cached memory snapshot ---------------------------------------------------------------

/** Pyodide's Emscripten script as it was loaded: the code cache to make from it, and what became of the one given. */
let emscripten: LoadedScript = { usedCache: false };

async function pyodideModule(): Promise<typeof import('pyodide')> {
  // Pyodide would import its Emscripten script as an ES module when it finds itself under Deno, where the
  // script then misses the CommonJS names it uses (__dirname, require); run first, as CommonJS, it sets the
  // global that Pyodide looks for before loading it, under Node and Deno alike.
  emscripten = await loadEmscriptenScript(init.indexURL, init.codeCache, init.outbox !== undefined);
  // Loaded from the copied package at run time: bundling it would break its own file lookups.
  return createRequire(__filename)(path.join(init.indexURL, 'pyodide.js')) as typeof import('pyodide');
}

/**
 * V8's code for the script and every function compiled so far, written for the backend to cache when this start
 * had none to use: after Pyodide's load and the harness's setup, so the functions they ran are in it, and before
 * any user code runs.
 */
function offerCodeCache(): void {
  if (!init.outbox || !emscripten.script || emscripten.usedCache) return;
  try {
    fs.writeFileSync(path.join(init.outbox, OUTBOX_CODE_CACHE), emscripten.script.createCachedData());
  } catch (error) {
    log('warn', `V8's code cache of Pyodide could not be written: ${String(error)}`);
  }
}

async function loadInstance(): Promise<{ py: PyodideInterface; fromSnapshot: boolean; snapshotRejected?: string }> {
  const { loadPyodide, version } = await pyodideModule();
  // Lock file and stdlib resolve inside the copied package. Distribution packages load from the package cache,
  // where the backend puts them checked against the lock file; what micropip pulls in beyond that Pyodide
  // fetches from the CDN into the same cache (checked by the backend afterwards).
  const options: PyodideOptions = {
    indexURL: init.indexURL,
    packageBaseUrl: distributionUrl(version),
    packageCacheDir: packageCacheDir(init.cacheDir, version),
  };
  if (init.snapshot) {
    const snapshot = await new Promise<SnapshotMessage>((resolve) => port.once('message', resolve));
    if ('rejected' in snapshot)
      return { py: await loadPyodide(options), fromSnapshot: false, snapshotRejected: snapshot.rejected };
    try {
      return {
        py: await restoreMemorySnapshot(loadPyodide, options, new Uint8Array(snapshot.buffer)),
        fromSnapshot: true,
      };
    } catch (error) {
      // Refused like a changed one (the backend discards it and the next start makes one), or every start would try it again.
      // Cut to what the backend takes in a ready message (hostMessages.ts).
      return {
        py: await loadPyodide(options),
        fromSnapshot: false,
        snapshotRejected: `it could not be restored (${String(error).slice(0, 1000)})`,
      };
    }
  }
  if (!init.outbox) return { py: await loadPyodide(options), fromSnapshot: false };
  // The backend caches what is written to the outbox (snapshotCache.ts); this instance starts from the same
  // snapshot, so every session begins identically.
  try {
    const snapshot = await makeMemorySnapshot(loadPyodide, options, compileHarnessIntoSnapshot);
    fs.writeFileSync(path.join(init.outbox, OUTBOX_SNAPSHOT), snapshot);
    return { py: await restoreMemorySnapshot(loadPyodide, options, snapshot), fromSnapshot: false };
  } catch (error) {
    log('warn', `Pyodide memory snapshot unavailable, starting without it: ${String(error)}`);
    return { py: await loadPyodide(options), fromSnapshot: false };
  }
}

// ---- output ---------------------------------------------------------------------------------------------

/** The ring was found changed behind the writer's back: the host is told once, and output goes nowhere after. */
let ringBroken = false;

function toRing(tag: RecordTag, bytes: Uint8Array): void {
  if (ringBroken) return;
  try {
    ring.write(tag, bytes);
  } catch (error) {
    if (!(error instanceof RingCorruption)) throw error;
    ringBroken = true;
    post({ type: 'ringCorrupt', message: error.message });
  }
}

const streams: Record<StreamId, CappedStream> = {
  [STDOUT]: new CappedStream(STDOUT, toRing),
  [STDERR]: new CappedStream(STDERR, toRing),
};

// ---- calls Python makes into this thread --------------------------------------------------------------------

let lastCallId = 0;
/** Whether a cell is running: only then does the host watch for interrupts that could end a waiting call. */
let cellRunning = false;

/** Workspace writes held back by the file layer (workspaceWrites.ts), sent before anyone outside could look. */
let sendHeldWrites = (): void => undefined;

/** Blocks Python until the host answers; returns JSON `[ok, value-or-error-text]` (see bootstrap.py). */
function hostCall(py: PyodideInterface, method: string, paramsJson: string): string {
  // Same rule as the CPython driver: asyncio tasks left running between cells cannot call out.
  if (!cellRunning) return JSON.stringify([false, 'host calls can only be made while a cell runs']);
  // A tool the call reaches may read what the code just wrote.
  sendHeldWrites();
  const id = ++lastCallId;
  post({ type: 'hostCall', id, method, params: JSON.parse(paramsJson) as unknown });
  for (;;) {
    const seen = Atomics.load(callSignal, 0);
    for (
      let received = receiveMessageOnPort(init.replyPort);
      received;
      received = receiveMessageOnPort(init.replyPort)
    ) {
      // Replies to calls abandoned by an earlier interrupt can still arrive; they are dropped here.
      const reply = received.message as HostCallReply;
      if (reply.id === id) return encodeReply(reply);
    }
    // Raises KeyboardInterrupt in the calling Python code, also for one Python's own poll took just before
    // the call; the reply, if it ever comes, is then ignored. The host bumps callSignal on interrupt.
    py.checkInterrupt();
    Atomics.wait(callSignal, 0, seen);
  }
}

/** A workspace write asked of the server (workspaceWrites.ts), on a channel of its own, only while a cell runs. */
const askServer: AskServer = (() => {
  const ask = writeChannel(HOST_WRITE_REQUEST_FD, HOST_WRITE_REPLY_FD);
  return (request, bytes) =>
    cellRunning
      ? ask(request, bytes)
      : { error: { code: 'EACCES', message: 'the workspace is written only while a cell runs' } };
})();

function encodeReply(reply: HostCallReply): string {
  if (!reply.ok) return JSON.stringify([false, reply.error]);
  try {
    return JSON.stringify([true, reply.value ?? null]);
  } catch (error) {
    return JSON.stringify([false, `host call result is not JSON-compatible: ${String(error)}`]);
  }
}

/** time.sleep replacement: waits on the interrupt buffer, so an interrupt ends the sleep at once. */
function sleepMs(py: PyodideInterface, ms: number): void {
  sendHeldWrites();
  // An interrupt Python's own poll already took is pending in Python, not in the buffer: raise it now.
  py.checkInterrupt();
  const deadline = performance.now() + ms;
  for (let left = ms; left > 0 && Atomics.load(interruptBuffer, 0) === 0; left = deadline - performance.now()) {
    Atomics.wait(interruptBuffer, 0, 0, left);
  }
  py.checkInterrupt();
}

// ---- running cells --------------------------------------------------------------------------------------

/**
 * bootstrap.py's `run`: the script arrives as JSON text (None when absent), the outcome leaves as JSON text; `echo`
 * shows the value of the code's last expression.
 */
type RunCell = (source: string, filename: string, scriptJson: string | undefined, echo: boolean) => string;

/**
 * What Pyodide polls for interrupts. CPython's check reads the buffer and then stores 0 in a separate step, so an
 * interrupt the host stores in between is lost, and a loop it should stop runs on (docs/performance.md says how often).
 * Reading through an atomic exchange takes and clears the value at once; the store of 0 that follows then has nothing
 * left to overwrite and is dropped.
 */
const signalBuffer = {
  get 0(): number {
    return Atomics.exchange(interruptBuffer, 0, 0);
  },
  set 0(_cleared: number) {
    // Already cleared by the exchange in the getter.
  },
};

/** "3.13.2": sys.version's first word, read without compiling anything (runPython would). */
function pythonVersionOf(py: PyodideInterface): string {
  const sys = py.pyimport('sys');
  try {
    return String(sys.version).split(' ')[0];
  } finally {
    sys.destroy();
  }
}

function setUp(py: PyodideInterface, harness: HarnessCode): RunCell {
  py.setInterruptBuffer(signalBuffer as unknown as Int32Array);
  py.setStdout({ write: (bytes: Uint8Array) => (streams[STDOUT].write(bytes), bytes.length) });
  py.setStderr({ write: (bytes: Uint8Array) => (streams[STDERR].write(bytes), bytes.length) });
  // No terminal behind this process: reading fd 0 gets end-of-file (input() and sys.stdin ask the host instead).
  py.setStdin({ stdin: () => undefined });
  mountHostFolders(py);
  const scope = py.globals.get('dict')();
  try {
    harness.exec('bootstrap', scope);
    const install = scope.get('install');
    const compiled = [harness.take('cell'), harness.take('displays'), harness.take('userInput')];
    const [cellCode, displaysCode, userInputCode] = compiled;
    try {
      return install(
        cellCode,
        JSON.stringify({ code_mode: codeModeSource }),
        (method: string, params: string) => hostCall(py, method, params),
        (ms: number) => sleepMs(py, ms),
        displaysCode,
        showDisplay,
        // undefined arrives as None (null would be JsNull).
        init.scratchDir,
        init.network === 'off' ? NETWORK_OFF_MESSAGE : undefined,
        userInputCode,
      ) as RunCell;
    } finally {
      for (const code of compiled) code.destroy();
      install.destroy();
    }
  } finally {
    scope.destroy();
  }
}

/**
 * The scratch folder and the workspace folders, each at its host path: a path Python prints is where the engine
 * finds the file (see displayFiles.ts), and a person's file runs from its own folder. Whether a folder is
 * writable is the sandbox's decision (a read-only bind), not this mount's.
 */
function mountHostFolders(py: PyodideInterface): void {
  for (const folder of [...(init.scratchDir ? [init.scratchDir] : []), ...init.workspaceRoots]) {
    try {
      py.FS.mkdirTree(folder);
      py.mountNodeFS(folder, folder);
    } catch (error) {
      log('warn', `the folder ${folder} could not be mounted in Pyodide: ${String(error)}`);
    }
  }
  refuseWritesWhereReadOnly(py, init.mounts);
  sendHeldWrites = routeWorkspaceWrites(
    init.writesThroughServer,
    askServer,
    (text) => streams[STDERR].write(new TextEncoder().encode(`${text}\n`)),
    py.FS as unknown as EmscriptenOpen,
  );
  const start = init.workspaceRoots[0];
  try {
    if (start) py.FS.chdir(start);
  } catch (error) {
    log('warn', `could not start in the workspace folder ${start}: ${String(error)}`);
  }
}

/** display() and open figures (displays.py), as JSON; only a running cell's displays belong to a result. */
function showDisplay(json: string): void {
  if (!cellRunning) return;
  const display = JSON.parse(json) as BackendDisplay;
  // Its place among the text written before and after it (see ring.ts).
  toRing(DISPLAY_MARK, new Uint8Array(0));
  post({ type: 'display', display });
}

type PythonErrorClass = PyodideInterface['ffi']['PythonError'];

function outcomeOfThrow(PythonError: PythonErrorClass, error: unknown): { outcome: HostOutcome; recycle: boolean } {
  // run_cell catches everything the user's code raises; what escapes it was raised while it reported
  // (an interrupt landing in its flush, memory too exhausted to build the result) or is a Pyodide fatal error.
  if (error instanceof PythonError) {
    if (error.type === 'KeyboardInterrupt') return { outcome: { status: 'interrupted' }, recycle: false };
    const message = error.message.trimEnd().split('\n').pop() ?? error.type;
    const outcome: HostOutcome = {
      status: 'error',
      errorType: 'RuntimeError',
      excName: error.type,
      message,
      traceback: error.message,
    };
    return { outcome, recycle: false };
  }
  return { outcome: { status: 'crashed', message: `Pyodide failed: ${String(error)}` }, recycle: true };
}

/** Said by every refused network call; the sandbox has no network in any case (see sandbox/bubblewrap.ts). */
const NETWORK_OFF_MESSAGE = `network access is off in the Pyodide sandbox${init.networkSetting ? `; allow it with ${init.networkSetting}` : ''}`;

/** fetch is what pyodide.http and micropip use: refuse it with a message that names the setting. */
function refuseFetch(): void {
  const refuse = () => Promise.reject(new TypeError(NETWORK_OFF_MESSAGE));
  Object.defineProperty(globalThis, 'fetch', { value: refuse, writable: false, configurable: false });
}

async function main(): Promise<void> {
  const started = performance.now();
  const heapLoaded = capHeapGrowth(init.heapLimitMb);
  shimConstantsBinding();
  refusalsAsErrno();
  const { py, fromSnapshot, snapshotRejected } = await loadInstance();
  heapLoaded(py);
  const harness = new HarnessCode(py);
  const runCell = setUp(py, harness);
  const packages = new WorkerPackages(py, log, harness);
  harness.dispose();
  // Read now: after a fatal error every property of the instance throws.
  const PythonError = py.ffi.PythonError;
  const pythonVersion = pythonVersionOf(py);
  offerCodeCache();
  withholdProcessPowers();
  guardWorkerCreation();
  if (init.network === 'off') refuseFetch();
  let cells = 0;

  port.on('message', (message: ToWorker) => {
    if (message.type === 'packages') {
      void packages.handle(message).then(post);
      return;
    }
    for (const stream of Object.values(streams)) stream.begin(Math.max(0, Math.floor(message.outputCapBytes / 2)));
    let outcome: HostOutcome;
    let recycle = false;
    cellRunning = true;
    try {
      outcome = JSON.parse(
        runCell(
          message.code,
          `<cell ${++cells}>`,
          message.script && JSON.stringify(message.script),
          message.echoLastExpression !== false,
        ),
      ) as HostOutcome;
    } catch (error) {
      ({ outcome, recycle } = outcomeOfThrow(PythonError, error));
    } finally {
      sendHeldWrites();
      cellRunning = false;
    }
    for (const stream of Object.values(streams)) stream.end();
    // The heap never shrinks after a runaway allocation; only a fresh instance gets the memory back.
    if (outcome.status === 'error' && outcome.excName === 'MemoryError') {
      outcome.sessionReset = true;
      recycle = true;
    }
    post({ type: 'result', runId: message.runId, outcome, recycle });
  });
  // Pyodide's load leaves this thread's event loop held for a while after it returns (a zero timer fires only
  // then). Waited out before ready, it delays the start, which a spare absorbs, not the first run.
  await new Promise((resolve) => setTimeout(resolve, 0));
  post({
    type: 'ready',
    pyodideVersion: py.version,
    pythonVersion,
    fromSnapshot,
    ...(snapshotRejected ? { snapshotRejected } : {}),
    codeCache: emscripten.usedCache ? 'used' : emscripten.unsupported ? 'unsupported' : 'unused',
    ...(emscripten.cacheRejected ? { codeCacheRejected: emscripten.cacheRejected } : {}),
    loadMs: Math.round(performance.now() - started),
  });
}

main().catch((error: unknown) => {
  post({ type: 'fatal', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
});
