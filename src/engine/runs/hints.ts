import type { Diagnostics, Logger, RunResult } from '../types';

export type HintsProvider = (diagnostics: Diagnostics) => string[];

/** Advice attached to failed runs as `diagnostics.hints` (the learnings store gives past fixes). */
export class RunHints {
  provider?: HintsProvider;

  constructor(private readonly log: Logger) {}

  /** Before the finished event, so every front door and the history see the hints too. */
  addTo(result: RunResult): RunResult {
    if (!result.diagnostics || !this.provider) return result;
    try {
      const hints = this.provider(result.diagnostics);
      // The diagnostics object is made for this result alone, so setting a field on it is safe.
      if (hints.length > 0) result.diagnostics.hints = hints;
    } catch (error) {
      this.log.warn(`hints for a failed run could not be made: ${String(error)}`);
    }
    return result;
  }
}
