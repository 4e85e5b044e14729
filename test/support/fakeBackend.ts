// A backend that runs no Python: each session keeps a counter of its runs as its "state", can be told to
// lose that state the way a killed interpreter does, and can hold a run until released. For fast engine tests
// of what is the engine's job (sessions, queueing, eviction, announcements), not the backends'.
import type { BackendState } from '../../src/engine/types';
import type {
  BackendFactory,
  BackendOutcome,
  BackendRunRequest,
  BackendSession,
  BackendSink,
} from '../../src/engine/backends/contract';
import { StateLoss } from '../../src/engine/backends/stateLoss';

export class FakeSession implements BackendSession {
  readonly kind = 'pyodide' as const;
  state: BackendState = 'not-loaded';
  /** Runs since the interpreter started: what a real session's globals would hold. */
  runsSinceStart = 0;
  disposed = false;
  private readonly loss = new StateLoss();
  /** Ends a held run: with this outcome when it was stopped, else normally. */
  private held: ((stopped: BackendOutcome | undefined) => void) | undefined;
  holdNextRun = false;
  /** A held run goes on through interrupts, as code that ignores SIGINT does. */
  ignoresInterrupt = false;
  /** restart() fails saying this (its server lost the interpreter), ending a held run without restarting it. */
  restartFailure: string | undefined;

  constructor(readonly name: string) {}

  async start(): Promise<void> {
    this.state = 'ready';
  }

  async run(request: BackendRunRequest, sink: BackendSink): Promise<BackendOutcome> {
    this.state = 'busy';
    if (this.holdNextRun) {
      this.holdNextRun = false;
      const stopped = await new Promise<BackendOutcome | undefined>((resolve) => (this.held = resolve));
      if (stopped) {
        this.state = 'ready';
        return stopped;
      }
    }
    this.runsSinceStart++;
    sink.stdout(`${this.name}:${this.runsSinceStart}:${request.code}\n`);
    this.state = 'ready';
    return { status: 'ok' };
  }

  /** Lets a held run finish. */
  release(): void {
    this.held?.(undefined);
    this.held = undefined;
  }

  /** The interpreter dies between runs (the OOM killer): its state is gone and the backend knows why. */
  die(reason: string): void {
    this.runsSinceStart = 0;
    this.loss.remember(reason);
  }

  /** A held run stops, as code does on KeyboardInterrupt. */
  interrupt(): void {
    if (this.ignoresInterrupt) return;
    this.held?.({ status: 'interrupted' });
    this.held = undefined;
  }

  async restart(): Promise<void> {
    this.runsSinceStart = 0;
    const failure = this.restartFailure;
    this.held?.(
      failure === undefined
        ? { status: 'crashed', message: 'restarted' }
        : { status: 'crashed', message: `could not be restarted: ${failure}`, restartFailed: failure },
    );
    this.held = undefined;
    if (failure !== undefined) throw new Error(failure);
  }

  info() {
    return { kind: this.kind, state: this.state };
  }

  takeStateLoss(): string | undefined {
    return this.loss.take();
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.state = 'dead';
  }
}

/** A factory that remembers every session it made, by session name (latest last). */
export function fakeBackend(): BackendFactory & { made: FakeSession[]; latest(name: string): FakeSession | undefined } {
  const made: FakeSession[] = [];
  return {
    kind: 'pyodide',
    made,
    create: ({ session }) => {
      const created = new FakeSession(session);
      made.push(created);
      return created;
    },
    latest: (name) => made.filter((s) => s.name === name).pop(),
  };
}
