// The confined process the Pyodide backend starts for each session. Pyodide runs on a worker thread; this main
// thread never runs Python, so it stays free while code runs to deliver interrupts, forward output and relay
// host calls. One instance per process: one that is lost (a MemoryError, a worker crash, a corrupt ring) is
// reported and abandoned, and the backend replaces the whole process, so every replaced instance is a process
// the backend itself saw end.
import * as net from 'node:net';
import * as path from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { FrameDecoder } from '../../framing';
import { PendingRequests } from '../../requests';
import type { Display } from '../../types';
import {
  HOST_INPUT_FD,
  HOST_OUTPUT_FD,
  type FromHost,
  type FromWorker,
  type HostCallReply,
  type HostConfig,
  type HostOutcome,
  type OutputChunk,
  type PackagesMessage,
  type RunMessage,
  type SnapshotMessage,
  type SnapshotRef,
  type StreamName,
  type ToHost,
  type WorkerInit,
} from './protocol';
import { createRing, DISPLAY_MARK, DROPPED, RingCorruption, RingReader, STDERR, STDOUT, type StreamId } from './ring';
import { framesFor, hostCallProblem } from './hostFrames';
import { readChecked, readWhole } from './checkedRead';

/** How often output is forwarded while a run is going: the coalescing window. */
const OUTPUT_INTERVAL_MS = 16;
/** Value that makes Pyodide raise KeyboardInterrupt (SIGINT). */
const SIGINT = 2;

const config = JSON.parse(process.argv[2] ?? '{}') as HostConfig;
// bubblewrap sets it whatever the environment given; Python should see an empty one. Under Deno the
// environment cannot even be read (no --allow-env), and changing it would throw.
if (!('Deno' in globalThis)) delete process.env.PWD;
const fromBackend = new net.Socket({ fd: HOST_INPUT_FD, readable: true, writable: false });
const toBackend = new net.Socket({ fd: HOST_OUTPUT_FD, readable: false, writable: true });

/** The backend ends a host that sends a frame over its limit: framesFor splits or shrinks what would pass it. */
function send(message: FromHost, then?: () => void): void {
  const frames = framesFor(message);
  frames.forEach((frame, i) => toBackend.write(frame, i === frames.length - 1 ? then : undefined));
}

/**
 * What `sendAll` sends leaves in one write: a run's last output and its result wake the backend once, not once a
 * frame (each wake-up of the other process costs more than the frame's bytes).
 */
function sendTogether(sendAll: () => void): void {
  toBackend.cork();
  try {
    sendAll();
  } finally {
    toBackend.uncork();
  }
}

interface Instance {
  worker: Worker;
  interrupt: Int32Array;
  callSignal: Int32Array;
  output: RingReader;
  replyPort: MessagePort;
  ready: boolean;
  lost: boolean;
}

interface ActiveRun {
  runId: string;
  decoders: Record<StreamId, TextDecoder>;
  timer: NodeJS.Timeout;
  /** Drained from the ring but not sent: what follows a display mark whose display has not arrived yet. */
  held: Piece[];
  /** Displays that arrived before their mark was drained. */
  arrived: Display[];
}

/** What the ring holds: text, a count of dropped bytes, or the place of a display (its data comes by message). */
type Piece = OutputChunk | 'display';

/** A run received while the worker was still loading. */
let queued: RunMessage | undefined;
let active: ActiveRun | undefined;
/** Host calls relayed to the backend, by the id the backend sees, waiting for its reply. */
const hostCalls = new PendingRequests<number, HostCallReply>();
let lastCallId = 0;
/** Package requests received while the worker was loading, and the ones the current worker is working on. */
const waitingPackages: PackagesMessage[] = [];
const packagesInFlight = new Set<number>();
const instance = spawnWorker();

function spawnWorker(): Instance {
  const interrupt = new SharedArrayBuffer(4);
  const callSignal = new SharedArrayBuffer(4);
  const outputRing = createRing();
  const { port1, port2 } = new MessageChannel();
  const init: WorkerInit = {
    // Pyodide appends file names to it, so it must end in a separator; '/' works on Windows too.
    ...config,
    indexURL: path.join(__dirname, 'pyodide') + '/',
    interruptBuffer: interrupt,
    callSignal,
    outputRing,
    replyPort: port2,
  };
  const worker = new Worker(path.join(__dirname, 'pyodide-worker.cjs'), { workerData: init, transferList: [port2] });
  const created: Instance = {
    worker,
    interrupt: new Int32Array(interrupt),
    callSignal: new Int32Array(callSignal),
    output: new RingReader(outputRing),
    replyPort: port1,
    ready: false,
    lost: false,
  };
  if (config.snapshot) sendSnapshot(worker, config.snapshot);
  worker.on('message', (message: FromWorker) => onWorkerMessage(created, message));
  worker.on('error', (error) => onWorkerLost(created, `Pyodide worker failed: ${error.stack ?? error.message}`));
  worker.on('exit', (code) => onWorkerLost(created, `Pyodide worker exited with code ${code}`));
  return created;
}

/**
 * Read and hashed here, on the main thread, while the worker thread starts and loads Pyodide's script: the
 * check costs a start almost nothing, and the bytes checked are the bytes loaded (moved, not copied).
 */
function sendSnapshot(worker: Worker, snapshot: SnapshotRef): void {
  const checked = readChecked(snapshot, readWhole);
  const message: SnapshotMessage =
    'bytes' in checked ? { type: 'snapshot', buffer: checked.bytes } : { type: 'snapshot', rejected: checked.rejected };
  worker.postMessage(message, 'buffer' in message ? [message.buffer] : []);
}

/** Ends the instance for good; the backend, told by a result or a 'lost' message, replaces this process. */
function abandon(old: Instance): void {
  for (const id of packagesInFlight)
    send({
      type: 'packagesDone',
      id,
      errors: [],
      versions: {},
      failed: 'the Pyodide instance was lost while installing',
    });
  packagesInFlight.clear();
  old.lost = true;
  void old.worker.terminate();
  old.replyPort.close();
  hostCalls.rejectAll(new Error('the Pyodide instance was lost'));
}

function onWorkerMessage(from: Instance, message: FromWorker): void {
  // An abandoned worker may still have messages on their way while it terminates.
  if (from.lost) return;
  switch (message.type) {
    case 'ready': {
      from.ready = true;
      const { type: _type, ...info } = message;
      send({ type: 'ready', ...info });
      if (queued) {
        const run = queued;
        queued = undefined;
        dispatch(run);
      }
      for (const request of waitingPackages.splice(0)) dispatchPackages(request);
      return;
    }
    case 'result': {
      if (active?.runId !== message.runId) return;
      // The worker wrote all of its output and posted its displays before the result, so this drain gets the rest.
      const output = collectOutput(from, active, true);
      // Undefined: the ring was corrupt, and the run already failed with the instance.
      if (!output) return;
      const run = active;
      sendTogether(() => {
        release(run, output, true);
        finishRun(message.outcome, []);
      });
      if (message.recycle) abandon(from);
      return;
    }
    case 'display':
      if (!active) return;
      active.arrived.push(message.display);
      // Its mark is in the ring already (written before the message): the text before it goes first.
      forwardOutput();
      return;
    case 'hostCall': {
      const id = ++lastCallId;
      const workerCallId = message.id;
      const runId = active?.runId;
      const problem =
        runId === undefined
          ? 'host calls can only be made while a cell runs'
          : hostCallProblem(message.method, message.params);
      if (problem !== undefined) {
        from.replyPort.postMessage({
          type: 'hostCallReply',
          id: workerCallId,
          ok: false,
          error: problem,
        } satisfies HostCallReply);
        wakeCaller(from);
        return;
      }
      // The reply goes back under the worker's own id, to the worker that asked; a replaced worker's calls are abandoned.
      void hostCalls.wait(id).then(
        (reply) => {
          if (from !== instance) return;
          from.replyPort.postMessage({ ...reply, id: workerCallId });
          wakeCaller(from);
        },
        () => undefined,
      );
      send({ type: 'hostCall', id, runId: runId!, method: message.method, params: message.params });
      return;
    }
    case 'packagesDone':
      packagesInFlight.delete(message.id);
      send(message);
      return;
    case 'log':
      send(message);
      return;
    case 'ringCorrupt':
      loseInstance(from, ringLoss(message.message), false);
      return;
    case 'fatal':
      fail(message.message);
  }
}

function onWorkerLost(from: Instance, reason: string): void {
  loseInstance(from, reason, true);
}

/**
 * The instance is gone or cannot be trusted: a run under way fails with `reason`; between runs, the backend is
 * told. Either way the backend ends this process and announces the loss from its own knowledge of that.
 * `drain`: what the run wrote before the loss is still worth sending (not when the ring itself is the problem).
 */
function loseInstance(from: Instance, reason: string, drain: boolean): void {
  if (from.lost || from !== instance) return;
  from.lost = true;
  if (!from.ready) {
    fail(reason);
    return;
  }
  if (active) {
    let output: Piece[] = [];
    if (drain) {
      try {
        output = takeOutput(active, true);
      } catch (error) {
        if (!(error instanceof RingCorruption)) throw error;
      }
    }
    release(active, output, true);
    finishRun({ status: 'crashed', message: reason }, []);
  } else {
    send({ type: 'lost', reason });
  }
  abandon(from);
}

function ringLoss(detail: string): string {
  return `the output ring between the Pyodide worker and its host was found corrupted (${detail}), which only code run in the instance can do`;
}

/** What the worker wrote since the last call; undefined when the ring is corrupt, and the instance was lost for it. */
function collectOutput(from: Instance, run: ActiveRun, final: boolean): Piece[] | undefined {
  try {
    return takeOutput(run, final);
  } catch (error) {
    if (!(error instanceof RingCorruption)) throw error;
    loseInstance(from, ringLoss(error.message), false);
    return undefined;
  }
}

/** Pyodide cannot start at all: report it and exit; the backend fails the start (and retries on next use). */
function fail(message: string): void {
  // Exit only once the message is out: exiting at once can drop it.
  send({ type: 'fatal', message }, () => process.exit(1));
}

function dispatch(run: RunMessage): void {
  // A ring changed between runs (by something the last run left behind) is caught before this run relies on it.
  let lost = instance.lost ? 'the Pyodide instance was lost' : undefined;
  try {
    if (!lost) instance.output.check();
  } catch (error) {
    if (!(error instanceof RingCorruption)) throw error;
    lost = ringLoss(error.message);
  }
  if (lost) {
    send({ type: 'result', runId: run.runId, outcome: { status: 'crashed', message: lost }, output: [] });
    if (!instance.lost) abandon(instance);
    return;
  }
  const decoders = { [STDOUT]: new TextDecoder(), [STDERR]: new TextDecoder() };
  active = { runId: run.runId, decoders, timer: setInterval(forwardOutput, OUTPUT_INTERVAL_MS), held: [], arrived: [] };
  Atomics.store(instance.interrupt, 0, 0);
  instance.worker.postMessage(run);
}

function dispatchPackages(request: PackagesMessage): void {
  if (instance.lost) {
    send({ type: 'packagesDone', id: request.id, errors: [], versions: {}, failed: 'the Pyodide instance was lost' });
    return;
  }
  packagesInFlight.add(request.id);
  instance.worker.postMessage(request);
}

function finishRun(outcome: HostOutcome, output: OutputChunk[]): void {
  const run = active!;
  clearInterval(run.timer);
  active = undefined;
  send({ type: 'result', runId: run.runId, outcome, output });
}

function forwardOutput(): void {
  const run = active;
  if (!run) return;
  const pieces = collectOutput(instance, run, false);
  if (pieces) sendTogether(() => release(run, pieces, false));
}

/**
 * Sends `pieces` after what was held, in order, each display once it has arrived. `final`: the run is over and
 * nothing more arrives, so a mark without its display (code in the instance can write one) holds nothing back.
 */
function release(run: ActiveRun, pieces: Piece[], final: boolean): void {
  run.held.push(...pieces);
  while (run.held.length > 0) {
    const piece = run.held[0]!;
    if (piece === 'display') {
      const display = run.arrived.shift();
      if (display) send({ type: 'display', runId: run.runId, display });
      else if (!final) return;
    } else {
      send({ type: 'output', runId: run.runId, ...piece });
    }
    run.held.shift();
  }
  if (final) for (const display of run.arrived.splice(0)) send({ type: 'display', runId: run.runId, display });
}

/** What the worker has written since the last call, consecutive text of one stream merged. */
function takeOutput(run: ActiveRun, final: boolean): Piece[] {
  const chunks: Piece[] = [];
  const add = (stream: StreamId, text: string): void => {
    if (!text) return;
    const name = streamName(stream);
    const last = chunks[chunks.length - 1];
    if (last && last !== 'display' && last.stream === name && 'text' in last) last.text += text;
    else chunks.push({ stream: name, text });
  };
  instance.output.drain((tag, bytes) => {
    if (tag === DISPLAY_MARK) {
      chunks.push('display');
      return;
    }
    const stream: StreamId = tag & STDERR ? STDERR : STDOUT;
    if (tag & DROPPED) {
      // Text still held by the decoder was written before the drop: it goes first.
      add(stream, run.decoders[stream].decode());
      chunks.push({ stream: streamName(stream), dropped: new DataView(bytes.buffer).getFloat64(0, true) });
    } else {
      add(stream, run.decoders[stream].decode(bytes, { stream: true }));
    }
  });
  if (final) {
    add(STDOUT, run.decoders[STDOUT].decode());
    add(STDERR, run.decoders[STDERR].decode());
  }
  return chunks;
}

function streamName(stream: StreamId): StreamName {
  return stream === STDERR ? 'stderr' : 'stdout';
}

function interrupt(): void {
  if (queued) {
    send({ type: 'result', runId: queued.runId, outcome: { status: 'interrupted' }, output: [] });
    queued = undefined;
    return;
  }
  if (!active) return;
  Atomics.store(instance.interrupt, 0, SIGINT);
  // Wakes Python wherever it blocks: in time.sleep (on the interrupt buffer) or in a host call.
  Atomics.notify(instance.interrupt, 0);
  wakeCaller(instance);
}

function wakeCaller(target: Instance): void {
  Atomics.add(target.callSignal, 0, 1);
  Atomics.notify(target.callSignal, 0);
}

function relayReply(reply: HostCallReply): void {
  hostCalls.resolve(reply.id, reply);
}

function onBackendMessage(message: ToHost): void {
  switch (message.type) {
    case 'run':
      if (instance.ready) dispatch(message);
      else queued = message;
      return;
    case 'interrupt':
      interrupt();
      return;
    case 'hostCallReply':
      relayReply(message);
      return;
    case 'packages':
      if (instance.ready) dispatchPackages(message);
      else waitingPackages.push(message);
  }
}

const decoder = new FrameDecoder();
fromBackend.on('data', (chunk: Buffer) => {
  for (const message of decoder.push(chunk)) onBackendMessage(message as ToHost);
});
// The backend is gone (or closed its end): nothing would ever read from this process again.
fromBackend.on('close', () => process.exit(0));
toBackend.on('error', () => process.exit(0));
