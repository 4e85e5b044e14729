/** At most this many progress notifications a second for one run's output (a chatty run sent thousands). */
const OUTPUT_NOTIFICATIONS_PER_SECOND = 20;
/** A run that prints nothing still tells the client it is alive this often, so request timeouts can be reset. */
export const HEARTBEAT_MS = 5000;

export type SendProgress = (progress: number, message: string) => Promise<void>;

/**
 * A run's output as MCP progress notifications: output is coalesced (the first piece goes at once, what comes
 * within the next interval goes together at its end), stderr is tagged, and a silent run sends a heartbeat
 * naming the seconds elapsed. Nothing is dropped: `finish` sends what is still pending.
 */
export class RunProgress {
  private readonly intervalMs = 1000 / OUTPUT_NOTIFICATIONS_PER_SECOND;
  private readonly startedAt = Date.now();
  private pending = '';
  private pendingStream: 'stdout' | 'stderr' | undefined;
  private count = 0;
  private lastSentAt = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private finished = false;
  /** Notifications not yet handed to the transport: the response must not overtake them (the client drops late progress). */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly send: SendProgress) {
    this.scheduleHeartbeat();
  }

  output(stream: 'stdout' | 'stderr', text: string): void {
    if (this.finished || text === '') return;
    // A tag wherever the stream changes, so stderr stays apart from stdout inside one message.
    const tag =
      stream === this.pendingStream || (stream === 'stdout' && this.pendingStream === undefined) ? '' : `[${stream}] `;
    this.pending += tag + text;
    this.pendingStream = stream;
    if (this.flushTimer) return;
    const wait = this.lastSentAt + this.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.flushTimer = setTimeout(() => this.flush(), wait).unref();
  }

  /** Sends what is pending and stops the timers; resolves when every notification has been handed over. */
  async finish(): Promise<void> {
    this.flush();
    this.finished = true;
    clearTimeout(this.heartbeatTimer);
    await Promise.all(this.inFlight);
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending === '') return;
    const message = this.pending;
    this.pending = '';
    this.pendingStream = undefined;
    this.notify(message);
  }

  private notify(message: string): void {
    this.lastSentAt = Date.now();
    const sending = this.send(++this.count, message)
      .catch(() => undefined)
      .finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
    this.scheduleHeartbeat();
  }

  private scheduleHeartbeat(): void {
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = setTimeout(() => {
      if (this.finished) return;
      this.notify(`[still running: ${Math.round((Date.now() - this.startedAt) / 1000)} s elapsed]\n`);
    }, HEARTBEAT_MS).unref();
  }
}
