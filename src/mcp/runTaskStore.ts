// The tasks of one MCP connection (the 2025-11-25 tasks utility): the SDK's in-memory task store, plus what it
// leaves to the server. A task's run stops when the task is cancelled (the SDK only marks it cancelled) or expires
// while still running (nobody could fetch its result), and when the connection ends its runs stop and its tasks go.
// One store per connection, so a client never sees another's tasks; over HTTP the SDK scopes them by session too.
import type { CallToolResult, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { approximateBytes, shrinkToolResult } from './resultBudget';

/**
 * Bytes of task results one connection keeps until they are fetched or expire: past it the oldest results lose
 * their displays (resultBudget.ts), and a result larger than it is stored without them.
 */
export const MAX_TASK_RESULT_BYTES = 64 * 1024 * 1024;
/** Per HTTP server, all its MCP sessions' task results together: two connections' worth, whatever the cap. */
export const MAX_SERVER_TASK_RESULT_BYTES = 128 * 1024 * 1024;
/** What a result is shrunk to when it gives up its displays for newer ones. */
const SHRUNK_RESULT_BYTES = 256 * 1024;
const WHY = 'task results are kept without their displays once the server holds too many';

interface TrackedRun {
  controller: AbortController;
  expiry?: NodeJS.Timeout;
}

/**
 * What the task stores of one server keep, together: past `maxBytes` the store holding the most gives up its
 * oldest results' displays first (nobody's results shrink while another's hold more).
 */
export class SharedResultBudget {
  private readonly stores = new Set<RunTaskStore>();
  private bytes = 0;

  constructor(readonly maxBytes = MAX_SERVER_TASK_RESULT_BYTES) {}

  /** `store` holds `change` bytes more (or fewer); past the budget results shrink, `keep` never. */
  async held(store: RunTaskStore, change: number, keep: string): Promise<void> {
    this.stores.add(store);
    this.bytes += change;
    const tried = new Set<RunTaskStore>();
    while (this.bytes > this.maxBytes) {
      let largest: RunTaskStore | undefined;
      for (const s of this.stores)
        if (!tried.has(s) && s.heldResultBytes > (largest?.heldResultBytes ?? -1)) largest = s;
      if (!largest) return;
      const freed = await largest.shrinkOldest(keep);
      if (freed > 0) this.bytes -= freed;
      else tried.add(largest);
    }
  }

  /** The store's connection ended: what it held is free. */
  release(store: RunTaskStore): void {
    if (this.stores.delete(store)) this.bytes -= store.heldResultBytes;
  }
}

export class RunTaskStore extends InMemoryTaskStore {
  private readonly runs = new Map<string, TrackedRun>();
  private closed = false;
  /** Stored results by task, oldest first, and their size. */
  private readonly results = new Map<string, number>();
  private resultBytes = 0;

  constructor(
    private readonly maxResultBytes = MAX_TASK_RESULT_BYTES,
    private readonly shared?: SharedResultBudget,
  ) {
    super();
  }

  /** Runs of tasks under way now. */
  get runningCount(): number {
    return this.runs.size;
  }

  /** Bytes of results held now. */
  get heldResultBytes(): number {
    return this.resultBytes;
  }

  override async storeTaskResult(
    taskId: string,
    status: 'completed' | 'failed',
    result: Result,
    sessionId?: string,
  ): Promise<void> {
    let kept = result;
    let bytes = approximateBytes(result);
    if (bytes > this.maxResultBytes && isToolResult(result)) {
      kept = shrinkToolResult(result, SHRUNK_RESULT_BYTES, WHY);
      bytes = approximateBytes(kept);
    }
    await super.storeTaskResult(taskId, status, kept, sessionId);
    const before = this.resultBytes;
    this.results.set(taskId, bytes);
    this.resultBytes += bytes;
    await this.makeRoom(taskId);
    await this.shared?.held(this, this.resultBytes - before, taskId);
  }

  /** Forgets its oldest result whose task expired, or else shrinks its oldest whole one but `keep`: the bytes freed. */
  async shrinkOldest(keep: string): Promise<number> {
    for (const [taskId, bytes] of this.results) {
      if (taskId === keep) continue;
      if (!(await super.getTask(taskId))) {
        this.forgetResult(taskId);
        return bytes;
      }
      const freed = bytes > SHRUNK_RESULT_BYTES ? await this.shrink(taskId, bytes) : 0;
      if (freed > 0) return freed;
    }
    return 0;
  }

  /** Forgets results whose tasks expired, then shrinks the oldest until the results fit the budget. */
  private async makeRoom(newest: string): Promise<void> {
    for (const taskId of [...this.results.keys()]) {
      if (!(await super.getTask(taskId))) this.forgetResult(taskId);
    }
    for (const [taskId, bytes] of this.results) {
      if (this.resultBytes <= this.maxResultBytes) return;
      if (taskId === newest || bytes <= SHRUNK_RESULT_BYTES) continue;
      await this.shrink(taskId, bytes);
    }
  }

  /** The stored result of `taskId` without its displays: the bytes freed (0 if it is not a tool result). */
  private async shrink(taskId: string, bytes: number): Promise<number> {
    const stored = await super.getTaskResult(taskId).catch(() => undefined);
    if (!stored || !isToolResult(stored)) return 0;
    // Replaced in place: the store hands out this very object for tasks/result.
    const shrunk = shrinkToolResult(stored, SHRUNK_RESULT_BYTES, WHY);
    Object.assign(stored, { content: shrunk.content, structuredContent: shrunk.structuredContent });
    const now = approximateBytes(stored);
    this.resultBytes += now - bytes;
    this.results.set(taskId, now);
    return bytes - now;
  }

  private forgetResult(taskId: string): void {
    this.resultBytes -= this.results.get(taskId) ?? 0;
    this.results.delete(taskId);
  }

  /** The run of `task` starts: the signal it is given aborts on tasks/cancel, at the task's expiry, or on close. */
  track(task: Task): AbortSignal {
    const controller = new AbortController();
    if (this.closed) controller.abort('the MCP connection ended');
    const run: TrackedRun = { controller };
    if (task.ttl) {
      // The SDK drops an expired task whatever its status; a run nobody can collect should not go on.
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

  override async updateTaskStatus(
    taskId: string,
    status: Task['status'],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    // tasks/cancel comes here (the SDK's handler sets the status and nothing else): the run is interrupted.
    if (status === 'cancelled') this.runs.get(taskId)?.controller.abort(statusMessage ?? 'the task was cancelled');
  }

  /** The connection ended: every run still under way stops, and the tasks and their timers are dropped. */
  close(): void {
    this.closed = true;
    for (const [taskId, run] of this.runs) {
      run.controller.abort('the MCP connection ended');
      this.untrack(taskId);
    }
    this.cleanup();
    this.shared?.release(this);
    this.results.clear();
    this.resultBytes = 0;
  }
}

function isToolResult(result: Result): result is CallToolResult {
  return Array.isArray((result as { content?: unknown }).content);
}
