// The engine's face to its front ends: one object that owns the parts and says what each call does. Sessions
// and their backends are in sessions/, a run's way from request to result in runs/, packages in installs.ts.
import * as path from 'node:path';
import { defaultEngineConfig, type EngineConfig } from './config';
import { EngineEvents, type Listener, type Subscription } from './events';
import { Installs, type PackagesOptions } from './installs';
import { RunExecutor } from './runs/executor';
import { RunHints, type HintsProvider } from './runs/hints';
import { askFor, INPUT_METHOD } from './runs/questions';
import { RunQueue } from './runs/runQueue';
import type { RunOptions } from './runs/runOptions';
import { SessionPool } from './sessions/pool';
import {
  silentLogger,
  type BackendInfo,
  type BackendKind,
  type HostCallHandler,
  type Logger,
  type PackagesResult,
  type RunEvent,
  type RunResult,
} from './types';
import type { BackendFactory } from './backends/contract';
import type { SandboxReport } from './sandbox/index';

export interface SessionDescription {
  name: string;
  scope?: string;
  backend: BackendKind;
  info: BackendInfo;
  runningRunId?: string;
  /** Runs waiting behind the running one, oldest first. */
  queuedRunIds: string[];
  /** The session's own scratch folder (CODE_MODE_SCRATCH in its Python). */
  scratchDir?: string;
}

export interface EngineOptions {
  backends: BackendFactory[];
  config?: Partial<EngineConfig>;
  log?: Logger;
  /** Folders whose files a run may show by printing their paths (displayFiles.ts). */
  workspaceRoots?: string[];
  /**
   * Where each session gets a writable folder of its own for its runs' files (CODE_MODE_SCRATCH in Python), made when
   * the session starts and removed when it ends (scratch.ts); a run shows the files of its own, like the workspace's.
   */
  scratchDir?: string;
  /** Folders code run here can write, now or after a setting changes: nothing in them is taken as an executable. */
  codeWritableFolders?: string[];
}

/**
 * Runs Python for every front door: sessions, queueing, time limits, cancellation, policy, output caps, result
 * shaping and run events. Backends only execute; every decision about a run is made here.
 */
export class Engine {
  readonly log: Logger;
  /** Folders code run here can write, now or after a setting changes (agentSettings.ts). */
  readonly codeWritableFolders: readonly string[];
  private current: EngineConfig;
  private readonly events: EngineEvents;
  private readonly pool: SessionPool;
  private readonly hints: RunHints;
  private readonly installs: Installs;
  private readonly runs: RunQueue;
  private hostCall: HostCallHandler = async (method) => {
    throw new Error(`no host function "${method}" is available here`);
  };

  constructor(options: EngineOptions) {
    this.current = Object.freeze({ ...defaultEngineConfig, ...options.config });
    this.log = options.log ?? silentLogger;
    const config = () => this.current;
    const workspaceRoots = (options.workspaceRoots ?? []).map((root) => path.resolve(root));
    this.codeWritableFolders = (options.codeWritableFolders ?? []).map((dir) => path.resolve(dir));
    this.events = new EngineEvents(this.log);
    this.pool = new SessionPool({
      backends: options.backends,
      config,
      log: this.log,
      workspaceRoots,
      scratchDir: options.scratchDir,
      // The session answers its own runs' questions; everything else goes to the bridge.
      hostCall: (session, method, params) =>
        method === INPUT_METHOD
          ? askFor(session?.active, params)
          : this.hostCall(method, params, session?.active?.hostRun),
    });
    this.hints = new RunHints(this.log);
    this.installs = new Installs(this.pool, this.events, config, this.log, workspaceRoots);
    const executor = new RunExecutor({
      pool: this.pool,
      installs: this.installs,
      events: this.events,
      hints: this.hints,
      config,
      log: this.log,
      workspaceRoots,
    });
    this.runs = new RunQueue(this.pool, executor, this.events, this.hints, config);
  }

  /** The configuration runs use now; change it with configure(). */
  get config(): Readonly<EngineConfig> {
    return this.current;
  }

  /** Changes the given settings for the runs that start from now on (the one way to change them). */
  configure(change: Partial<EngineConfig>): void {
    this.current = Object.freeze({ ...this.current, ...change });
  }

  get backendKinds(): BackendKind[] {
    return this.pool.backendKinds;
  }

  onRunEvent(listener: Listener<RunEvent>): Subscription {
    return this.events.onRunEvent(listener);
  }

  /** Fires when a session starts, finishes a run, resets or goes away. */
  onStateChange(listener: Listener<void>): Subscription {
    return this.events.onStateChange(listener);
  }

  /** Swaps a backend (e.g. another interpreter was selected); its sessions restart on next use, and say why. */
  async setBackendFactory(
    factory: BackendFactory,
    reason = `the ${factory.kind} backend was reconfigured`,
  ): Promise<void> {
    await this.pool.setFactory(factory, reason);
    this.events.emitState();
  }

  /** Takes a backend away (its server was unset): its sessions end, and their next run is told `reason`. */
  async removeBackend(kind: BackendKind, reason: string): Promise<void> {
    await this.pool.removeBackend(kind, reason);
    this.events.emitState();
  }

  /** Where Python's `_code_mode_host.call()` lands (the code-mode tool bridge). */
  setHostCallHandler(handler: HostCallHandler): void {
    this.hostCall = handler;
  }

  /** Advice attached to failed runs as `diagnostics.hints` (the learnings store gives past fixes). */
  setHintsProvider(provider: HintsProvider | undefined): void {
    this.hints.provider = provider;
  }

  /** Turns a backend off (e.g. workspace Python in an untrusted workspace); runs on it are refused with `reason`. */
  async setBackendEnabled(kind: BackendKind, enabled: boolean, reason = ''): Promise<void> {
    await this.pool.setEnabled(kind, enabled, reason);
    this.events.emitState();
  }

  disabledReason(kind: BackendKind): string | undefined {
    return this.pool.disabledReason(kind);
  }

  describeSessions(): SessionDescription[] {
    return this.pool.all().map((s) => ({
      name: s.name,
      scope: s.scope,
      backend: s.backend.kind,
      info: s.backend.info(),
      runningRunId: s.active?.runId,
      queuedRunIds: this.runs.queuedOn(s),
      scratchDir: s.scratchDir,
    }));
  }

  run(options: RunOptions): Promise<RunResult> {
    return this.runs.run(options);
  }

  /**
   * Installs into the session's interpreter, queued like a run (never beside one). Pyodide installs live in
   * that session's instance until it is reset; pip installs go into the interpreter's environment.
   */
  installPackages(options: PackagesOptions): Promise<PackagesResult> {
    return this.installs.packages('install', options);
  }

  /** Which packages the session's interpreter has, with versions; installs nothing. */
  checkPackages(options: PackagesOptions): Promise<PackagesResult> {
    return this.installs.packages('check', options);
  }

  /** Interrupts whatever runs in the session now (the person's "interrupt" command), also while it waits for its interpreter. */
  interrupt(sessionName = 'default', backend?: BackendKind): boolean {
    const running = this.pool
      .all()
      .filter((s) => s.name === sessionName && (!backend || s.backend.kind === backend) && s.active);
    for (const session of running) session.stopActive();
    return running.length > 0;
  }

  /** Stops one run, whatever it is doing: waiting in the queue (it never runs), starting its interpreter, or running. */
  cancelRun(runId: string): boolean {
    if (this.runs.cancel(runId)) return true;
    const session = this.pool.all().find((s) => s.active?.runId === runId);
    session?.stopActive();
    return session !== undefined;
  }

  /** Fresh interpreter for the session; its globals are gone (its scratch folder is kept), and its next run says `reason`. */
  async resetSession(
    sessionName = 'default',
    backend?: BackendKind,
    reason = 'the session was reset on request',
  ): Promise<void> {
    await this.pool.reset(sessionName, backend, reason);
    this.events.emitState();
  }

  /**
   * How to tell whether `scope`'s client is still there: a full pool ends idle sessions of clients that are gone
   * before those of clients that are there (SessionPool.makeRoomFor). Until endScope.
   */
  setScopePresence(scope: string, isPresent: () => boolean): void {
    this.pool.setPresence(scope, isPresent);
  }

  /**
   * Ends every session of a scope (its client is gone): runs in them are cancelled, and nothing is remembered for
   * their names, which nobody will use again.
   */
  async endScope(scope: string): Promise<void> {
    await this.pool.endScope(scope);
    this.events.emitState();
  }

  /** Starts the default session's interpreter ahead of the first run. */
  async warmUp(backend: BackendKind = this.current.defaultBackend, sessionName = 'default'): Promise<void> {
    if (this.pool.disabledReason(backend)) return;
    const starting = this.pool.get(backend, sessionName).backend.start();
    this.events.emitState();
    await starting;
    this.events.emitState();
  }

  /**
   * Keeps a started interpreter of `kind` ready for the next new session, and starts another each time one is
   * taken; undefined keeps none. It costs the memory of one more idle session of that backend.
   */
  keepSpare(kind: BackendKind | undefined): void {
    this.pool.keepSpare(kind);
  }

  /** The spare interpreter, if one is kept now (its state and pid). */
  spareInfo(): BackendInfo | undefined {
    return this.pool.spareInfo();
  }

  /** What confines the backend's interpreters here; undefined when it is not sandboxed (workspace Python). */
  sandbox(kind: BackendKind): SandboxReport | undefined {
    return this.pool.factory(kind)?.sandbox?.();
  }

  backendInfo(kind: BackendKind, sessionName = 'default'): BackendInfo {
    return this.pool.existing(kind, sessionName)?.backend.info() ?? { kind, state: 'not-loaded' };
  }

  /** What a backend says about where it runs (see BackendFactory.describe), or undefined. */
  async describeBackend(kind: BackendKind): Promise<Record<string, unknown> | undefined> {
    return this.pool.factory(kind)?.describe?.();
  }

  async dispose(): Promise<void> {
    await this.pool.dispose();
    this.events.clear();
  }
}
