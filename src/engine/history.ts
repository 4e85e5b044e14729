import { CappedOutput } from './output';
import type { Display, RunEvent, RunInfo, RunResult } from './types';

export interface RunRecord {
  run: RunInfo;
  stdout: string;
  stderr: string;
  displays: Display[];
  result?: RunResult;
}

/** What streamed so far while a run is live; its result replaces it. */
const LIVE_OUTPUT_CAP = 64 * 1024;
/** Per stream (and traceback) of a run kept across restarts: enough to recognise it, small enough to load fast. */
const SAVED_OUTPUT_CHARS = 4 * 1024;
const SAVED_CODE_CHARS = 16 * 1024;

/** A finished run as kept across restarts: outputs cut to a few KB, displays dropped. */
export interface SavedRun {
  run: RunRecord['run'];
  result: RunResult;
}

/** Where a RunHistory keeps finished runs between sessions (the stores give one backed by history.json). */
export interface HistoryPersistence {
  load(): SavedRun[];
  save(runs: SavedRun[]): void;
}

/**
 * The recent runs of every front door, newest last, bounded in count and in output kept per run. Fed by
 * engine run events; the results view and the tool explorer read it.
 */
export class RunHistory {
  private readonly records = new Map<string, RunRecord>();
  private readonly live = new Map<string, { stdout: CappedOutput; stderr: CappedOutput }>();
  private readonly listeners = new Set<(record: RunRecord) => void>();

  private saveTimer?: NodeJS.Timeout;

  /** With `persistence`, finished runs load now and are saved `saveDelayMs` after the last change. */
  constructor(
    private readonly limit = 100,
    private readonly persistence?: HistoryPersistence,
    private readonly saveDelayMs = 1000,
  ) {
    for (const saved of persistence?.load().slice(-limit) ?? []) {
      this.records.set(saved.run.runId, { run: saved.run, stdout: saved.result.stdout, stderr: saved.result.stderr, displays: [], result: saved.result });
    }
  }

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
        this.scheduleSave();
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
    this.scheduleSave();
  }

  /** Writes a pending save now (on shutdown: the debounce timer does not keep a process alive). */
  flush(): void {
    if (!this.saveTimer) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    this.persistence?.save(this.all().flatMap((record) => (record.result ? [toSaved(record.run, record.result)] : [])));
  }

  private scheduleSave(): void {
    if (!this.persistence || this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      try {
        this.flush();
      } catch {
        // The adapter reports its own failures; a history that cannot be saved still works in memory.
      }
    }, this.saveDelayMs);
    this.saveTimer.unref();
  }

  private add(event: Extract<RunEvent, { type: 'started' }>): RunRecord {
    const { runId, session, backend, code, origin, startedAt, location } = event;
    const record: RunRecord = { run: { runId, session, backend, code, origin, startedAt, ...(location ? { location } : {}) }, stdout: '', stderr: '', displays: [] };
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

function toSaved(run: RunRecord['run'], result: RunResult): SavedRun {
  const { displays: _displays, ...kept } = result;
  const stdout = cut(result.stdout, SAVED_OUTPUT_CHARS);
  const stderr = cut(result.stderr, SAVED_OUTPUT_CHARS);
  const traceback = result.diagnostics?.traceback === undefined ? undefined : cut(result.diagnostics.traceback, SAVED_OUTPUT_CHARS);
  return {
    run: { ...run, code: cut(run.code, SAVED_CODE_CHARS) },
    result: {
      ...kept,
      stdout,
      stderr,
      diagnostics: result.diagnostics && (traceback === undefined ? result.diagnostics : { ...result.diagnostics, traceback }),
      ...(stdout !== result.stdout || stderr !== result.stderr ? { truncated: true } : {}),
    },
  };
}

/**
 * Head and tail of `text` within `max` characters, saying how much was left out. The notice fits in the budget,
 * so a run loaded and saved again is not cut a second time.
 */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor((max - 80) / 2);
  return `${text.slice(0, half)}\n… [${text.length - 2 * half} characters not kept in the history] …\n${text.slice(-half)}`;
}
