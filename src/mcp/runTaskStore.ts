// The tasks of one MCP connection (the 2025-11-25 tasks utility): each task's status, its result once its run
// ends, and its run. A task's run stops when the task is cancelled or expires while still running (nobody could
// fetch its result), and when the connection ends its runs stop and its tasks go. One store per connection, so a
// client never sees another's tasks.
import type { CallToolResult, Task } from '@modelcontextprotocol/server';
import { randomBytes } from 'node:crypto';
import { KeptResults, MAX_TASK_RESULT_BYTES, type SharedResultBudget } from './keptResults';

interface TrackedRun {
  controller: AbortController;
  expiry?: NodeJS.Timeout;
}

interface StoredTask {
  task: Task;
  /** Drops the task at the end of its ttl, counted from its creation and again from its end. */
  expiry?: NodeJS.Timeout;
  /** Callers of `resultOf` waiting for the task to end. */
  waiting: (() => void)[];
}

/** A task's problem the client caused (an unknown id, a task that cannot be cancelled): JSON-RPC -32602. */
export class TaskRequestError extends Error {}

/** The statuses a task never leaves (both revisions' tasks have the same). */
export const TERMINAL: ReadonlySet<Task['status']> = new Set(['completed', 'failed', 'cancelled']);
/** tasks/list answers this many tasks a page. */
const PAGE_SIZE = 10;

export class RunTaskStore {
  private readonly tasks = new Map<string, StoredTask>();
  private readonly runs = new Map<string, TrackedRun>();
  private closed = false;
  private readonly results: KeptResults;

  /** Results past `maxResultBytes` (all of this store's), or past `shared`'s budget, lose their displays. */
  constructor(maxResultBytes = MAX_TASK_RESULT_BYTES, shared?: SharedResultBudget) {
    this.results = new KeptResults(maxResultBytes, shared);
  }

  /** Runs of tasks under way now. */
  get runningCount(): number {
    return this.runs.size;
  }

  /** Bytes of results held now. */
  get heldResultBytes(): number {
    return this.results.heldBytes;
  }

  createTask(params: { ttl: number; pollInterval: number }): Task {
    const createdAt = new Date().toISOString();
    const task: Task = {
      taskId: randomBytes(16).toString('hex'),
      status: 'working',
      ttl: params.ttl,
      createdAt,
      lastUpdatedAt: createdAt,
      pollInterval: params.pollInterval,
    };
    const stored: StoredTask = { task, waiting: [] };
    this.tasks.set(task.taskId, stored);
    this.expireLater(stored);
    return { ...task };
  }

  /** The task as it stands now; an unknown (or expired) one is the client's error. */
  getTask(taskId: string): Task {
    return { ...this.known(taskId).task };
  }

  /** The task's result once it ends (waiting until then, or until `signal` aborts). */
  async resultOf(taskId: string, signal: AbortSignal): Promise<{ task: Task; result?: CallToolResult }> {
    for (;;) {
      const stored = this.known(taskId);
      if (TERMINAL.has(stored.task.status)) return { task: { ...stored.task }, result: this.results.get(taskId) };
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal.removeEventListener('abort', abort);
          resolve();
        };
        const abort = () =>
          reject(signal.reason instanceof Error ? signal.reason : new Error('the request was cancelled'));
        if (signal.aborted) return abort();
        signal.addEventListener('abort', abort, { once: true });
        stored.waiting.push(wake);
      });
    }
  }

  /** A page of the tasks: `cursor` is the last task id of the page before. */
  listTasks(cursor: string | undefined): { tasks: Task[]; nextCursor?: string } {
    const ids = [...this.tasks.keys()];
    let start = 0;
    if (cursor !== undefined) {
      const at = ids.indexOf(cursor);
      if (at < 0) throw new TaskRequestError(`Invalid cursor: ${cursor}`);
      start = at + 1;
    }
    const page = ids.slice(start, start + PAGE_SIZE);
    const nextCursor = start + PAGE_SIZE < ids.length ? page[page.length - 1] : undefined;
    return { tasks: page.map((id) => ({ ...this.tasks.get(id)!.task })), ...(nextCursor ? { nextCursor } : {}) };
  }

  /** tasks/cancel: the task says cancelled and its run is interrupted. */
  cancel(taskId: string): Task {
    const stored = this.known(taskId);
    if (TERMINAL.has(stored.task.status))
      throw new TaskRequestError(`Cannot cancel task in terminal status: ${stored.task.status}`);
    this.updateTaskStatus(taskId, 'cancelled', 'Client cancelled task execution.');
    return { ...stored.task };
  }

  /** A status the run reports (`input_required` while a person is asked); a task that ended keeps its status. */
  updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string): void {
    const stored = this.tasks.get(taskId);
    if (!stored || TERMINAL.has(stored.task.status)) return;
    stored.task.status = status;
    if (statusMessage) stored.task.statusMessage = statusMessage;
    stored.task.lastUpdatedAt = new Date().toISOString();
    if (status === 'cancelled') this.runs.get(taskId)?.controller.abort(statusMessage ?? 'the task was cancelled');
    if (TERMINAL.has(status)) this.ended(stored);
  }

  storeTaskResult(taskId: string, status: 'completed' | 'failed', result: CallToolResult): void {
    const stored = this.tasks.get(taskId);
    if (!stored || TERMINAL.has(stored.task.status)) return;
    this.results.keep(taskId, result);
    stored.task.status = status;
    stored.task.lastUpdatedAt = new Date().toISOString();
    this.ended(stored);
  }

  /** The run of `task` starts: the signal it is given aborts on tasks/cancel, at the task's expiry, or on close. */
  track(task: Task): AbortSignal {
    const controller = new AbortController();
    if (this.closed) controller.abort('the MCP connection ended');
    const run: TrackedRun = { controller };
    if (task.ttl) {
      // An expired task is dropped whatever its status; a run nobody can collect should not go on.
      run.expiry = setTimeout(() => controller.abort('the task expired'), task.ttl);
      run.expiry.unref();
    }
    this.runs.set(task.taskId, run);
    return controller.signal;
  }

  /** The run of a task is over (its result stored or not). */
  untrack(taskId: string): void {
    clearTimeout(this.runs.get(taskId)?.expiry);
    this.runs.delete(taskId);
  }

  /** The connection ended: every run still under way stops, and the tasks and their timers are dropped. */
  close(): void {
    this.closed = true;
    for (const [taskId, run] of this.runs) {
      run.controller.abort('the MCP connection ended');
      this.untrack(taskId);
    }
    for (const stored of this.tasks.values()) clearTimeout(stored.expiry);
    this.tasks.clear();
    this.results.clear();
  }

  private known(taskId: string): StoredTask {
    const stored = this.tasks.get(taskId);
    if (!stored) throw new TaskRequestError(`Task not found: ${taskId}`);
    return stored;
  }

  /** A task that ended wakes whoever waits for its result, and is kept for its ttl from now. */
  private ended(stored: StoredTask): void {
    this.expireLater(stored);
    for (const wake of stored.waiting.splice(0)) wake();
  }

  private expireLater(stored: StoredTask): void {
    clearTimeout(stored.expiry);
    if (!stored.task.ttl) return;
    stored.expiry = setTimeout(() => {
      this.tasks.delete(stored.task.taskId);
      this.results.forget(stored.task.taskId);
      for (const wake of stored.waiting.splice(0)) wake();
    }, stored.task.ttl);
    stored.expiry.unref();
  }
}
