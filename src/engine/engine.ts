import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { defaultEngineConfig, isBackendKind, SESSION_NAME, timeoutProblem, type EngineConfig } from './config';
import { displaysForPrintedFiles } from './displayFiles';
import { CappedOutput } from './output';
import { OutputOrder } from './outputOrder';
import { distributionForImport, missingTopLevelModule } from './packages/importNames';
import { findLocalModule } from './packages/localModules';
import { distributionOf, parsePackageList, parseRequirement, type PackageSpec, type RequirementSpec } from './packages/spec';
import { checkPolicy } from './policy';
import { roundMs, shapeResult } from './result';
import { boundOutcome, RunDisplays } from './runLimits';
import { ScratchFolders } from './scratch';
import { SpareSlot, type Spare } from './spare';
import {
  isPersonOrigin,
  silentLogger,
  type BackendInfo,
  type BackendKind,
  type Diagnostics,
  type Display,
  type HostCallHandler,
  type Logger,
  type PackageReport,
  type PackagesResult,
  type RunEvent,
  type RunOrigin,
  type InputHandler,
  type InputRequest,
  type RunResult,
  type ScriptRun,
  type HostCallRun,
  type StreamName,
  type ToolApprovals,
  type ToolCallRecord,
} from './types';
import type { BackendFactory, BackendSessionOptions, BackendOutcome, BackendSession, BackendSink } from './backends/contract';
import type { SandboxReport } from './sandbox/index';
import { errorText } from './errorText';

export interface RunOptions {
  code: string;
  backend?: BackendKind;
  session?: string;
  /** Whose sessions: a front door serving several clients keeps each one's apart (see endScope). Default: shared. */
  scope?: string;
  /** Seconds before the run is stopped; 0 for no limit (a person's own runs). Default: the engine's. */
  timeoutS?: number;
  /** What set `timeoutS` (e.g. "setting codeMode.run.timeoutSeconds"), named when the run is stopped for it. */
  timeoutSource?: string;
  /** The code is a file's, or lines of one: it runs as that script (working folder, __file__, sys.path). */
  script?: ScriptRun;
  /** Answers input(), sys.stdin and getpass; without it they raise EOFError saying nobody can answer. */
  onInput?: InputHandler;
  /** Who answers questions about tool calls the code makes; without it a call that needs a yes is refused. */
  toolApprovals?: ToolApprovals;
  /** Start from a fresh interpreter. */
  reset?: boolean;
  /** Aborting interrupts the run (or drops it while queued); the result says CANCELLED. */
  signal?: AbortSignal;
  origin?: RunOrigin;
  /** The MCP tool that started the run, named in the run's start event. */
  tool?: string;
  /** Events of this run only, in addition to the engine-wide listeners. */
  onEvent?: (event: RunEvent) => void;
}

export interface PackagesOptions {
  /** Names with optional extras and version specifiers, absolute .whl paths or .whl URLs (see packages/spec.ts). */
  packages: unknown;
  backend?: BackendKind;
  session?: string;
  /** As RunOptions.scope. */
  scope?: string;
  /** Who asked, for the run an install shows as (as RunOptions.origin). */
  origin?: RunOrigin;
}

/** Per packages call (install or check). */
export const MAX_PACKAGES = 20;

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
}

type Listener<T> = (value: T) => void;

/** What auto-install did for a run: the package it installed before running the code again, or why it could not. */
type AutoInstall = { installed: string } | { hint: string };

interface ActiveRun {
  runId: string;
  interruptedBy?: 'timeout' | 'cancel' | 'user';
  restarted: boolean;
  /** Puts the run's question to its front door, with the time limit paused meanwhile. */
  ask?: (request: InputRequest) => Promise<string | undefined>;
  /** What the bridge's host calls learn of this run: who started it, who approves its tool calls, its audit. */
  hostRun: HostCallRun;
  /** Set while the run waits for its interpreter to start: stops the waiting (the code then never runs). */
  stopStart?: () => void;
  /** Set while the code runs: interrupts it, and restarts the interpreter if it does not stop within the grace. */
  stopRun?: () => void;
}

/** A run waiting behind other work on its session, which can be cancelled before its turn. */
interface QueuedRun {
  session: Session;
  cancel(): void;
}

/** The host-call method of user_input.py. */
const INPUT_METHOD = 'input';
/** The scratch key the spare's folder is made under: no session's key looks like it. */
const SPARE_SCRATCH_KEY = '(spare)';

/** Orders sessions by use without ties (clock readings can be equal). */
let workQueued = 0;

class Session {
  /** Work on one session (runs, installs) is queued, never interleaved. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Work queued or under way. */
  private waiting = 0;
  active?: ActiveRun;
  /** When work was last queued, as a count of queued work across sessions: the lowest idle one is evicted. */
  lastUsed = ++workQueued;
  /** Why this session starts without the state its name had (it was evicted, reset or swapped), until a run reports it. */
  inheritedLoss?: string;
  /** Its interpreter started once: a start that fails after that loses state; one that never started had none. */
  everStarted = false;
  /** What the work queued last is, in a few words: a run queued behind it says it waits for this. */
  lastWork = '';
  constructor(
    readonly name: string,
    readonly backend: BackendSession,
    readonly scope: string | undefined,
    /** This session's own scratch folder; no other session sees it. */
    readonly scratchDir: string | undefined,
  ) {}

  get idle(): boolean {
    return this.waiting === 0;
  }

  /** Runs `work` after everything queued before it, whether that succeeded or not. */
  enqueue<T>(work: () => Promise<T>): Promise<T> {
    this.waiting++;
    this.lastUsed = ++workQueued;
    const turn = this.queue.then(work).finally(() => this.waiting--);
    // Settled to nothing: the queue must not hold on to the last result (its displays) until the next run.
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }
}

/** A session that `end`s is gone for good; one that `restart`s goes on under its name with a fresh interpreter. */
type DropKind = 'end' | 'restart';

/** Raised when a new session is wanted and every live one is busy. */
class SessionLimitError extends Error {}

/** How many dropped session names remember why, for their next run; beyond it the oldest are forgotten. */
const REMEMBERED_LOSSES = 1000;
/** Code of a refused run kept for its card and history (a refusal may be for code far past every limit). */
const REFUSED_CODE_CHARS = 64 * 1024;

/**
 * Runs Python for every front door: sessions, queueing, time limits, cancellation, policy, output caps, result
 * shaping and run events. Backends only execute; every decision about a run is made here.
 */
export class Engine {
  private readonly factories = new Map<BackendKind, BackendFactory>();
  private readonly sessions = new Map<string, Session>();
  /** Session keys the engine dropped, and why: the next run under that name is told. */
  private readonly losses = new Map<string, string>();
  private readonly runListeners = new Set<Listener<RunEvent>>();
  private readonly stateListeners = new Set<Listener<void>>();
  private readonly disabled = new Map<BackendKind, string>();
  /** Runs queued behind other work, by run id, until their turn comes or they are cancelled. */
  private readonly queuedRuns = new Map<string, QueuedRun>();
  private hostCall: HostCallHandler = async (method) => {
    throw new Error(`no host function "${method}" is available here`);
  };
  private hints?: (diagnostics: Diagnostics) => string[];
  private runCounter = 0;
  private readonly runPrefix = randomBytes(3).toString('hex');
  readonly log: Logger;
  config: EngineConfig;
  private readonly scratch: ScratchFolders | undefined;
  private readonly workspaceRoots: string[];
  private readonly spares = new SpareSlot<Session>();
  private disposed = false;

  constructor(options: EngineOptions) {
    for (const factory of options.backends) this.factories.set(factory.kind, factory);
    this.config = { ...defaultEngineConfig, ...options.config };
    this.log = options.log ?? silentLogger;
    this.scratch = options.scratchDir ? new ScratchFolders(path.resolve(options.scratchDir), this.log) : undefined;
    this.workspaceRoots = (options.workspaceRoots ?? []).map((root) => path.resolve(root));
  }

  get backendKinds(): BackendKind[] {
    return [...this.factories.keys()];
  }

  onRunEvent(listener: Listener<RunEvent>): { dispose(): void } {
    this.runListeners.add(listener);
    return { dispose: () => this.runListeners.delete(listener) };
  }

  /** Fires when a session starts, finishes a run, resets or goes away. */
  onStateChange(listener: Listener<void>): { dispose(): void } {
    this.stateListeners.add(listener);
    return { dispose: () => this.stateListeners.delete(listener) };
  }

  /** Swaps a backend (e.g. another interpreter was selected); its sessions restart on next use, and say why. */
  async setBackendFactory(factory: BackendFactory, reason = `the ${factory.kind} backend was reconfigured`): Promise<void> {
    const previous = this.factories.get(factory.kind);
    this.factories.set(factory.kind, factory);
    // The sessions go on, on the new backend: they keep their scratch folders.
    await this.retire(factory.kind, previous === factory ? undefined : previous, reason, 'restart');
  }

  /** Ends `kind`'s sessions (their next runs are told `reason`), then closes the factory they came from, if it went. */
  private async retire(kind: BackendKind, gone: BackendFactory | undefined, reason: string, how: DropKind): Promise<void> {
    await Promise.all([...this.sessions.values()].filter((s) => s.backend.kind === kind).map((s) => this.dropSession(s, reason, how)));
    await this.replaceSpare(kind);
    await gone?.dispose?.().catch((error: unknown) => this.log.warn(`the replaced ${kind} backend did not close: ${String(error)}`));
    this.emitState();
  }

  /** Where Python's `_code_mode_host.call()` lands (the code-mode tool bridge). */
  setHostCallHandler(handler: HostCallHandler): void {
    this.hostCall = handler;
  }

  /** Advice attached to failed runs as `diagnostics.hints` (the learnings store gives past fixes). */
  setHintsProvider(provider: ((diagnostics: Diagnostics) => string[]) | undefined): void {
    this.hints = provider;
  }

  /** Turns a backend off (e.g. workspace Python in an untrusted workspace); runs on it are refused with `reason`. */
  async setBackendEnabled(kind: BackendKind, enabled: boolean, reason = ''): Promise<void> {
    if (enabled) {
      this.disabled.delete(kind);
      this.refillSpare();
    } else {
      this.disabled.set(kind, reason || `the ${kind} backend is disabled`);
      await Promise.all([...this.sessions.values()].filter((s) => s.backend.kind === kind).map((s) => this.dropSession(s, this.disabled.get(kind)!, 'end')));
      await this.replaceSpare(kind);
    }
    this.emitState();
  }

  disabledReason(kind: BackendKind): string | undefined {
    return this.disabled.get(kind);
  }

  describeSessions(): SessionDescription[] {
    return [...this.sessions.values()].map((s) => ({
      name: s.name,
      scope: s.scope,
      backend: s.backend.kind,
      info: s.backend.info(),
      runningRunId: s.active?.runId,
      queuedRunIds: [...this.queuedRuns].filter(([, queued]) => queued.session === s).map(([runId]) => runId),
      scratchDir: s.scratchDir,
    }));
  }

  async run(options: RunOptions): Promise<RunResult> {
    const runId = this.nextRunId();
    const backend = options.backend ?? this.config.defaultBackend;
    const sessionName = options.session ?? 'default';
    const timeoutS = options.timeoutS ?? this.config.timeoutS;
    const timeoutSource = options.timeoutSource ?? (options.timeoutS === undefined ? this.config.timeoutSource : 'the timeout_s of this call');
    const emit = (event: RunEvent) => this.emitRun(event, options.onEvent);
    const refuse = (diagnostics: Diagnostics): RunResult => {
      const shownBackend = isBackendKind(backend) ? backend : this.config.defaultBackend;
      const result = this.withHints(shapeResult({ runId, backend: shownBackend, session: sessionName, durationMs: 0, diagnostics }));
      // A refused run is still a run someone asked for: it starts and finishes at once, so the results view,
      // the history and the runs channel show it with the reason (a run that never started showed nowhere).
      emit({
        type: 'started',
        runId,
        session: typeof sessionName === 'string' ? sessionName.slice(0, 256) : 'default',
        backend: shownBackend,
        code: typeof options.code === 'string' ? options.code.slice(0, REFUSED_CODE_CHARS) : '',
        origin: options.origin ?? 'test',
        startedAt: Date.now(),
        ...(options.script ? { location: { file: options.script.path, line: options.script.firstLine } } : {}),
      });
      emit({ type: 'finished', runId, result });
      return result;
    };

    const invalid = this.invalidArgument(options.code, backend, sessionName, timeoutS === 0 ? undefined : timeoutS);
    if (invalid) return refuse({ error_type: 'INVALID_ARGUMENT', message: invalid });
    const disabledReason = this.disabled.get(backend);
    if (disabledReason) return refuse({ error_type: 'INVALID_ARGUMENT', message: disabledReason });
    const violation = checkPolicy(options.code, this.config.policy);
    if (violation) {
      return refuse({ error_type: 'POLICY_VIOLATION', message: `${violation.rule}: ${violation.detail}`, policy: violation });
    }

    let session: Session;
    try {
      session = this.session(backend, sessionName, options.scope);
    } catch (error) {
      if (error instanceof SessionLimitError) return refuse({ error_type: 'INVALID_ARGUMENT', message: error.message });
      throw error;
    }
    const work = () => this.execute(session, runId, { ...options, timeoutSource }, timeoutS, emit);
    const waitingFor = session.idle ? undefined : session.lastWork;
    session.lastWork = workLabel(options);
    if (waitingFor === undefined) return session.enqueue(work);
    return this.queue(session, runId, options, waitingFor, emit, work);
  }

  /**
   * A run behind other work on its session: shown at once as queued (what it waits for), and cancellable until
   * its turn (cancel, or its signal) without waiting for the work ahead of it.
   */
  private queue(session: Session, runId: string, options: RunOptions, waitingFor: string, emit: (event: RunEvent) => void, work: () => Promise<RunResult>): Promise<RunResult> {
    const backend = session.backend.kind;
    const location = options.script && { file: options.script.path, line: options.script.firstLine };
    emit({ type: 'queued', runId, session: session.name, backend, code: options.code, origin: options.origin ?? 'test', startedAt: Date.now(), waitingFor, ...(location ? { location } : {}) });
    let cancelled: RunResult | undefined;
    let dropped = (_result: RunResult): void => undefined;
    const droppedResult = new Promise<RunResult>((resolve) => (dropped = resolve));
    const cancel = () => {
      if (cancelled || !this.queuedRuns.has(runId)) return;
      this.queuedRuns.delete(runId);
      options.signal?.removeEventListener('abort', cancel);
      const diagnostics: Diagnostics = { error_type: 'CANCELLED', message: `the run was cancelled while it waited for ${waitingFor}; it did not run. The session state is kept.`, session_reset: false };
      cancelled = shapeResult({ runId, backend, session: session.name, durationMs: 0, diagnostics });
      emit({ type: 'finished', runId, result: cancelled });
      dropped(cancelled);
    };
    this.queuedRuns.set(runId, { session, cancel });
    if (options.signal?.aborted) cancel();
    else options.signal?.addEventListener('abort', cancel, { once: true });
    const turn = session.enqueue(() => {
      if (cancelled) return Promise.resolve(cancelled);
      this.queuedRuns.delete(runId);
      options.signal?.removeEventListener('abort', cancel);
      return work();
    });
    return Promise.race([turn, droppedResult]);
  }

  /**
   * Installs into the session's interpreter, queued like a run (never beside one). Pyodide installs live in
   * that session's instance until it is reset; pip installs go into the interpreter's environment.
   */
  installPackages(options: PackagesOptions): Promise<PackagesResult> {
    return this.packages('install', options);
  }

  /** Which packages the session's interpreter has, with versions; installs nothing. */
  checkPackages(options: PackagesOptions): Promise<PackagesResult> {
    return this.packages('check', options);
  }

  /** Interrupts whatever runs in the session now (the person's "interrupt" command), also while it waits for its interpreter. */
  interrupt(sessionName = 'default', backend?: BackendKind): boolean {
    let interrupted = false;
    for (const session of this.sessions.values()) {
      if (session.name !== sessionName || (backend && session.backend.kind !== backend) || !session.active) continue;
      stopActive(session);
      interrupted = true;
    }
    return interrupted;
  }

  /** Stops one run, whatever it is doing: waiting in the queue (it never runs), starting its interpreter, or running. */
  cancelRun(runId: string): boolean {
    const queued = this.queuedRuns.get(runId);
    if (queued) {
      queued.cancel();
      return true;
    }
    const session = [...this.sessions.values()].find((s) => s.active?.runId === runId);
    if (!session) return false;
    stopActive(session);
    return true;
  }

  /** Fresh interpreter for the session; its globals are gone (its scratch folder is kept), and its next run says `reason`. */
  async resetSession(sessionName = 'default', backend?: BackendKind, reason = 'the session was reset on request'): Promise<void> {
    const matching = [...this.sessions.values()].filter((s) => s.name === sessionName && (!backend || s.backend.kind === backend));
    await Promise.all(matching.map((s) => this.dropSession(s, reason, 'restart')));
    this.emitState();
  }

  /**
   * Ends every session of a scope (its client is gone): runs in them are cancelled, and nothing is remembered for
   * their names, which nobody will use again.
   */
  async endScope(scope: string): Promise<void> {
    const matching = [...this.sessions.values()].filter((s) => s.scope === scope);
    await Promise.all([...matching.map((s) => this.dropSession(s, 'its client is gone', 'end')), this.scratch?.removeScope(scope)]);
    for (const s of matching) this.losses.delete(sessionKey(s.backend.kind, s.name, scope));
    this.emitState();
  }

  /** Starts the default session's interpreter ahead of the first run. */
  async warmUp(backend: BackendKind = this.config.defaultBackend, sessionName = 'default'): Promise<void> {
    if (this.disabled.has(backend)) return;
    const starting = this.session(backend, sessionName).backend.start();
    this.emitState();
    await starting;
    this.emitState();
  }

  /** What confines the backend's interpreters here; undefined when it is not sandboxed (workspace Python). */
  sandbox(kind: BackendKind): SandboxReport | undefined {
    return this.factories.get(kind)?.sandbox?.();
  }

  backendInfo(kind: BackendKind, sessionName = 'default'): BackendInfo {
    const session = this.sessions.get(sessionKey(kind, sessionName));
    return session ? session.backend.info() : { kind, state: 'not-loaded' };
  }

  /** Takes a backend away (its server was unset): its sessions end, and their next run is told `reason`. */
  async removeBackend(kind: BackendKind, reason: string): Promise<void> {
    const factory = this.factories.get(kind);
    if (!factory) return;
    this.factories.delete(kind);
    await this.retire(kind, factory, reason, 'end');
  }

  private nextRunId(): string {
    return `${this.runPrefix}-${++this.runCounter}`;
  }

  /** What a backend says about where it runs (see BackendFactory.describe), or undefined. */
  async describeBackend(kind: BackendKind): Promise<Record<string, unknown> | undefined> {
    return this.factories.get(kind)?.describe?.();
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    const spare = this.spares.release();
    await Promise.all([...all.map((s) => s.backend.dispose().catch(() => undefined)), spare?.instance.dispose().catch(() => undefined)]);
    // Once no interpreter is left to write in them.
    await this.scratch?.removeAll();
    await Promise.all([...this.factories.values()].map((f) => f.dispose?.().catch(() => undefined)));
    this.runListeners.clear();
    this.stateListeners.clear();
  }

  /** `timeoutS` undefined means no limit. */
  private invalidArgument(code: unknown, backend: unknown, session: unknown, timeoutS: unknown): string | undefined {
    if (typeof code !== 'string') return 'code must be a string of Python source';
    return this.invalidTarget(backend, session) ?? (timeoutS === undefined ? undefined : timeoutProblem(timeoutS));
  }

  private invalidTarget(backend: unknown, session: unknown): string | undefined {
    if (!isBackendKind(backend)) return `backend must be one of: ${[...this.factories.keys()].join(', ')}`;
    if (!this.factories.has(backend)) {
      const how = backend === 'jupyter' ? ': it needs a Jupyter Server (VS Code setting codeMode.jupyter.url, CLI --jupyter-url URL|local)' : '';
      return `the ${backend} backend is not available here${how}`;
    }
    if (typeof session !== 'string' || !SESSION_NAME.test(session)) {
      return 'session must be 1-64 characters of letters, digits, "_", "-" or "."';
    }
    return undefined;
  }

  private async packages(action: PackagesResult['action'], options: PackagesOptions): Promise<PackagesResult> {
    const backend = options.backend ?? this.config.defaultBackend;
    const sessionName = options.session ?? 'default';
    const refuse = (message: string): PackagesResult => ({
      success: false,
      action,
      backend: isBackendKind(backend) ? backend : this.config.defaultBackend,
      session: sessionName,
      packages: [],
      message,
      duration_ms: 0,
    });
    const invalid = this.invalidTarget(backend, sessionName) ?? this.disabled.get(backend);
    if (invalid) return refuse(invalid);
    const specs = parsePackageList(options.packages, MAX_PACKAGES);
    if ('error' in specs) return refuse(specs.error);
    const requirements = specs.filter((s): s is RequirementSpec => s.kind === 'requirement');
    if (action === 'check' && requirements.length !== specs.length) {
      return refuse('a check takes package names (with optional version specifiers), not wheel files or URLs');
    }
    let session: Session;
    try {
      session = this.session(backend, sessionName, options.scope);
    } catch (error) {
      if (error instanceof SessionLimitError) return refuse(error.message);
      throw error;
    }
    session.lastWork = `%pip ${action} ${specs.map((spec) => spec.requested).join(' ')}`;
    return session.enqueue(async (): Promise<PackagesResult> => {
      const started = performance.now();
      const shown = action === 'install' ? this.showInstall(session, specs, options.origin) : undefined;
      let report: PackageReport;
      try {
        report = action === 'install' ? await this.installInto(session, specs) : await this.checkIn(session, requirements);
      } catch (error) {
        const message = errorText(error);
        report = { packages: specs.map((spec) => ({ name: distributionOf(spec), requested: spec.requested, installed: false, error: message })), message };
      }
      this.emitState();
      const duration_ms = roundMs(performance.now() - started);
      const result: PackagesResult = { success: report.packages.every((p) => p.installed), action, backend, session: session.name, ...report, duration_ms };
      shown?.(result);
      return result;
    });
  }

  /**
   * An install shows as a run of `%pip install …`, as it is a cell in a notebook: the results view, the runs
   * channel, the history and the status bar see it start and end, with every package's outcome and pip's
   * whole error. Returns what ends it.
   */
  private showInstall(session: Session, specs: PackageSpec[], origin: RunOrigin = 'test'): (result: PackagesResult) => void {
    const runId = this.nextRunId();
    const { kind: backend } = session.backend;
    const code = `%pip install ${specs.map((spec) => spec.requested).join(' ')}`;
    this.emitRun({ type: 'started', runId, session: session.name, backend, code, origin, startedAt: Date.now() });
    return (result) => {
      const installed = result.packages.filter((p) => p.installed).map((p) => `${p.name} ${p.version ?? ''}`.trim());
      const failed = result.packages.filter((p) => !p.installed).map((p) => `${p.requested}: ${p.error ?? 'not installed'}`);
      const stdout = installed.length > 0 ? `installed ${installed.join(', ')}\n` : '';
      const stderr = failed.length > 0 ? `${failed.join('\n')}\n` : '';
      if (stdout) this.emitRun({ type: 'stdout', runId, text: stdout });
      if (stderr) this.emitRun({ type: 'stderr', runId, text: stderr });
      const diagnostics: Diagnostics | null = result.success ? null : { error_type: 'RuntimeError', message: result.message };
      this.emitRun({ type: 'finished', runId, result: { success: result.success, stdout, stderr, duration_ms: result.duration_ms, diagnostics, backend, session: session.name, run_id: runId } });
    };
  }

  private installInto(session: Session, specs: PackageSpec[]): Promise<PackageReport> {
    const backend = session.backend;
    if (!backend.installPackages) throw new Error(`the ${backend.kind} backend cannot install packages`);
    this.log.info(`installing into the ${backend.kind} session "${session.name}": ${specs.map((s) => s.requested).join(', ')}`);
    return backend.installPackages(specs, { wheelhouse: this.config.wheelhouse, wheelhouseSetting: this.config.wheelhouseSetting });
  }

  private checkIn(session: Session, specs: RequirementSpec[]): Promise<PackageReport> {
    if (!session.backend.checkPackages) throw new Error(`the ${session.backend.kind} backend cannot check packages`);
    return session.backend.checkPackages(specs);
  }

  /**
   * On ModuleNotFoundError in Pyodide (with auto-install on), installs the missing package once. Returns
   * `name==version` when the code is worth running again, else a hint saying what was tried.
   */
  private async autoInstall(session: Session, outcome: BackendOutcome, active: ActiveRun, options: RunOptions): Promise<AutoInstall | undefined> {
    if (!this.config.autoInstall || session.backend.kind !== 'pyodide' || active.interruptedBy) return undefined;
    if (outcome.status !== 'error' || outcome.excName !== 'ModuleNotFoundError') return undefined;
    const module = missingTopLevelModule(outcome.message);
    if (!module) return undefined;
    const folders = [...(options.script ? [path.dirname(options.script.path), ...(options.script.cwd ? [options.script.cwd] : [])] : []), ...this.workspaceRoots];
    const local = findLocalModule(module, folders);
    if (local) {
      return { hint: `"${module}" was not installed: it is your own module (${local}), so its folder is not on sys.path for this run. Run the file that imports it (its folder comes first on sys.path), or add the folder to sys.path.` };
    }
    const spec = parseRequirement(distributionForImport(module));
    if ('error' in spec) return undefined;
    let report: PackageReport;
    try {
      report = await this.installInto(session, [spec]);
    } catch (error) {
      report = { packages: [], message: errorText(error) };
    }
    const status = report.packages[0];
    if (status?.installed) return { installed: `${status.name}==${status.version ?? '?'}` };
    return { hint: `auto-install tried to install "${spec.name}" for the missing module "${module}" and failed: ${status?.error ?? report.message}` };
  }

  private session(backend: BackendKind, name: string, scope?: string): Session {
    const key = sessionKey(backend, name, scope);
    let session = this.sessions.get(key);
    if (!session) {
      const factory = this.factories.get(backend);
      if (!factory) throw new Error(`no ${backend} backend`);
      this.makeRoomFor(backend, name);
      // A session restarted under this key has its folder waiting; the spare's sandbox binds another one.
      const spare = this.scratch?.hasParked(key) ? undefined : this.takeSpare(backend, factory);
      const owner: { session?: Session } = spare?.owner ?? {};
      const scratchDir = spare ? spare.scratchDir : this.scratch?.take(key, `${backend}-${name}`);
      const instance = spare?.instance ?? factory.create(this.sessionOptions(name, scratchDir, owner));
      session = owner.session = new Session(name, instance, scope, scratchDir);
      session.inheritedLoss = this.losses.get(key);
      this.losses.delete(key);
      this.sessions.set(key, session);
      if (spare) this.refillAfterFirstRun(session, spare);
    }
    return session;
  }

  /** What a backend session is made with; `owner` is the engine's session it serves, known once it is taken. */
  private sessionOptions(name: string, scratchDir: string | undefined, owner: { session?: Session }): BackendSessionOptions {
    return {
      session: name,
      log: this.log,
      // The session answers its own runs' questions; everything else goes to the bridge.
      hostCall: (method, params) => (method === INPUT_METHOD ? askFor(owner.session?.active, params) : this.hostCall(method, params, owner.session?.active?.hostRun)),
      scratchDir,
      workspaceRoots: this.workspaceRoots,
    };
  }

  // ---- the spare interpreter (spare.ts) -----------------------------------------------------------------

  /**
   * Keeps a started interpreter of `kind` ready for the next new session, and starts another each time one is
   * taken; undefined keeps none. It costs the memory of one more idle session of that backend.
   */
  keepSpare(kind: BackendKind | undefined): void {
    const other = this.spares.want(kind);
    if (other) void this.discardSpare(other);
    this.refillSpare();
  }

  /** The spare interpreter, if one is kept now (its state and pid). */
  spareInfo(): BackendInfo | undefined {
    return this.spares.current?.instance.info();
  }

  private refillSpare(): void {
    const kind = this.spares.kind;
    const factory = kind && this.factories.get(kind);
    if (this.disposed || !kind || !factory || this.disabled.has(kind) || this.spares.current) return;
    const owner: { session?: Session } = {};
    const scratchDir = this.scratch?.take(SPARE_SCRATCH_KEY, `${kind}-session`);
    const spare: Spare<Session> = { kind, factory, instance: factory.create(this.sessionOptions('(spare)', scratchDir, owner)), scratchDir, owner };
    this.spares.hold(spare);
    spare.instance.start().catch((error: unknown) => {
      // Taken meanwhile, its session reports the failure; discarded, it was ended on purpose.
      if (this.spares.current !== spare) return;
      // Not started again until a session takes a spare: a start that fails here would fail in a loop.
      this.log.warn(`the spare ${kind} interpreter did not start: ${errorText(error)}`);
      void this.discardSpare(this.spares.release()!);
    });
  }

  /** The spare for a new session, if one fits and is alive. */
  private takeSpare(kind: BackendKind, factory: BackendFactory): Spare<Session> | undefined {
    const spare = this.spares.take(kind, factory);
    if (!spare) return undefined;
    if (spare.instance.state === 'loading' || spare.instance.state === 'ready') return spare;
    // Its interpreter ended while it waited: a fresh session must not start with news of a lost state.
    void this.discardSpare(spare).then(() => this.refillSpare());
    return undefined;
  }

  /** The next spare starts once the session that took this one has had its first run: not beside it. */
  private refillAfterFirstRun(session: Session, spare: Spare<Session>): void {
    this.log.info(`session "${session.name}" (${spare.kind}) takes the spare interpreter started ahead of it`);
    const refill = () => void session.enqueue(async () => undefined).finally(() => this.refillSpare());
    spare.instance.start().then(refill, refill);
  }

  /** A spare of `kind` made by a factory that went, or of a backend turned off: disposed of, and replaced if still wanted. */
  private async replaceSpare(kind: BackendKind): Promise<void> {
    if (this.spares.current?.kind !== kind) return;
    await this.discardSpare(this.spares.release()!);
    this.refillSpare();
  }

  private async discardSpare(spare: Spare<Session>): Promise<void> {
    await spare.instance.dispose().catch(() => undefined);
    if (spare.scratchDir) await this.scratch?.remove(spare.scratchDir);
  }

  /**
   * Each live session holds an interpreter (about 200 MB for Pyodide): past the cap, the least recently used
   * idle one of the backend is ended, and its next run is told. With every one busy, the new one is refused.
   */
  private makeRoomFor(backend: BackendKind, name: string): void {
    const live = [...this.sessions.values()].filter((s) => s.backend.kind === backend);
    if (live.length < this.config.maxSessions) return;
    const idle = live.filter((s) => s.idle).sort((a, b) => a.lastUsed - b.lastUsed);
    if (idle.length === 0) {
      throw new SessionLimitError(
        `all ${live.length} ${backend} sessions are busy, so session "${name}" cannot start (the limit is ${this.config.maxSessions}: setting codeMode.maxSessions, CLI --max-sessions); wait for one to finish or use an existing session`,
      );
    }
    const evicted = idle[0]!;
    const reason = `the session was ended to make room for session "${name}" (at most ${this.config.maxSessions} ${backend} sessions live at once; it was the least recently used)`;
    this.log.info(`evicting the ${backend} session "${evicted.name}": ${reason}`);
    void this.dropSession(evicted, reason, 'end');
  }

  /**
   * Ends a session's interpreter; a later run under its name starts afresh and is told `reason`. A session that
   * `end`s takes its scratch folder along; one that only `restart`s leaves it to the next session of its name.
   */
  private async dropSession(session: Session, reason: string, how: DropKind): Promise<void> {
    const key = sessionKey(session.backend.kind, session.name, session.scope);
    if (this.sessions.get(key) === session) this.sessions.delete(key);
    // Parked at once, so a run right after the reset finds it.
    if (session.scratchDir && how === 'restart') this.scratch?.park(key, session.scratchDir, session.scope);
    if (session.active) {
      session.active.interruptedBy ??= 'user';
      session.active.restarted = true;
      // A run still waiting for this interpreter stops waiting: it will not start now.
      session.active.stopStart?.();
    } else {
      this.losses.delete(key);
      this.losses.set(key, reason);
      if (this.losses.size > REMEMBERED_LOSSES) this.losses.delete(this.losses.keys().next().value!);
    }
    await session.backend.dispose().catch((error: unknown) => this.log.warn(`dispose failed: ${String(error)}`));
    if (session.scratchDir && how === 'end') await this.scratch?.remove(session.scratchDir);
  }

  private async execute(
    session: Session,
    runId: string,
    options: RunOptions,
    timeoutS: number,
    emit: (event: RunEvent) => void,
  ): Promise<RunResult> {
    const backend = session.backend.kind;
    let stdout = new CappedOutput(this.config.outputCapBytes);
    let stderr = new CappedOutput(this.config.outputCapBytes);
    const displays: Display[] = [];
    let order = new OutputOrder();
    // What the interpreter sends is bounded here whatever its own limits say (runLimits.ts).
    let admitted = new RunDisplays();
    const started = performance.now();
    const location = options.script && { file: options.script.path, line: options.script.firstLine };
    const origin = options.origin ?? 'test';
    // Both attempts' calls (auto-install runs the code again): each one reached its tool.
    const toolCalls: ToolCallRecord[] = [];
    const hostRun: HostCallRun = {
      runId,
      origin,
      session: session.name,
      ...(location ? { location } : {}),
      sessionAllowed: options.toolApprovals?.sessionAllowed ?? new Set(),
      recordToolCall: (call) => toolCalls.push(call),
    };
    const active: ActiveRun = { runId, restarted: false, hostRun };
    // State lost before this run, which nobody was told of yet: the caller may be counting on it.
    const lostBefore = options.reset ? 'this run asked for a fresh interpreter' : (session.inheritedLoss ?? session.backend.takeStateLoss());
    session.inheritedLoss = undefined;
    const finish = (outcome: BackendOutcome | undefined, startError?: string, autoInstalled?: AutoInstall): RunResult => {
      const diagnostics = diagnose(outcome && boundOutcome(outcome), active, timeoutS, options.timeoutSource, startError, session.everStarted);
      const reset = lostBefore ?? session.backend.takeStateLoss() ?? (diagnostics?.session_reset ? diagnostics.message : undefined);
      if (lostBefore && diagnostics && !options.reset) diagnostics.session_reset = true;
      const result = this.withHints(
        shapeResult({
          runId,
          backend,
          session: session.name,
          durationMs: performance.now() - started,
          stdout,
          stderr,
          displays,
          outputs: order.items({ stdout, stderr }),
          diagnostics,
          reset,
          toolCalls,
        }),
      );
      if (autoInstalled && 'installed' in autoInstalled) result.auto_installed = [autoInstalled.installed];
      if (autoInstalled && 'hint' in autoInstalled && result.diagnostics) result.diagnostics.auto_install = autoInstalled.hint;
      emit({ type: 'finished', runId, result });
      this.emitState();
      return result;
    };

    emit({
      type: 'started',
      runId,
      session: session.name,
      backend,
      code: options.code,
      origin,
      startedAt: Date.now(),
      ...(location ? { location } : {}),
      ...(options.tool ? { tool: options.tool } : {}),
    });
    // Before the interpreter starts and again once it has (nothing listened for an abort meanwhile).
    const cancelledBeforeRunning = () => {
      active.interruptedBy ??= 'cancel';
      return finish({ status: 'interrupted' });
    };
    if (options.signal?.aborted) return cancelledBeforeRunning();
    // Running from here on, for everyone who asks: Stop finds it while its interpreter is still starting.
    session.active = active;
    try {
      if (options.reset) {
        await session.backend.restart();
        // The fresh interpreter is what was asked for; an earlier loss is moot.
        session.backend.takeStateLoss();
      }
      if (session.backend.state !== 'ready') {
        const starting = session.backend.start();
        this.emitState();
        const started = await this.awaitStart(session, active, starting, options.signal);
        this.emitState();
        if (!started) return cancelledBeforeRunning();
      }
      session.everStarted = true;
    } catch (error) {
      return finish(undefined, errorText(error));
    } finally {
      if (session.active === active) session.active = undefined;
    }
    if (options.signal?.aborted) return cancelledBeforeRunning();

    const text = (stream: StreamName, chunk: unknown) => {
      if (typeof chunk !== 'string') return;
      const output = stream === 'stdout' ? stdout : stderr;
      const start = output.byteLength;
      const live = output.append(chunk);
      order.text(stream, start, output.byteLength);
      if (live) emit({ type: stream, runId, text: live });
    };
    const show = (display: Display) => {
      displays.push(display);
      order.display(displays.length - 1);
      emit({ type: 'display', runId, display });
    };
    const sink: BackendSink = {
      stdout: (chunk) => text('stdout', chunk),
      stderr: (chunk) => text('stderr', chunk),
      dropped: (stream, bytes) => (stream === 'stdout' ? stdout : stderr).skip(Number(bytes) || 0),
      display: (display) => {
        const kept = admitted.admit(display);
        if (kept) show(kept);
      },
    };
    // After the code's displays and before the files it printed: how many it showed beyond the limit.
    const noteDropped = () => {
      const note = admitted.takeNote();
      if (note) show(note);
    };
    let outcome = await this.attempt(session, active, options, timeoutS, sink);
    const autoInstalled = await this.autoInstall(session, outcome, active, options);
    if (autoInstalled && 'installed' in autoInstalled) {
      if (options.signal?.aborted) {
        active.interruptedBy = 'cancel';
        outcome = { status: 'interrupted' };
      } else {
        // The result is the second run's: what the first printed before failing was streamed already.
        stdout = new CappedOutput(this.config.outputCapBytes);
        stderr = new CappedOutput(this.config.outputCapBytes);
        displays.length = 0;
        order = new OutputOrder();
        admitted = new RunDisplays();
        outcome = await this.attempt(session, active, options, timeoutS, sink);
      }
    }
    noteDropped();
    // Agents show a file by printing its path; a person's run shows what it displays ("read data.csv" attaches nothing).
    if (!isPersonOrigin(options.origin ?? 'test')) await this.showPrintedFiles(session, runId, stdout.text(), show);
    return finish(outcome, undefined, autoInstalled);
  }

  /**
   * Waits for the session's interpreter to start, within the start bound: true once it has, false when the run
   * was stopped meanwhile (Stop, its signal, a restart of the session). A start past the bound throws with the
   * reason, and the session is dropped so that its next run starts afresh rather than waiting on the same start.
   */
  private async awaitStart(session: Session, active: ActiveRun, starting: Promise<void>, signal: AbortSignal | undefined): Promise<boolean> {
    const boundS = this.config.startTimeoutS;
    let timer: NodeJS.Timeout | undefined;
    let stop = (): void => undefined;
    const stopped = new Promise<'stopped'>((resolve) => (stop = () => resolve('stopped')));
    const onAbort = () => {
      active.interruptedBy ??= 'cancel';
      stop();
    };
    active.stopStart = stop;
    signal?.addEventListener('abort', onAbort, { once: true });
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), boundS * 1000)));
    try {
      const outcome = await Promise.race([starting.then(() => 'started' as const), stopped, timedOut]);
      if (outcome === 'timeout') {
        const kind = session.backend.kind;
        const reason = `the ${kind} backend did not start within ${boundS} s`;
        this.log.warn(`run ${active.runId}: ${reason}; the ${kind} session "${session.name}" starts afresh on its next run`);
        active.stopStart = undefined;
        // Not awaited: a backend that hangs in its start may hang in its disposal too.
        void this.dropSession(session, reason, 'restart');
        throw new Error(`${reason} (${startHint(kind)}); the next run tries again`);
      }
      return outcome === 'started';
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      active.stopStart = undefined;
    }
  }

  /** Images and text files whose paths the run printed, after what the code displayed itself. */
  private async showPrintedFiles(session: Session, runId: string, text: string, show: (display: Display) => void): Promise<void> {
    // The workspace and this session's own scratch folder: never another session's.
    const roots = [...this.workspaceRoots, ...(session.scratchDir ? [session.scratchDir] : [])];
    if (roots.length === 0) return;
    try {
      for (const display of await displaysForPrintedFiles(text, roots)) show(display);
    } catch (error) {
      this.log.warn(`files printed by run ${runId} could not be shown: ${String(error)}`);
    }
  }

  /** One execution of the code, under the run's time limit and cancellation. */
  private async attempt(session: Session, active: ActiveRun, options: RunOptions, timeoutS: number, sink: BackendSink): Promise<BackendOutcome> {
    const backend = session.backend.kind;
    const runId = active.runId;
    session.active = active;
    const stop = (reason: 'timeout' | 'cancel') => {
      if (session.active !== active) return;
      active.interruptedBy ??= reason;
      session.backend.interrupt();
      graceTimer = setTimeout(() => {
        if (session.active !== active) return;
        this.log.warn(`run ${runId} did not stop within ${this.config.interruptGraceMs} ms; restarting the ${backend} session "${session.name}"`);
        active.restarted = true;
        session.backend.restart().catch((error: unknown) => this.log.error(`restart failed: ${String(error)}`));
      }, this.config.interruptGraceMs);
    };
    let graceTimer: NodeJS.Timeout | undefined;
    // The limit counts the run's own time: while it waits for a person's answer, the clock stands still.
    let leftMs = timeoutS * 1000;
    let since = performance.now();
    const startClock = () => (leftMs > 0 ? setTimeout(() => stop('timeout'), leftMs) : undefined);
    let timeoutTimer = timeoutS > 0 ? startClock() : undefined;
    // Made by the run's first question only: aborting one builds a DOMException, a cost every run would pay.
    let stopped: AbortController | undefined;
    const onAbort = () => stop('cancel');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    active.stopRun = onAbort;
    const clock = {
      pause: () => {
        clearTimeout(timeoutTimer);
        leftMs -= performance.now() - since;
      },
      resume: () => {
        since = performance.now();
        if (timeoutS > 0) timeoutTimer = startClock();
      },
    };
    const stoppedSignal = () => (stopped ??= new AbortController()).signal;
    active.ask = options.onInput && askPausingClock(options.onInput, stoppedSignal, clock);
    const approver = options.toolApprovals?.ask;
    active.hostRun.askToolApproval = approver && askPausingClock(approver, stoppedSignal, clock);

    try {
      return await session.backend.run({ runId, code: options.code, script: options.script, outputCapBytes: this.config.outputCapBytes }, sink);
    } catch (error) {
      return { status: 'crashed', message: errorText(error) };
    } finally {
      clearTimeout(timeoutTimer);
      clearTimeout(graceTimer);
      stopped?.abort();
      options.signal?.removeEventListener('abort', onAbort);
      active.stopRun = undefined;
      session.active = undefined;
    }
  }

  /** Before the finished event, so every front door and the history see the hints too. */
  private withHints(result: RunResult): RunResult {
    if (!result.diagnostics || !this.hints) return result;
    try {
      const hints = this.hints(result.diagnostics);
      // The diagnostics object is made for this result alone, so setting a field on it is safe.
      if (hints.length > 0) result.diagnostics.hints = hints;
    } catch (error) {
      this.log.warn(`hints for a failed run could not be made: ${String(error)}`);
    }
    return result;
  }

  private emitRun(event: RunEvent, own?: Listener<RunEvent>): void {
    for (const listener of [...this.runListeners, ...(own ? [own] : [])]) {
      try {
        listener(event);
      } catch (error) {
        this.log.error(`run event listener failed: ${String(error)}`);
      }
    }
  }

  private emitState(): void {
    for (const listener of this.stateListeners) {
      try {
        listener();
      } catch (error) {
        this.log.error(`state listener failed: ${String(error)}`);
      }
    }
  }
}

/** The question of a run, put to its front door; rejected (an EOFError in Python) when nobody can answer. */
async function askFor(active: ActiveRun | undefined, params: unknown): Promise<string | null> {
  const request = params as Partial<InputRequest> | null;
  if (typeof request?.prompt !== 'string') throw new Error('input() was called with a malformed request');
  if (!active?.ask) {
    throw new Error(
      'input() has nobody to answer it: this run was started where no one can be asked (an MCP client without elicitation, a script). Put the data in the code, or read it from a file',
    );
  }
  return (await active.ask({ prompt: request.prompt, password: request.password === true })) ?? null;
}

/** Asks a person (input(), a tool call's approval) with the run's clock paused; a stopped run dismisses the question. */
function askPausingClock<Q, A>(ask: (request: Q, signal: AbortSignal) => Promise<A>, stopped: () => AbortSignal, clock: { pause(): void; resume(): void }) {
  return async (request: Q): Promise<A> => {
    clock.pause();
    try {
      return await ask(request, stopped());
    } finally {
      clock.resume();
    }
  };
}

/**
 * Stops what the session's active run is doing: waiting for its interpreter, or running code (code that ignores
 * the interrupt has its interpreter restarted after the grace, as for a time limit).
 */
function stopActive(session: Session): void {
  const active = session.active;
  if (!active) return;
  active.interruptedBy ??= 'user';
  if (active.stopStart) active.stopStart();
  else if (active.stopRun) active.stopRun();
  else session.backend.interrupt();
}

/** A run in a few words, for the runs queued behind it: its file's name, else its code's first line. */
function workLabel(options: RunOptions): string {
  if (options.script) return path.basename(options.script.path);
  const firstLine = typeof options.code === 'string' ? (options.code.split('\n').find((line) => line.trim()) ?? '').trim() : '';
  return firstLine.length > 40 ? `${firstLine.slice(0, 39)}…` : firstLine || 'the run before it';
}

/** What usually keeps a backend from starting, for the message of a start past its bound. */
function startHint(kind: BackendKind): string {
  if (kind === 'jupyter') return 'is the Jupyter Server reachable and answering? codeMode.jupyter.url, CLI --jupyter-url';
  if (kind === 'python') return 'does the interpreter start from a terminal?';
  return 'Pyodide loads from the extension; a busy or slow machine may need a moment more';
}

function sessionKey(backend: BackendKind, name: string, scope?: string): string {
  return scope === undefined ? `${backend}:${name}` : `${scope}/${backend}:${name}`;
}

/** What went wrong, in the terms of the MCP contract; null when nothing did. */
function diagnose(outcome: BackendOutcome | undefined, active: ActiveRun, timeoutS: number, timeoutSource: string | undefined, startError?: string, hadState = true): Diagnostics | null {
  if (startError !== undefined || !outcome) {
    // An interpreter that never started held nothing to lose.
    return { error_type: 'BACKEND_CRASHED', message: `the interpreter could not start: ${startError ?? 'unknown error'}`, session_reset: hadState };
  }
  const stoppedByUs = active.interruptedBy === 'timeout' || active.interruptedBy === 'cancel' || active.interruptedBy === 'user';
  if (stoppedByUs && (outcome.status === 'interrupted' || outcome.status === 'crashed')) {
    const reset = active.restarted || outcome.status === 'crashed';
    const resetNote = !reset
      ? ' The session state is kept.'
      : outcome.status === 'crashed' && outcome.restartFailed !== undefined
        ? ` The interpreter did not stop in time and could not be restarted (${outcome.restartFailed}): the session state is gone, and a fresh interpreter starts with the next run.`
        : outcome.status === 'crashed' && !active.restarted
          ? // It ended by itself before a restart was due (the server lost it): that, not a restart, is what happened.
            ` Meanwhile the interpreter stopped: ${outcome.message}. The session state was reset.`
          : ' The interpreter did not stop in time and was restarted: the session state was reset.';
    if (active.interruptedBy === 'timeout') {
      const source = timeoutSource ? ` (${timeoutSource})` : '';
      return { error_type: 'TIMEOUT', message: `the run exceeded its time limit of ${timeoutS} s${source} and was stopped.${resetNote}`, timeout_s: timeoutS, session_reset: reset };
    }
    return { error_type: 'CANCELLED', message: `the run was cancelled.${resetNote}`, session_reset: reset };
  }
  switch (outcome.status) {
    case 'ok':
      return null;
    case 'interrupted':
      return { error_type: 'RuntimeError', exception: 'KeyboardInterrupt', message: 'KeyboardInterrupt', session_reset: false };
    case 'crashed':
      return { error_type: 'BACKEND_CRASHED', message: `the interpreter stopped unexpectedly: ${outcome.message}. A fresh one starts with the next run: the session state was reset.`, session_reset: true };
    case 'error':
      return {
        error_type: outcome.errorType,
        exception: outcome.excName,
        message: outcome.message,
        traceback: outcome.traceback,
        ...(outcome.sessionReset ? { session_reset: true } : {}),
      };
  }
}
