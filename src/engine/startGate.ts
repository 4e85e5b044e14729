/**
 * A run waiting for its interpreter to start, which interrupt() can still call off: the code then never runs.
 * Shared by the backends whose interpreters start on a run's demand.
 */
export class StartGate {
  private waiting?: { interrupted: boolean };

  /** A run is waiting for its interpreter. */
  get busy(): boolean {
    return this.waiting !== undefined;
  }

  /** Calls off the waiting run, if there is one; true when there was. */
  interrupt(): boolean {
    if (!this.waiting) return false;
    this.waiting.interrupted = true;
    return true;
  }

  /** Awaits `start`; undefined when interrupt() called the run off meanwhile. */
  async pass<T>(start: () => Promise<T>): Promise<T | undefined> {
    const waiting = { interrupted: false };
    this.waiting = waiting;
    try {
      const ready = await start();
      return waiting.interrupted ? undefined : ready;
    } finally {
      this.waiting = undefined;
    }
  }
}
