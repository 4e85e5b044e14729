// One driver process of the workspace-Python backend: spawned (inside the session's containment), spoken to in
// frames over two extra pipes, and killed with every process of its session.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { encodeFrame, FrameDecoder, MAX_FRAME_FROM_INTERPRETER_BYTES } from '../../framing';
import type { Display, StreamName } from '../../types';
import type { BackendOutcome } from '../contract';
import { findOnPath } from '../../executables';
import { killDescendants, outerPidOf } from './processTree';
import { exitOfContained, type ProcessContainment } from './containment';
import { endWithThisProcess, forgetProcess, killGroup } from '../../processGroups';
import { RawOutputChannel } from './rawOutput';

/** Every process of a session: its spawned process's group and all below it, setsid children included. */
function killSession(pid: number): void {
  // Rounds, since no reaper may be there to catch what forks between a scan and its kill.
  killDescendants(pid, 3);
  killGroup(pid);
}

function canExecute(file: string): boolean {
  if (!file.includes(path.sep)) return findOnPath(file) !== undefined;
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Every process of a session in a PID namespace: the spawned process takes the namespace's init, and the kernel the rest. */
function killNamespace(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ESRCH: gone already, and the namespace with it.
  }
  killGroup(pid);
}

export interface Hello {
  pid: number;
  version: string;
  pythonVersion: string;
  executable: string;
  marker: string;
  /** The pid of the session's reaper (the driver's parent; processes.py), if there is one: 1 in a PID namespace. */
  reaper: number | null;
  /** The reaper is the init of the session's own PID namespace (containment.ts); `pid` and `reaper` are its pids. */
  namespace?: boolean;
  /** The memory limit in force (0: none), and how it is applied or why not, for the log. */
  memoryLimitMb: number;
  memoryLimit: string;
}

export type DriverMessage =
  | ({ type: 'hello' } & Hello)
  | { type: StreamName; text: string }
  | { type: 'dropped'; stream: StreamName; bytes: number }
  | { type: 'display'; display: Display }
  | { type: 'hostCall'; callId: number; method: string; params: unknown }
  | { type: 'result'; id: string; outcome: BackendOutcome; rawMarkers: [boolean, boolean] };

export interface DriverExit {
  /** Why it ended, for a crashed outcome, a state loss and the log; `when` is e.g. " between runs". */
  describe(when?: string): string;
  /** Ended by restart() or dispose(), not by its own failure. */
  requested: boolean;
}

export interface DriverListener {
  onMessage(message: DriverMessage): void;
  onRawText(stream: StreamName, text: string): void;
  onRawMarker(stream: StreamName): void;
  onRawDropped(stream: StreamName, bytes: number): void;
  onProtocolError(error: Error): void;
}

const STDERR_TAIL_CHARS = 2000;
/** After the driver exits, how long to wait for pipes that an escaped grandchild may still hold open. */
const PIPE_DRAIN_MS = 500;
/** How long the reaper gets to reap a killed session and end itself before its process group is killed. */
const REAPER_GRACE_MS = 2000;
/** What stderr shows when an allocation failed where Python could not raise MemoryError (C code, the runtime). */
const OUT_OF_MEMORY = /MemoryError|bad_alloc|Cannot allocate memory|out of memory|over its memory limit/i;

function memoryHint(signal: NodeJS.Signals | null, stderrTail: string, memoryLimitMb: number): string {
  const limit = memoryLimitMb
    ? `this session's memory limit is ${memoryLimitMb} MB`
    : 'this session has no memory limit';
  if (OUT_OF_MEMORY.test(stderrTail)) return ` after running out of memory (${limit})`;
  if (signal === 'SIGKILL') return ` (the system's out-of-memory killer ends processes with SIGKILL; ${limit})`;
  return '';
}

export class DriverProcess {
  private readonly child: ChildProcess;
  private readonly requests: Writable;
  /** The driver splits and cuts what it sends to fit (driver.py); a larger frame is a broken protocol and ends it. */
  private readonly decoder = new FrameDecoder(MAX_FRAME_FROM_INTERPRETER_BYTES);
  readonly stdout: RawOutputChannel;
  readonly stderr: RawOutputChannel;
  readonly ready: Promise<Hello>;
  /** Resolves once the process is gone and its pipes are drained. */
  readonly exited: Promise<DriverExit>;
  hello?: Hello;
  private readonly onHello: (hello: Hello) => void;
  private stderrTail = '';
  private killedWith?: DriverExit;
  private gone = false;
  private reaperBackstop?: NodeJS.Timeout;
  /** The session runs in a PID namespace of its own: ending the spawned process ends all of it. */
  private readonly namespaced: boolean;
  /** The driver's pid as this process sees it, once it said hello (inside a namespace it has another). */
  private driverPid?: number;

  constructor(
    readonly interpreter: string,
    driverPath: string,
    env: NodeJS.ProcessEnv,
    cwd: string | undefined,
    private readonly memoryLimitMb: number,
    containment: ProcessContainment,
    private readonly listener: DriverListener,
  ) {
    this.stdout = new RawOutputChannel(
      (text) => listener.onRawText('stdout', text),
      () => listener.onRawMarker('stdout'),
      (bytes) => listener.onRawDropped('stdout', bytes),
    );
    this.stderr = new RawOutputChannel(
      (text) => {
        this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
        listener.onRawText('stderr', text);
      },
      () => listener.onRawMarker('stderr'),
      (bytes) => listener.onRawDropped('stderr', bytes),
    );
    // No shell: code only ever travels as data in frames. A process group of its own lets restart() kill
    // whatever user code started along with the driver; a PID namespace (containment.ts), all of it.
    // An interpreter that cannot run is spawned directly, so it fails as it would have (ENOENT, EACCES), not as
    // the wrapper's complaint.
    const prefix = canExecute(interpreter) ? containment.prefix : [];
    this.namespaced = containment.mechanism === 'pid-namespace' && prefix.length > 0;
    const command = [...prefix, interpreter, '-u', driverPath, '3', '4', String(memoryLimitMb)];
    this.child = spawn(command[0], command.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      env,
      cwd,
      shell: false,
      detached: true,
      windowsHide: true,
    });
    const stdio = this.child.stdio;
    this.requests = stdio[3] as Writable;
    const events = stdio[4] as Readable;
    for (const stream of [stdio[1], stdio[2], stdio[3], stdio[4]]) {
      // EPIPE and friends after the driver dies are reported through 'exit', not as stream errors.
      stream?.on('error', () => undefined);
    }
    stdio[1]?.on('data', (chunk: Buffer) => this.stdout.push(chunk));
    stdio[2]?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    events.on('data', (chunk: Buffer) => this.onEventData(chunk));

    let resolveReady!: (hello: Hello) => void;
    let rejectReady!: (error: Error) => void;
    this.ready = new Promise<Hello>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    // Nobody may be waiting yet; the rejection is still delivered to whoever awaits `ready` later.
    this.ready.catch(() => undefined);
    this.onHello = resolveReady;

    this.exited = new Promise<DriverExit>((resolve) => {
      const finish = (describe: DriverExit['describe']) => {
        if (this.gone) return;
        this.gone = true;
        clearTimeout(this.reaperBackstop);
        this.stdout.endRun();
        this.stderr.endRun();
        for (const stream of stdio) stream?.destroy();
        const exit = this.killedWith ?? { describe, requested: false };
        if (!this.hello) rejectReady(new Error(`${interpreter} could not start the driver: ${exit.describe()}`));
        resolve(exit);
      };
      this.child.on('error', (error) => {
        // Spawning failed (no such interpreter, not executable): there is no process to wait for.
        if (this.child.pid === undefined) finish(() => error.message);
      });
      this.child.once('exit', (exitCode, exitSignal) => {
        const pid = this.child.pid as number;
        forgetProcess(pid);
        // Whatever user code started dies with the driver.
        killGroup(pid);
        const { code, signal } = this.namespaced
          ? exitOfContained(exitCode, exitSignal)
          : { code: exitCode, signal: exitSignal };
        // Described once the pipes are drained, so the stderr tail holds the driver's last words.
        const describe = (when = '') => this.describeExit(code, signal, when);
        const timer = setTimeout(() => finish(describe), PIPE_DRAIN_MS);
        timer.unref();
        // 'close' comes once every pipe is drained, so output written just before dying is not lost.
        this.child.once('close', () => {
          clearTimeout(timer);
          finish(describe);
        });
      });
    });
    // Drivers lead their own process groups (so restart can kill what user code started).
    if (this.child.pid !== undefined) endWithThisProcess(this.child.pid, this.namespaced ? killNamespace : killSession);
  }

  get pid(): number | undefined {
    return this.driverPid ?? this.child.pid;
  }

  send(message: unknown): void {
    this.write(encodeFrame(message));
  }

  write(frame: Buffer): void {
    this.requests.write(frame);
  }

  interrupt(): void {
    // The driver, which is not the spawned process when a reaper runs above it.
    const pid = this.driverPid;
    if (this.gone || pid === undefined) return;
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // Already exited; 'exit' reports it.
    }
  }

  /** Kills the driver and every process of its session; `requested` tells a restart or dispose from a failure. */
  kill(reason: string, requested: boolean): void {
    const pid = this.child.pid;
    if (pid === undefined || this.gone) return;
    // A driver that already exited on its own keeps that as its reason.
    if (this.child.exitCode === null && this.child.signalCode === null)
      this.killedWith ??= { describe: () => reason, requested };
    // Whoever awaits `exited` needs this process to stay up until the exit is seen.
    this.setRef(true);
    if (this.namespaced) {
      // The namespace's init dies with the spawned process, and the kernel kills everything inside with it.
      killNamespace(pid);
      return;
    }
    if (this.hello?.reaper !== pid) {
      killSession(pid);
      return;
    }
    // The reaper stays, so that it reaps what is killed rather than leaving zombies to init; once the driver
    // is gone it kills whatever remains (anything forked after this scan too) and ends itself.
    killDescendants(pid, 1);
    this.reaperBackstop ??= setTimeout(() => killGroup(pid), REAPER_GRACE_MS);
  }

  /** Only a driver with work in flight keeps this process alive; an idle one never holds it open. */
  setRef(on: boolean): void {
    for (const handle of [this.child, ...this.child.stdio]) {
      const refable = handle as { ref?: () => void; unref?: () => void } | null;
      if (on) refable?.ref?.();
      else refable?.unref?.();
    }
  }

  /** A run starts or ends: the next crash's description quotes only what was written since. */
  resetStderrTail(): void {
    this.stderrTail = '';
  }

  private onEventData(chunk: Buffer): void {
    let messages: unknown[];
    try {
      messages = this.decoder.push(chunk);
    } catch (error) {
      this.listener.onProtocolError(error as Error);
      return;
    }
    for (const message of messages as DriverMessage[]) {
      if (message.type === 'hello') {
        this.hello = message;
        // Inside a namespace the driver knows only its own pid there; signals from here need this side's.
        this.driverPid =
          message.namespace && this.child.pid !== undefined ? outerPidOf(this.child.pid, message.pid) : message.pid;
        const marker = Buffer.from(message.marker, 'latin1');
        this.stdout.setMarker(marker);
        this.stderr.setMarker(marker);
        this.onHello(message);
      } else {
        this.listener.onMessage(message);
      }
    }
  }

  private describeExit(code: number | null, signal: NodeJS.Signals | null, when: string): string {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const tail = this.stderrTail.trim();
    const text = `the Python process (pid ${this.pid}) ${how}${when}${memoryHint(signal, tail, this.memoryLimitMb)}`;
    return tail ? `${text}; the end of its stderr:\n${tail}` : text;
  }
}
