// One session of the workspace-Python backend: its driver process, started on first use and again after a
// crash, and the run in flight on it, which ends once its result is in and the raw pipes have caught up.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeFrame } from '../../framing';
import { assetsDir } from '../../paths';
import type { BackendInfo, BackendState, InstallOptions, Logger, PackageReport, StreamName } from '../../types';
import type {
  BackendOutcome,
  BackendRunRequest,
  BackendSession,
  BackendSessionOptions,
  BackendSink,
} from '../contract';
import type { PackageSpec, RequirementSpec } from '../../packages/spec';
import { resolvePythonInterpreter } from './interpreter';
import { localInterpreter, pipCheck, pipInstall } from '../../packages/pip';
import { StartGate } from '../../startGate';
import { errorText } from '../../errorText';
import { PendingRequests } from '../../requests';
import { StateLoss } from '../stateLoss';
import type { PythonBackendConfig } from './backend';
import { DriverProcess, type DriverExit, type DriverMessage } from './driverProcess';
import type { SessionBounds } from './sessionBounds';

interface ActiveRun {
  id: string;
  driver: DriverProcess;
  sink: BackendSink;
  outcome?: BackendOutcome;
  /** Which raw pipes the driver wrote an end-of-run marker to, once its result says so. */
  expectMarkers?: [boolean, boolean];
  seenMarkers: [boolean, boolean];
}

export class PythonSession implements BackendSession {
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
  private readonly stateLoss = new StateLoss();
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
    if (this.active || this.driverStart.busy)
      throw new Error(`the Python session "${this.options.session}" is already running code`);
    const driver = await this.driverStart.pass(() => this.ensureDriver());
    // Stopped while the interpreter was still starting: the code never ran.
    if (!driver) return { status: 'interrupted' };
    const frame = encodeFrame({
      type: 'run',
      id: request.runId,
      code: request.code,
      script: request.script,
      echoLastExpression: request.echoLastExpression !== false,
      outputCapBytes: request.outputCapBytes,
    });
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
    return this.stateLoss.take();
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
    return pipInstall(localInterpreter(this.interpreter()), specs, options.wheelhouse, {
      wheelhouseSetting: options.wheelhouseSetting,
    });
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

  /** Agents' runs start in the workspace, as a terminal opened there would; without one, where the server runs. */
  private startFolder(): string | undefined {
    return this.options.workspaceRoots?.find((root) => fs.statSync(root, { throwIfNoEntry: false })?.isDirectory());
  }

  /**
   * The user's environment, plus where the scratch folder is and a headless matplotlib backend (figures come
   * back as images; a GUI backend would open windows nobody sees). A backend the user chose is kept.
   */
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
    const driver: DriverProcess = new DriverProcess(
      interpreter,
      driverPath,
      this.driverEnvironment(),
      this.startFolder(),
      memoryLimitMb,
      containment,
      {
        onMessage: (message) => this.onMessage(driver, message),
        onRawText: (stream, text) => this.onOutput(driver, stream, text),
        onRawDropped: (stream, bytes) => this.onDropped(driver, stream, bytes),
        onRawMarker: (stream) => this.onRawMarker(driver, stream),
        onProtocolError: (error) => {
          this.log.error(`Python session "${this.options.session}": ${error.message}`);
          driver.kill(`the driver broke the protocol (${error.message})`, false);
        },
      },
    );
    driver.setRef(true);
    driver.ready.then(
      (hello) => {
        const session = `Python session "${this.options.session}"`;
        this.log.info(
          `${session}: Python ${hello.pythonVersion} at ${hello.executable} (pid ${driver.pid}); ${hello.memoryLimit}`,
        );
        this.bounds.applied(hello.memoryLimit);
        if (memoryLimitMb && !hello.memoryLimitMb) this.log.warn(`${session}: ${hello.memoryLimit}`);
        if (containment.mechanism === 'pid-namespace' && !hello.namespace) {
          this.log.warn(
            `${session}: the interpreter did not start as the init of a PID namespace of its own, so its processes are not held together`,
          );
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
      this.log.info(
        `Python session "${this.options.session}" ${stream} between runs: ${text.slice(0, 1000).trimEnd()}`,
      );
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
        driver.send({
          type: 'hostResult',
          callId,
          ok: false,
          error: `the result of ${method} could not be sent: ${errorText(error)}`,
        });
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
      if (!duringRun && driver.hello) this.stateLoss.remember(reason);
    }
    if (duringRun) {
      this.active = undefined;
      this.outcomes.resolve(run.id, { status: 'crashed', message: reason });
    }
  }
}
