// A run from its request to its turn: the checks that refuse it (arguments, a backend turned off, the policy, a
// full pool), its session, and its place in that session's queue, where it can be cancelled before its turn.
import * as path from 'node:path';
import { isBackendKind, timeoutProblem, type EngineConfig } from '../config';
import type { EngineEvents } from '../events';
import { checkPolicy } from '../policy';
import { shapeResult } from '../result';
import type { Diagnostics, RunEvent, RunResult } from '../types';
import type { SessionPool } from '../sessions/pool';
import { SessionLimitError, type Session } from '../sessions/session';
import type { RunExecutor } from './executor';
import type { RunHints } from './hints';
import type { RunOptions } from './runOptions';

/** A run waiting behind other work on its session, which can be cancelled before its turn. */
interface QueuedRun {
  session: Session;
  cancel(): void;
}

/** Code of a refused run kept for its card and history (a refusal may be for code far past every limit). */
const REFUSED_CODE_CHARS = 64 * 1024;

export class RunQueue {
  /** Runs queued behind other work, by run id, until their turn comes or they are cancelled. */
  private readonly queued = new Map<string, QueuedRun>();

  constructor(
    private readonly pool: SessionPool,
    private readonly executor: RunExecutor,
    private readonly events: EngineEvents,
    private readonly hints: RunHints,
    private readonly config: () => EngineConfig,
  ) {}

  async run(options: RunOptions): Promise<RunResult> {
    const config = this.config();
    const runId = this.events.nextRunId();
    const backend = options.backend ?? config.defaultBackend;
    const sessionName = options.session ?? 'default';
    const timeoutS = options.timeoutS ?? config.timeoutS;
    const timeoutSource =
      options.timeoutSource ??
      (options.timeoutS === undefined ? defaultTimeoutSource(config) : 'the time limit given to this run');
    const emit = (event: RunEvent) => this.events.emitRun(event, options.onEvent);
    const refuse = (diagnostics: Diagnostics): RunResult => {
      const shownBackend = isBackendKind(backend) ? backend : config.defaultBackend;
      const result = this.hints.addTo(
        shapeResult({ runId, backend: shownBackend, session: sessionName, durationMs: 0, diagnostics }),
      );
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
    const disabledReason = this.pool.disabledReason(backend);
    if (disabledReason) return refuse({ error_type: 'INVALID_ARGUMENT', message: disabledReason });
    const violation = checkPolicy(options.code, config.policy);
    if (violation) {
      return refuse({
        error_type: 'POLICY_VIOLATION',
        message: `${violation.rule}: ${violation.detail}`,
        policy: violation,
      });
    }

    let session: Session;
    try {
      session = this.pool.get(backend, sessionName, options.scope);
    } catch (error) {
      if (error instanceof SessionLimitError) return refuse({ error_type: 'INVALID_ARGUMENT', message: error.message });
      throw error;
    }
    const work = () => this.executor.execute(session, runId, { ...options, timeoutSource }, timeoutS, emit);
    const waitingFor = session.idle ? undefined : session.lastWork;
    session.lastWork = workLabel(options);
    if (waitingFor === undefined) return session.enqueue(work);
    return this.queue(session, runId, options, waitingFor, emit, work);
  }

  /** Cancels the run if it waits in a queue (it never runs); false when it does not. */
  cancel(runId: string): boolean {
    const queued = this.queued.get(runId);
    queued?.cancel();
    return queued !== undefined;
  }

  /** The runs waiting behind the session's running one, oldest first. */
  queuedOn(session: Session): string[] {
    return [...this.queued].filter(([, queued]) => queued.session === session).map(([runId]) => runId);
  }

  /**
   * A run behind other work on its session: shown at once as queued (what it waits for), and cancellable until
   * its turn (cancel, or its signal) without waiting for the work ahead of it.
   */
  private queue(
    session: Session,
    runId: string,
    options: RunOptions,
    waitingFor: string,
    emit: (event: RunEvent) => void,
    work: () => Promise<RunResult>,
  ): Promise<RunResult> {
    const backend = session.backend.kind;
    const location = options.script && { file: options.script.path, line: options.script.firstLine };
    emit({
      type: 'queued',
      runId,
      session: session.name,
      backend,
      code: options.code,
      origin: options.origin ?? 'test',
      startedAt: Date.now(),
      waitingFor,
      ...(location ? { location } : {}),
    });
    let cancelled: RunResult | undefined;
    let dropped = (_result: RunResult): void => undefined;
    const droppedResult = new Promise<RunResult>((resolve) => (dropped = resolve));
    const cancel = () => {
      if (cancelled || !this.queued.has(runId)) return;
      this.queued.delete(runId);
      options.signal?.removeEventListener('abort', cancel);
      const diagnostics: Diagnostics = {
        error_type: 'CANCELLED',
        message: `the run was cancelled while it waited for ${waitingFor}; it did not run. The session state is kept.`,
        session_reset: false,
      };
      cancelled = shapeResult({ runId, backend, session: session.name, durationMs: 0, diagnostics });
      emit({ type: 'finished', runId, result: cancelled });
      dropped(cancelled);
    };
    this.queued.set(runId, { session, cancel });
    if (options.signal?.aborted) cancel();
    else options.signal?.addEventListener('abort', cancel, { once: true });
    const turn = session.enqueue(() => {
      if (cancelled) return Promise.resolve(cancelled);
      this.queued.delete(runId);
      options.signal?.removeEventListener('abort', cancel);
      return work();
    });
    return Promise.race([turn, droppedResult]);
  }

  /** `timeoutS` undefined means no limit. */
  private invalidArgument(code: unknown, backend: unknown, session: unknown, timeoutS: unknown): string | undefined {
    if (typeof code !== 'string') return 'code must be a string of Python source';
    return this.pool.invalidTarget(backend, session) ?? (timeoutS === undefined ? undefined : timeoutProblem(timeoutS));
  }
}

/** What set the limit of a run that names no limit of its own: the engine's default, and how the front end changes it. */
function defaultTimeoutSource(config: EngineConfig): string {
  const name = config.settingNames.timeout;
  return name ? `the default time limit: ${name}` : 'the default time limit';
}

/** A run in a few words, for the runs queued behind it: its file's name, else its code's first line. */
function workLabel(options: RunOptions): string {
  if (options.script) return path.basename(options.script.path);
  const firstLine =
    typeof options.code === 'string' ? (options.code.split('\n').find((line) => line.trim()) ?? '').trim() : '';
  return firstLine.length > 40 ? `${firstLine.slice(0, 39)}…` : firstLine || 'the run before it';
}
