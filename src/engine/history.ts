import { CappedOutput } from './output';
import type { BackendKind, Display, RunEvent, RunOrigin, RunResult } from './types';

export interface RunRecord {
  run: { runId: string; session: string; backend: BackendKind; code: string; origin: RunOrigin; startedAt: number };
  stdout: string;
  stderr: string;
  displays: Display[];
  result?: RunResult;
}

/** What streamed so far while a run is live; its result replaces it. */
const LIVE_OUTPUT_CAP = 64 * 1024;

/**
 * The recent runs of every front door, newest last, bounded in count and in output kept per run. Fed by
 * engine run events; the results view and the tool explorer read it.
 */
export class RunHistory {
  private readonly records = new Map<string, RunRecord>();
  private readonly live = new Map<string, { stdout: CappedOutput; stderr: CappedOutput }>();
  private readonly listeners = new Set<(record: RunRecord) => void>();

  constructor(private readonly limit = 100) {}

  handle(event: RunEvent): void {
    const record = event.type === 'started' ? this.add(event) : this.records.get(event.runId);
    if (!record) return;
    const live = this.live.get(event.runId);
    switch (event.type) {
      case 'stdout':
      case 'stderr':
        if (live) {
          live[event.type].append(event.text);
          record[event.type] = live[event.type].text();
        }
        break;
      case 'display':
        record.displays.push(event.display);
        break;
      case 'finished':
        record.result = event.result;
        record.stdout = event.result.stdout;
        record.stderr = event.result.stderr;
        this.live.delete(event.runId);
        break;
    }
    for (const listener of this.listeners) listener(record);
  }

  onChange(listener: (record: RunRecord) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  get(runId: string): RunRecord | undefined {
    return this.records.get(runId);
  }

  /** Oldest first. */
  all(): RunRecord[] {
    return [...this.records.values()];
  }

  clear(): void {
    this.records.clear();
    this.live.clear();
  }

  private add(event: Extract<RunEvent, { type: 'started' }>): RunRecord {
    const { runId, session, backend, code, origin, startedAt } = event;
    const record: RunRecord = { run: { runId, session, backend, code, origin, startedAt }, stdout: '', stderr: '', displays: [] };
    this.records.set(runId, record);
    this.live.set(runId, { stdout: new CappedOutput(LIVE_OUTPUT_CAP), stderr: new CappedOutput(LIVE_OUTPUT_CAP) });
    while (this.records.size > this.limit) {
      const oldest = this.records.keys().next().value as string;
      this.records.delete(oldest);
      this.live.delete(oldest);
    }
    return record;
  }
}
