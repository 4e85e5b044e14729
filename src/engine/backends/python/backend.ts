import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { encodeFrame, FrameDecoder, MAX_FRAME_FROM_INTERPRETER_BYTES } from '../../framing';
import { assetsDir } from '../../paths';
import type { BackendInfo, BackendState, Display, InstallOptions, Logger, PackageReport, StreamName } from '../../types';
import type { BackendFactory, BackendOutcome, BackendRunRequest, BackendSession, BackendSessionOptions, BackendSink } from '../contract';
import type { PackageSpec, RequirementSpec } from '../../packages/spec';
import { findOnPath } from '../../executables';
import { resolvePythonInterpreter } from './interpreter';
import { localInterpreter, pipCheck, pipInstall } from '../../packages/pip';
import { killDescendants, outerPidOf } from './processTree';
import { exitOfContained, processContainment, type ContainmentChoice, type ProcessContainment } from './containment';
import { endWithThisProcess, forgetProcess, killGroup } from '../../processGroups';
import { RawOutputChannel } from './rawOutput';
import { StartGate } from '../../startGate';
import { errorText } from '../../errorText';
import { PendingRequests } from '../../requests';

export interface PythonBackendConfig {
  /** Interpreter to run; else $CODE_MODE_PYTHON, else python3/python on PATH (see resolvePythonInterpreter). */
  pythonPath?: string;
  /** Where the backend logs; defaults to the logger each session is created with. */
  log?: Logger;
  /**
   * Bound on each session's memory in MB, 0 for none (Linux only: see processes.py). Each process's private
   * data (RLIMIT_DATA: beyond it an allocation raises MemoryError in the user's code and the session lives
   * on), and all the session's processes together, shared memory included (the reaper ends the largest).
   */
  memoryLimitMb?: number;
  /** What holds the session's processes together (containment.ts); the best this machine has by default. */
  containment?: ContainmentChoice;
}

/**
 * The 4 GiB a Pyodide (wasm32) session can address at most: a program that fits one backend fits the other,
 * and one runaway session cannot push a small machine (2 cores, 8 GB) into the out-of-memory killer.
 */
export const DEFAULT_MEMORY_LIMIT_MB = 4096;

/** The workspace-Python backend: one persistent driver process per session, started on first use. */
export function createPythonBackend(config: PythonBackendConfig = {}): BackendFactory {
  const memoryLimitMb = config.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB;
  if (!Number.isInteger(memoryLimitMb) || memoryLimitMb < 0) {
    throw new Error(`memoryLimitMb must be a whole number of MB (0 for no limit), not ${memoryLimitMb}`);
  }
  const bounds = new SessionBounds(config.containment ?? 'auto', memoryLimitMb);
  return {
    kind: 'python',
    create: (options) => new PythonSession(config, bounds, options),
    describe: async () => bounds.report(),
  };
}

/** How often the reaper adds up a session's memory (MEMORY_CHECK_S in processes.py). */
const MEMORY_CHECK_S = 0.1;

/**
 * What bounds the sessions of one backend: how their processes are held together (probed on first use) and
 * their memory, as the last interpreter to start reported it. `environment` shows it as `backends.python.bounds`.
 */
class SessionBounds {
  private held?: ProcessContainment;
  /** How the last interpreter to start applied the memory limit, in its own words. */
  private memoryApplied?: string;
  private told = false;

  constructor(
    private readonly choice: ContainmentChoice,
    readonly memoryLimitMb: number,
  ) {}

  get containment(): ProcessContainment {
    this.held ??= processContainment(this.choice);
    return this.held;
  }

  /** Says once, in the log, what holds the sessions' processes, and loudly what does not. */
  tell(log: Logger): void {
    if (this.told) return;
    this.told = true;
    const held = this.containment;
    if (held.complete) log.info(`Python sessions: each in a PID namespace of its own (${held.via}), so no process a session starts outlives its reset, restart or this server`);
    else for (const gap of held.gaps) log.warn(`Python sessions: ${gap}`);
  }

  applied(text: string): void {
    this.memoryApplied = text;
  }

  report(): Record<string, unknown> {
    const held = this.containment;
    return {
      processes: { mechanism: held.mechanism, via: held.via ?? null, complete: held.complete, gaps: held.gaps },
      memory: this.memoryReport(held),
    };
  }

  private memoryReport(held: ProcessContainment): Record<string, unknown> {
    const limit = this.memoryLimitMb;
    const base = { limit_mb: limit, applied: this.memoryApplied ?? null };
    if (!limit) return { ...base, per_process: null, session_total: null, gaps: ['no memory limit (0)'] };
    if (process.platform !== 'linux') {
      const why = process.platform === 'darwin' ? 'macOS does not enforce RLIMIT_DATA' : `${process.platform} has no resource limits Python can set`;
      return { ...base, per_process: null, session_total: null, gaps: [`not enforced: ${why}`] };
    }
    const gaps = [
      `the session's total is checked every ${MEMORY_CHECK_S} s, so a faster burst can pass the limit briefly before the largest process is ended`,
      "when the session's processes share much memory (forked workers), its exact total is taken less often (at most 2% of the reaper's time), so passing the limit can take longer to be noticed",
      'memory no process of the session maps (files in /dev/shm or another tmpfs) is not counted',
    ];
    if (held.mechanism !== 'pid-namespace') gaps.push("code that kills the session's reaper also ends the check of the session's total");
    return {
      ...base,
      per_process: 'RLIMIT_DATA: the private memory of each process; an allocation beyond the limit raises MemoryError',
      session_total: `the anonymous and shared memory of all the session's processes together (PSS), added up by its reaper every ${MEMORY_CHECK_S} s; over the limit the largest process is ended (the interpreter: the session's state is lost, and the run says so)`,
      gaps,
    };
  }
}


// ---- a session's processes ---------------------------------------------------------------------------------

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

// ---- one driver process ------------------------------------------------------------------------------------

interface Hello {
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

type DriverMessage =
  | ({ type: 'hello' } & Hello)
  | { type: StreamName; text: string }
  | { type: 'dropped'; stream: StreamName; bytes: number }
  | { type: 'display'; display: Display }
  | { type: 'hostCall'; callId: number; method: string; params: unknown }
  | { type: 'result'; id: string; outcome: BackendOutcome; rawMarkers: [boolean, boolean] };

interface DriverExit {
  /** Why it ended, for a crashed outcome, a state loss and the log; `when` is e.g. " between runs". */
  describe(when?: string): string;
  /** Ended by restart() or dispose(), not by its own failure. */
  requested: boolean;
}

interface DriverListener {
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
  const limit = memoryLimitMb ? `this session's memory limit is ${memoryLimitMb} MB` : 'this session has no memory limit';
  if (OUT_OF_MEMORY.test(stderrTail)) return ` after running out of memory (${limit})`;
  if (signal === 'SIGKILL') return ` (the system's out-of-memory killer ends processes with SIGKILL; ${limit})`;
  return '';
}

class DriverProcess {
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
        const { code, signal } = this.namespaced ? exitOfContained(exitCode, exitSignal) : { code: exitCode, signal: exitSignal };
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
    if (this.child.exitCode === null && this.child.signalCode === null) this.killedWith ??= { describe: () => reason, requested };
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
        this.driverPid = message.namespace && this.child.pid !== undefined ? outerPidOf(this.child.pid, message.pid) : message.pid;
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

// ---- the session -------------------------------------------------------------------------------------------

interface ActiveRun {
  id: string;
  driver: DriverProcess;
  sink: BackendSink;
  outcome?: BackendOutcome;
  /** Which raw pipes the driver wrote an end-of-run marker to, once its result says so. */
  expectMarkers?: [boolean, boolean];
  seenMarkers: [boolean, boolean];
}

class PythonSession implements BackendSession {
  readonly kind = 'python' as const;
  private readonly log: Logger;
  private driver?: DriverProcess;
  private active?: ActiveRun;
  /** The outcome of the active run, by its id: its result (once the raw pipes caught up), or the driver's crash. */
  private readonly outcomes = new PendingRequests<string, BackendOutcome>();
  /** A run waiting for its interpreter to start, which interrupt() can still call off. */
  private readonly driverStart = new StartGate();
  /** The last driver died on its own (rather than by restart()), until the next one starts. */
  private crashed = false;
  /** Why the interpreter's state was lost between runs, until the engine asks. */
  private stateLoss?: string;
  private disposed = false;

  constructor(
    private readonly config: PythonBackendConfig,
    private readonly bounds: SessionBounds,
    private readonly options: BackendSessionOptions,
  ) {
    this.log = config.log ?? options.log;
  }

  get state(): BackendState {
    if (this.disposed) return 'dead';
    if (!this.driver) return this.crashed ? 'dead' : 'not-loaded';
    if (!this.driver.hello) return 'loading';
    return this.active ? 'busy' : 'ready';
  }

  async start(): Promise<void> {
    await this.ensureDriver();
  }

  async run(request: BackendRunRequest, sink: BackendSink): Promise<BackendOutcome> {
    if (this.active || this.driverStart.busy) throw new Error(`the Python session "${this.options.session}" is already running code`);
    const driver = await this.driverStart.pass(() => this.ensureDriver());
    // Stopped while the interpreter was still starting: the code never ran.
    if (!driver) return { status: 'interrupted' };
    const frame = encodeFrame({ type: 'run', id: request.runId, code: request.code, script: request.script, outputCapBytes: request.outputCapBytes });
    const outcome = this.outcomes.wait(request.runId);
    this.active = { id: request.runId, driver, sink, seenMarkers: [false, false] };
    driver.stdout.beginRun(request.outputCapBytes);
    driver.stderr.beginRun(request.outputCapBytes);
    driver.resetStderrTail();
    driver.setRef(true);
    driver.write(frame);
    return outcome;
  }

  interrupt(): void {
    if (this.active) this.active.driver.interrupt();
    else this.driverStart.interrupt();
  }

  async restart(): Promise<void> {
    const driver = this.driver;
    if (!driver) {
      this.crashed = false;
      return;
    }
    driver.kill('the session was restarted', true);
    await driver.exited;
  }

  takeStateLoss(): string | undefined {
    const loss = this.stateLoss;
    this.stateLoss = undefined;
    return loss;
  }

  info(): BackendInfo {
    const hello = this.driver?.hello;
    return {
      kind: 'python',
      state: this.state,
      executable: hello?.executable ?? this.driver?.interpreter ?? this.configuredInterpreter(),
      pythonVersion: hello?.pythonVersion,
      pid: this.driver?.pid,
    };
  }

  /**
   * pip of the session's interpreter, so packages land in its environment and outlive the session. A running
   * driver imports them without a restart (a new top-level entry changes site-packages' mtime, which
   * refreshes Python's import cache); a package it already imported keeps its old version until a reset.
   */
  async installPackages(specs: PackageSpec[], options: InstallOptions): Promise<PackageReport> {
    return pipInstall(localInterpreter(this.interpreter()), specs, options.wheelhouse, { wheelhouseSetting: options.wheelhouseSetting });
  }

  async checkPackages(specs: RequirementSpec[]): Promise<PackageReport> {
    return pipCheck(localInterpreter(this.interpreter()), specs);
  }

  private interpreter(): string {
    return this.driver?.interpreter ?? resolvePythonInterpreter(this.config.pythonPath);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const driver = this.driver;
    if (!driver) return;
    driver.kill('the session was disposed', true);
    await driver.exited;
  }

  private configuredInterpreter(): string | undefined {
    try {
      return resolvePythonInterpreter(this.config.pythonPath);
    } catch {
      return undefined;
    }
  }

  private async ensureDriver(): Promise<DriverProcess> {
    if (this.disposed) throw new Error(`the Python session "${this.options.session}" was disposed`);
    let driver = this.driver;
    if (!driver) {
      driver = this.spawnDriver();
      this.driver = driver;
      this.crashed = false;
    }
    await driver.ready;
    return driver;
  }

  /**
   * The user's environment, plus where the scratch folder is and a headless matplotlib backend (figures come
   * back as images; a GUI backend would open windows nobody sees). A backend the user chose is kept.
   */
  /** Agents' runs start in the workspace, as a terminal opened there would; without one, where the server runs. */
  private startFolder(): string | undefined {
    return this.options.workspaceRoots?.find((root) => fs.statSync(root, { throwIfNoEntry: false })?.isDirectory());
  }

  private driverEnvironment(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, MPLBACKEND: process.env.MPLBACKEND || 'Agg' };
    if (this.options.scratchDir) env.CODE_MODE_SCRATCH = this.options.scratchDir;
    return env;
  }

  private spawnDriver(): DriverProcess {
    const interpreter = resolvePythonInterpreter(this.config.pythonPath);
    const driverPath = path.join(assetsDir(), 'python', 'driver.py');
    const memoryLimitMb = this.bounds.memoryLimitMb;
    this.bounds.tell(this.log);
    const containment = this.bounds.containment;
    const driver: DriverProcess = new DriverProcess(interpreter, driverPath, this.driverEnvironment(), this.startFolder(), memoryLimitMb, containment, {
      onMessage: (message) => this.onMessage(driver, message),
      onRawText: (stream, text) => this.onOutput(driver, stream, text),
      onRawDropped: (stream, bytes) => this.onDropped(driver, stream, bytes),
      onRawMarker: (stream) => this.onRawMarker(driver, stream),
      onProtocolError: (error) => {
        this.log.error(`Python session "${this.options.session}": ${error.message}`);
        driver.kill(`the driver broke the protocol (${error.message})`, false);
      },
    });
    driver.setRef(true);
    driver.ready.then(
      (hello) => {
        const session = `Python session "${this.options.session}"`;
        this.log.info(`${session}: Python ${hello.pythonVersion} at ${hello.executable} (pid ${driver.pid}); ${hello.memoryLimit}`);
        this.bounds.applied(hello.memoryLimit);
        if (memoryLimitMb && !hello.memoryLimitMb) this.log.warn(`${session}: ${hello.memoryLimit}`);
        if (containment.mechanism === 'pid-namespace' && !hello.namespace) {
          this.log.warn(`${session}: the interpreter did not start as the init of a PID namespace of its own, so its processes are not held together`);
        }
        if (hello.reaper === null) {
          this.log.info(
            `${session}: no /proc or PR_SET_CHILD_SUBREAPER on ${process.platform}, so processes the code starts that leave its process group (setsid, daemons) can outlive a reset`,
          );
        }
        if (this.active?.driver !== driver) driver.setRef(false);
      },
      () => undefined,
    );
    driver.exited.then((exit) => this.onDriverExit(driver, exit));
    return driver;
  }

  private onMessage(driver: DriverProcess, message: DriverMessage): void {
    switch (message.type) {
      case 'stdout':
      case 'stderr':
        this.onOutput(driver, message.type, message.text);
        return;
      case 'dropped':
        this.onDropped(driver, message.stream, message.bytes);
        return;
      case 'display':
        if (this.active?.driver === driver) this.active.sink.display(message.display);
        return;
      case 'hostCall':
        this.onHostCall(driver, message.callId, message.method, message.params);
        return;
      case 'result': {
        const run = this.active;
        if (run?.driver !== driver || run.id !== message.id) {
          this.log.warn(`Python session "${this.options.session}": result for unknown run ${message.id}`);
          return;
        }
        run.outcome = message.outcome;
        run.expectMarkers = message.rawMarkers;
        this.finishIfComplete(run);
        return;
      }
    }
  }

  private onOutput(driver: DriverProcess, stream: StreamName, text: string): void {
    const run = this.active;
    if (run?.driver === driver) {
      run.sink[stream](text);
    } else {
      // Background threads or processes writing between runs: nobody's result, but worth a trace.
      this.log.info(`Python session "${this.options.session}" ${stream} between runs: ${text.slice(0, 1000).trimEnd()}`);
    }
  }

  private onDropped(driver: DriverProcess, stream: StreamName, bytes: number): void {
    const run = this.active;
    if (run?.driver === driver) run.sink.dropped(stream, bytes);
  }

  private onRawMarker(driver: DriverProcess, stream: StreamName): void {
    const run = this.active;
    if (run?.driver !== driver) return;
    run.seenMarkers[stream === 'stdout' ? 0 : 1] = true;
    this.finishIfComplete(run);
  }

  /** A run is over once its result is in and the raw pipes have caught up with it, so no output is late. */
  private finishIfComplete(run: ActiveRun): void {
    const expect = run.expectMarkers;
    if (!run.outcome || !expect) return;
    if ((expect[0] && !run.seenMarkers[0]) || (expect[1] && !run.seenMarkers[1])) return;
    // Without a marker the driver saw the pipe fully read, so everything held back is this run's.
    if (!expect[0]) run.driver.stdout.endRun();
    if (!expect[1]) run.driver.stderr.endRun();
    run.driver.resetStderrTail();
    this.active = undefined;
    run.driver.setRef(false);
    this.outcomes.resolve(run.id, run.outcome);
  }

  private onHostCall(driver: DriverProcess, callId: number, method: string, params: unknown): void {
    const run = this.active;
    if (run?.driver !== driver) {
      // The driver only calls while a cell runs; should a call still slip in, it must not wait forever.
      driver.send({ type: 'hostResult', callId, ok: false, error: 'no cell is running' });
      return;
    }
    const reply = (body: { ok: true; result: unknown } | { ok: false; error: string }) => {
      // A reply after the run ended would only be skipped by the driver; an interrupted call is abandoned.
      if (this.active !== run) return;
      try {
        driver.send({ type: 'hostResult', callId, ...body });
      } catch (error) {
        driver.send({ type: 'hostResult', callId, ok: false, error: `the result of ${method} could not be sent: ${errorText(error)}` });
      }
    };
    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(this.options.hostCall(method, params));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (result) => reply({ ok: true, result: result === undefined ? null : result }),
      (error: unknown) => reply({ ok: false, error: errorText(error) }),
    );
  }

  private onDriverExit(driver: DriverProcess, exit: DriverExit): void {
    if (this.driver !== driver) return;
    this.driver = undefined;
    this.crashed = !exit.requested;
    const run = this.active;
    const duringRun = run?.driver === driver;
    const reason = exit.describe(duringRun ? '' : ' between runs');
    if (this.crashed) {
      this.log.warn(`Python session "${this.options.session}": ${reason}`);
      // A run that crashes says so in its outcome; a loss between runs waits for the engine's next question.
      if (!duringRun && driver.hello) this.stateLoss ??= reason;
    }
    if (duringRun) {
      this.active = undefined;
      this.outcomes.resolve(run.id, { status: 'crashed', message: reason });
    }
  }
}

