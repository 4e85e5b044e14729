// What the engine tells its front ends: every run's events, and that its sessions changed. Also the run ids, which
// runs and installs (an install shows as a run) draw from alike.
import { randomBytes } from 'node:crypto';
import type { Logger, RunEvent } from './types';

export type Listener<T> = (value: T) => void;

export interface Subscription {
  dispose(): void;
}

export class EngineEvents {
  private readonly runListeners = new Set<Listener<RunEvent>>();
  private readonly stateListeners = new Set<Listener<void>>();
  private runCounter = 0;
  private readonly runPrefix = randomBytes(3).toString('hex');

  constructor(private readonly log: Logger) {}

  onRunEvent(listener: Listener<RunEvent>): Subscription {
    this.runListeners.add(listener);
    return { dispose: () => this.runListeners.delete(listener) };
  }

  onStateChange(listener: Listener<void>): Subscription {
    this.stateListeners.add(listener);
    return { dispose: () => this.stateListeners.delete(listener) };
  }

  /** Unique for the life of the process, and unlike another process's. */
  nextRunId(): string {
    return `${this.runPrefix}-${++this.runCounter}`;
  }

  /** To every engine-wide listener, and to the run's own one; a throwing listener is logged, never the run's failure. */
  emitRun(event: RunEvent, own?: Listener<RunEvent>): void {
    for (const listener of [...this.runListeners, ...(own ? [own] : [])]) {
      try {
        listener(event);
      } catch (error) {
        this.log.error(`run event listener failed: ${String(error)}`);
      }
    }
  }

  emitState(): void {
    for (const listener of this.stateListeners) {
      try {
        listener();
      } catch (error) {
        this.log.error(`state listener failed: ${String(error)}`);
      }
    }
  }

  clear(): void {
    this.runListeners.clear();
    this.stateListeners.clear();
  }
}
