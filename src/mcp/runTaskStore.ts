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
/** What a result is shrunk to when it gives up its displays for newer ones. */
const SHRUNK_RESULT_BYTES = 256 * 1024;
const WHY = 'task results are kept without their displays once the server holds too many';

interface TrackedRun {
  controller: AbortController;
  expiry?: NodeJS.Timeout;
}

export class RunTaskStore extends InMemoryTaskStore {
  private readonly runs = new Map<string, TrackedRun>();
  private closed = false;
  /** Stored results by task, oldest first, and their size. */
  private readonly results = new Map<string, number>();
  private resultBytes = 0;

  constructor(private readonly maxResultBytes = MAX_TASK_RESULT_BYTES) {
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
    this.results.set(taskId, bytes);
    this.resultBytes += bytes;
    await this.makeRoom(taskId);
  }

  /** Forgets results whose tasks expired, then shrinks the oldest until the results fit the budget. */
  private async makeRoom(newest: string): Promise<void> {
    for (const taskId of [...this.results.keys()]) {
      if (!(await super.getTask(taskId))) this.forgetResult(taskId);
    }
    for (const [taskId, bytes] of this.results) {
      if (this.resultBytes <= this.maxResultBytes) return;
      if (taskId === newest || bytes <= SHRUNK_RESULT_BYTES) continue;
      const stored = await super.getTaskResult(taskId).catch(() => undefined);
      if (!stored || !isToolResult(stored)) continue;
      // Replaced in place: the store hands out this very object for tasks/result.
      const shrunk = shrinkToolResult(stored, SHRUNK_RESULT_BYTES, WHY);
      Object.assign(stored, { content: shrunk.content, structuredContent: shrunk.structuredContent });
      const now = approximateBytes(stored);
      this.resultBytes += now - bytes;
      this.results.set(taskId, now);
    }
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
    this.results.clear();
    this.resultBytes = 0;
  }
}

function isToolResult(result: Result): result is CallToolResult {
  return Array.isArray((result as { content?: unknown }).content);
}
