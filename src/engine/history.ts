import { CappedOutput } from './output';
import { headAndTail } from './runLimits';
import type { Display, DroppedDisplays, OutputItem, RunEvent, RunInfo, RunResult } from './types';

export type { DroppedDisplays } from './types';

/** One run as the history keeps it: the start info, the output so far, and the result once it finished. */
export interface RunRecord {
  run: RunInfo;
  stdout: string;
  stderr: string;
  /** What the run displayed, as far as the history keeps it (`result.displays` is not kept: these are the same). */
  displays: Display[];
  result?: RunResult;
  /** Set once some of the run's displays are no longer kept. */
  displaysDropped?: DroppedDisplays;
}

/** What streamed so far while a run is live; its result replaces it. */
const LIVE_OUTPUT_CAP = 64 * 1024;
/** Per stream (and traceback) of a run kept across restarts: enough to recognise it, small enough to load fast. */
const SAVED_OUTPUT_CHARS = 4 * 1024;
const SAVED_CODE_CHARS = 16 * 1024;
/** Runs kept, whatever their size. */
export const DEFAULT_HISTORY_RUNS = 100;
/**
 * Bytes (UTF-8) of runs kept in memory in all: code, output, tracebacks and displays. Past it the displays of the
 * oldest runs go first, then their output is cut to what is kept across restarts, then the oldest runs go.
 */
export const DEFAULT_HISTORY_BYTES = 64 * 1024 * 1024;

const MIB = 1024 * 1024;
const NOT_KEPT_ACROSS_RESTARTS = 'displays are not kept across restarts';

/** A finished run as kept across restarts: outputs cut to a few KB, displays dropped. */
export interface SavedRun {
  run: RunRecord['run'];
  result: RunResult;
  /** How many displays the run had (none of them is saved). */
  displays?: number;
}

/** Where a RunHistory keeps finished runs between sessions (the stores give one backed by history.json). */
export interface HistoryPersistence {
  load(): SavedRun[];
  save(runs: SavedRun[]): void;
}

/** What one record holds, in bytes; kept beside it, never sent with it. */
interface Size {
  code: number;
  /** Output, error message and traceback. */
  text: number;
  displays: number;
  /** Output already cut to its saved size: cutting again frees nothing. */
  compact: boolean;
}

/**
 * The recent runs of every front door, newest last, bounded in count and in bytes, so a long session's memory
 * stays flat however much its runs display. Fed by engine run events; the results view and the tool explorer
 * read it.
 */
export class RunHistory {
  private readonly records = new Map<string, RunRecord>();
  private readonly sizes = new Map<string, Size>();
  private readonly live = new Map<string, { stdout: CappedOutput; stderr: CappedOutput }>();
  private readonly listeners = new Set<(record: RunRecord) => void>();
  private bytes = 0;

  private saveTimer?: NodeJS.Timeout;

  /** With `persistence`, finished runs load now and are saved `saveDelayMs` after the last change. */
  constructor(
    private readonly limit = DEFAULT_HISTORY_RUNS,
    private readonly persistence?: HistoryPersistence,
    private readonly saveDelayMs = 1000,
    private readonly maxBytes = DEFAULT_HISTORY_BYTES,
  ) {
    for (const saved of persistence?.load().slice(-limit) ?? []) {
      const count = typeof saved.displays === 'number' && saved.displays > 0 ? Math.floor(saved.displays) : 0;
      const record: RunRecord = {
        run: saved.run,
        stdout: saved.result.stdout,
        stderr: saved.result.stderr,
        displays: [],
        result: saved.result,
      };
      if (count > 0) record.displaysDropped = { count, reason: NOT_KEPT_ACROSS_RESTARTS };
      this.records.set(saved.run.runId, record);
      this.sizes.set(saved.run.runId, { code: 0, text: 0, displays: 0, compact: true });
      this.resize(saved.run.runId);
    }
    this.makeRoom();
  }

  /** Bytes the history holds now (at most its budget, but for a single run larger than it). */
  get retainedBytes(): number {
    return this.bytes;
  }

  handle(event: RunEvent): void {
    const record =
      event.type === 'started' || event.type === 'queued' ? this.add(event) : this.records.get(event.runId);
    if (!record) return;
    const live = this.live.get(event.runId);
    switch (event.type) {
      case 'stdout':
      case 'stderr':
        if (live) {
          live[event.type].append(event.text);
          record[event.type] = live[event.type].text();
          this.resize(event.runId);
          this.makeRoom(event.runId);
        }
        break;
      case 'display':
        this.keepDisplay(record, event.display);
        break;
      case 'finished': {
        // Not the result object itself: it is the caller's, and its displays are the ones kept above.
        const { displays: _displays, ...result } = event.result;
        record.result = result;
        record.stdout = result.stdout;
        record.stderr = result.stderr;
        this.live.delete(event.runId);
        this.resize(event.runId);
        this.makeRoom(event.runId);
        this.scheduleSave();
        break;
      }
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
    this.sizes.clear();
    this.live.clear();
    this.bytes = 0;
    this.scheduleSave();
  }

  /** Writes a pending save now (on shutdown: the debounce timer does not keep a process alive). */
  flush(): void {
    if (!this.saveTimer) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    this.persistence?.save(this.all().flatMap((record) => (record.result ? [toSaved(record)] : [])));
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

  private add(event: Extract<RunEvent, { type: 'started' | 'queued' }>): RunRecord {
    const { runId, session, backend, code, origin, startedAt, location, tool } = event;
    // A queued run's record is replaced by its start: it keeps what it waited for only while it waits.
    const waitingFor = event.type === 'queued' ? { waitingFor: event.waitingFor } : {};
    const record: RunRecord = {
      run: {
        runId,
        session,
        backend,
        code,
        origin,
        startedAt,
        ...(location ? { location } : {}),
        ...(tool ? { tool } : {}),
        ...waitingFor,
      },
      stdout: '',
      stderr: '',
      displays: [],
    };
    if (this.records.has(runId)) this.forget(runId);
    this.records.set(runId, record);
    this.sizes.set(runId, { code: 0, text: 0, displays: 0, compact: false });
    this.resize(runId);
    this.live.set(runId, { stdout: new CappedOutput(LIVE_OUTPUT_CAP), stderr: new CappedOutput(LIVE_OUTPUT_CAP) });
    while (this.records.size > this.limit) this.forget(this.records.keys().next().value as string);
    this.makeRoom(runId);
    return record;
  }

  /** Keeps a display of a live run if room can be made for it (older runs give theirs up first); else counts it. */
  private keepDisplay(record: RunRecord, display: Display): void {
    const runId = record.run.runId;
    const size = displayBytes(display);
    this.makeRoom(runId, size);
    if (this.bytes + size > this.maxBytes) {
      this.noteDropped(record, 1, size);
      return;
    }
    record.displays.push(display);
    this.sizes.get(runId)!.displays += size;
    this.bytes += size;
  }

  /**
   * Frees memory until the history is within its budget with `need` bytes to spare (for a display), never touching
   * `keep` (the run being recorded): the oldest runs' displays go first; for text, then their output is cut, then
   * they go.
   */
  private makeRoom(keep?: string, need = 0): void {
    const over = () => this.bytes + need > this.maxBytes;
    if (!over()) return;
    for (const [runId, record] of this.records) {
      if (!over()) return;
      if (runId !== keep && record.displays.length > 0) this.dropDisplays(record);
    }
    // Room for a display is made of other displays only: no run's output or entry goes to keep one more figure.
    if (need > 0) return;
    for (const [runId, record] of this.records) {
      if (!over()) return;
      if (runId !== keep && record.result && !this.sizes.get(runId)!.compact) this.compact(record);
    }
    for (const runId of [...this.records.keys()]) {
      if (!over()) return;
      if (runId !== keep) this.forget(runId);
    }
  }

  private dropDisplays(record: RunRecord): void {
    const size = this.sizes.get(record.run.runId)!;
    this.noteDropped(record, record.displays.length, size.displays);
    record.displays = [];
    this.bytes -= size.displays;
    size.displays = 0;
  }

  private noteDropped(record: RunRecord, count: number, bytes: number): void {
    const before = record.displaysDropped;
    record.displaysDropped = {
      count: (before?.count ?? 0) + count,
      bytes: (before?.bytes ?? 0) + bytes,
      reason: `the history keeps the displays of recent runs only (${Math.round(this.maxBytes / MIB)} MB in all)`,
    };
  }

  /** Cuts a finished run's output and traceback to what is kept across restarts. */
  private compact(record: RunRecord): void {
    // The code stays whole: Re-run runs it.
    const saved = toSaved(record).result;
    record.result = saved;
    record.stdout = saved.stdout;
    record.stderr = saved.stderr;
    this.sizes.get(record.run.runId)!.compact = true;
    this.resize(record.run.runId);
  }

  private forget(runId: string): void {
    const size = this.sizes.get(runId);
    if (size) this.bytes -= size.code + size.text + size.displays;
    this.records.delete(runId);
    this.sizes.delete(runId);
    this.live.delete(runId);
  }

  /** Counts a record's text again after it changed. */
  private resize(runId: string): void {
    const record = this.records.get(runId);
    const size = this.sizes.get(runId);
    if (!record || !size) return;
    if (size.code === 0 && record.run.code) {
      size.code = utf8(record.run.code);
      this.bytes += size.code;
    }
    const diagnostics = record.result?.diagnostics;
    const ordered =
      record.result?.outputs?.reduce((sum, item) => sum + (item.type === 'display' ? 8 : utf8(item.text)), 0) ?? 0;
    const text =
      ordered +
      utf8(record.stdout) +
      utf8(record.stderr) +
      utf8(diagnostics?.message) +
      utf8(diagnostics?.traceback) +
      utf8(record.result?.reset_reason);
    this.bytes += text - size.text;
    size.text = text;
  }
}

function utf8(text: string | undefined): number {
  return text ? Buffer.byteLength(text) : 0;
}

function displayBytes(display: Display): number {
  return utf8(display.data) + utf8(display.mime) + utf8(display.title);
}

function toSaved(record: RunRecord): SavedRun {
  const { run, result: full } = record;
  const { displays: _displays, outputs, ...kept } = full!;
  const stdout = headAndTailKept(full!.stdout, SAVED_OUTPUT_CHARS);
  const stderr = headAndTailKept(full!.stderr, SAVED_OUTPUT_CHARS);
  // The order is kept while the text is whole; a cut run shows its streams apart, as before `outputs` existed.
  const whole = stdout === full!.stdout && stderr === full!.stderr;
  const traceback =
    full!.diagnostics?.traceback === undefined
      ? undefined
      : headAndTailKept(full!.diagnostics.traceback, SAVED_OUTPUT_CHARS);
  const displays = record.displays.length + (record.displaysDropped?.count ?? 0);
  return {
    run: { ...run, code: headAndTailKept(run.code, SAVED_CODE_CHARS) },
    result: {
      ...kept,
      stdout,
      stderr,
      diagnostics:
        full!.diagnostics && (traceback === undefined ? full!.diagnostics : { ...full!.diagnostics, traceback }),
      ...(whole ? {} : { truncated: true }),
      ...(whole && outputs ? { outputs: outputs.map(savedItem) } : {}),
    },
    ...(displays > 0 ? { displays } : {}),
  };
}

/** An item as saved: the value of a last expression cut as the streams are (its rich form, a display, is not kept). */
function savedItem(item: OutputItem): OutputItem {
  if (item.type !== 'execute_result') return item;
  return { type: 'execute_result', text: headAndTailKept(item.text, SAVED_OUTPUT_CHARS) };
}

/** The notice fits in the budget, so a run loaded and saved again is not cut a second time. */
function headAndTailKept(text: string, max: number): string {
  return headAndTail(text, max, 'not kept in the history');
}
