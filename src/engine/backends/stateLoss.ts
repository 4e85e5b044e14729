/**
 * Why a session's interpreter lost its state where no run's outcome could say so (killed or crashed between
 * runs, recycled), kept until the engine asks (BackendSession.takeStateLoss). Losses the engine caused itself
 * (restart, dispose) are never remembered here.
 */
export class StateLoss {
  private reason?: string;

  /**
   * Keeps the first loss until it is taken: that is the one that took the state the next run expects; a later
   * loss only ends an interpreter that had nothing of it left.
   */
  remember(reason: string): void {
    this.reason ??= reason;
  }

  /** The loss since the last call, or undefined; taking it forgets it. */
  take(): string | undefined {
    const reason = this.reason;
    this.reason = undefined;
    return reason;
  }
}
