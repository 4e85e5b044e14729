// One run on its session, once its turn has come: the interpreter's start within its bound, the code under its
// time limit (paused while a person is asked) and cancellation, the output bounded as it arrives, auto-install
// and the second attempt, and the result shaped for every front end.
import { performance } from 'node:perf_hooks';
import type { EngineConfig } from '../config';
import { displaysForPrintedFiles } from '../displayFiles';
import { errorText } from '../errorText';
import type { EngineEvents } from '../events';
import type { AutoInstall, Installs } from '../installs';
import { CappedOutput } from '../output';
import { OutputOrder } from '../outputOrder';
import { shapeResult } from '../result';
import { boundOutcome, RunDisplays } from '../runLimits';
import {
  isPersonOrigin,
  type Display,
  type HostCallRun,
  type Logger,
  type RunEvent,
  type RunResult,
  type StreamName,
  type ToolCallRecord,
} from '../types';
import type { BackendOutcome, BackendSink } from '../backends/contract';
import type { SessionPool } from '../sessions/pool';
import type { ActiveRun, Session } from '../sessions/session';
import { diagnose, startHint } from './diagnose';
import type { RunHints } from './hints';
import { askPausingClock, QuestionBudget } from './questions';
import type { RunOptions } from './runOptions';

export interface RunExecutorDeps {
  pool: SessionPool;
  installs: Installs;
  events: EngineEvents;
  hints: RunHints;
  config: () => EngineConfig;
  log: Logger;
  workspaceRoots: string[];
}

export class RunExecutor {
  constructor(private readonly deps: RunExecutorDeps) {}

  async execute(
    session: Session,
    runId: string,
    options: RunOptions,
    timeoutS: number,
    emit: (event: RunEvent) => void,
  ): Promise<RunResult> {
    const { outputCapBytes } = this.deps.config();
    const backend = session.backend.kind;
    let stdout = new CappedOutput(outputCapBytes);
    let stderr = new CappedOutput(outputCapBytes);
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
    // One budget for both attempts: it bounds the run, not each execution of its code.
    const questions = new QuestionBudget(this.deps.config().questions);
    // State lost before this run, which nobody was told of yet: the caller may be counting on it.
    const lostBefore = options.reset
      ? 'this run asked for a fresh interpreter'
      : (session.inheritedLoss ?? session.backend.takeStateLoss());
    session.inheritedLoss = undefined;
    const finish = (
      outcome: BackendOutcome | undefined,
      startError?: string,
      autoInstalled?: AutoInstall,
    ): RunResult => {
      hostRun.over = true;
      const diagnostics = diagnose(
        outcome && boundOutcome(outcome),
        active,
        timeoutS,
        options.timeoutSource,
        startError,
        session.everStarted,
      );
      const reset =
        lostBefore ?? session.backend.takeStateLoss() ?? (diagnostics?.session_reset ? diagnostics.message : undefined);
      if (lostBefore && diagnostics && !options.reset) diagnostics.session_reset = true;
      const result = this.deps.hints.addTo(
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
      if (autoInstalled && 'hint' in autoInstalled && result.diagnostics)
        result.diagnostics.auto_install = autoInstalled.hint;
      emit({ type: 'finished', runId, result });
      this.deps.events.emitState();
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
        this.deps.events.emitState();
        const started = await this.awaitStart(session, active, starting, options.signal);
        this.deps.events.emitState();
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
        if (typeof display === 'object' && display !== null && display.result === true) {
          const value = admitted.admitResult(display);
          if (!value) return;
          if (!value.display) return order.result(value.text);
          displays.push(value.display);
          order.result(value.text, displays.length - 1);
          emit({ type: 'display', runId, display: value.display });
          return;
        }
        const kept = admitted.admit(display);
        if (kept) show(kept);
      },
    };
    // After the code's displays and before the files it printed: how many it showed beyond the limit.
    const noteDropped = () => {
      const note = admitted.takeNote();
      if (note) show(note);
    };
    let outcome = await this.attempt(session, active, options, timeoutS, sink, questions);
    const autoInstalled = await this.deps.installs.autoInstall(session, outcome, active, options.script);
    if (autoInstalled && 'installed' in autoInstalled) {
      if (options.signal?.aborted) {
        active.interruptedBy = 'cancel';
        outcome = { status: 'interrupted' };
      } else {
        // The result is the second run's: what the first printed before failing was streamed already.
        stdout = new CappedOutput(outputCapBytes);
        stderr = new CappedOutput(outputCapBytes);
        displays.length = 0;
        order = new OutputOrder();
        admitted = new RunDisplays();
        outcome = await this.attempt(session, active, options, timeoutS, sink, questions);
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
  private async awaitStart(
    session: Session,
    active: ActiveRun,
    starting: Promise<void>,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const { startTimeoutS: boundS, settingNames } = this.deps.config();
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
        this.deps.log.warn(
          `run ${active.runId}: ${reason}; the ${kind} session "${session.name}" starts afresh on its next run`,
        );
        active.stopStart = undefined;
        // Not awaited: a backend that hangs in its start may hang in its disposal too.
        void this.deps.pool.drop(session, reason, 'restart');
        throw new Error(`${reason} (${startHint(kind, settingNames)}); the next run tries again`);
      }
      return outcome === 'started';
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      active.stopStart = undefined;
    }
  }

  /** Images and text files whose paths the run printed, after what the code displayed itself. */
  private async showPrintedFiles(
    session: Session,
    runId: string,
    text: string,
    show: (display: Display) => void,
  ): Promise<void> {
    // The workspace and this session's own scratch folder: never another session's.
    const roots = [...this.deps.workspaceRoots, ...(session.scratchDir ? [session.scratchDir] : [])];
    if (roots.length === 0) return;
    try {
      for (const display of await displaysForPrintedFiles(text, roots)) show(display);
    } catch (error) {
      this.deps.log.warn(`files printed by run ${runId} could not be shown: ${String(error)}`);
    }
  }

  /** One execution of the code, under the run's time limit and cancellation. */
  private async attempt(
    session: Session,
    active: ActiveRun,
    options: RunOptions,
    timeoutS: number,
    sink: BackendSink,
    questions: QuestionBudget,
  ): Promise<BackendOutcome> {
    const { interruptGraceMs, outputCapBytes } = this.deps.config();
    const backend = session.backend.kind;
    const runId = active.runId;
    session.active = active;
    const stop = (reason: 'timeout' | 'cancel') => {
      if (session.active !== active) return;
      active.interruptedBy ??= reason;
      session.backend.interrupt();
      graceTimer = setTimeout(() => {
        if (session.active !== active) return;
        this.deps.log.warn(
          `run ${runId} did not stop within ${interruptGraceMs} ms; restarting the ${backend} session "${session.name}"`,
        );
        active.restarted = true;
        session.backend.restart().catch((error: unknown) => this.deps.log.error(`restart failed: ${String(error)}`));
      }, interruptGraceMs);
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
    // Questions can overlap (a backend may relay a call while another waits): the clock stands still from the
    // first one asked until the last one answered, and runs again once, with one timer.
    let questionsOpen = 0;
    const clock = {
      pause: () => {
        if (questionsOpen++ > 0) return;
        clearTimeout(timeoutTimer);
        leftMs -= performance.now() - since;
      },
      resume: () => {
        // A question that outlived the attempt (withdrawn as it ended) starts no clock for a run that is over.
        if (--questionsOpen > 0 || session.active !== active) return;
        since = performance.now();
        if (timeoutS > 0) timeoutTimer = startClock();
      },
    };
    const stoppedSignal = () => (stopped ??= new AbortController()).signal;
    active.ask = options.onInput && askPausingClock(options.onInput, stoppedSignal, clock, questions);
    const approver = options.toolApprovals?.ask;
    active.hostRun.askToolApproval = approver && askPausingClock(approver, stoppedSignal, clock, questions);

    try {
      return await session.backend.run(
        {
          runId,
          code: options.code,
          script: options.script,
          echoLastExpression: options.echoLastExpression ?? true,
          outputCapBytes,
        },
        sink,
      );
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
}
