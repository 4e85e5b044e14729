// One named session of one backend: its interpreter, the queue its work waits in, and the run it is doing now.
import type { BackendKind, HostCallRun, InputRequest } from '../types';
import type { BackendSession } from '../backends/contract';

/** What the engine knows of the run a session is doing: how it was stopped, and how to stop or ask it. */
export interface ActiveRun {
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

/** Orders sessions by use without ties (clock readings can be equal). */
let workQueued = 0;

export class Session {
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

  /**
   * Stops what the active run is doing: waiting for its interpreter, or running code (code that ignores the
   * interrupt has its interpreter restarted after the grace, as for a time limit).
   */
  stopActive(): void {
    const active = this.active;
    if (!active) return;
    active.interruptedBy ??= 'user';
    if (active.stopStart) active.stopStart();
    else if (active.stopRun) active.stopRun();
    else this.backend.interrupt();
  }
}

/** A session that `end`s is gone for good; one that `restart`s goes on under its name with a fresh interpreter. */
export type DropKind = 'end' | 'restart';

/** Raised when a new session is wanted and every live one is busy. */
export class SessionLimitError extends Error {}

/** Where a session lives in the pool: its backend, name and scope. */
export function sessionKey(backend: BackendKind, name: string, scope?: string): string {
  return scope === undefined ? `${backend}:${name}` : `${scope}/${backend}:${name}`;
}
