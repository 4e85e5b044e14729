// The tasks of one MCP connection (the 2025-11-25 tasks utility): the SDK's in-memory task store, plus what it
// leaves to the server. A task's run stops when the task is cancelled (the SDK only marks it cancelled) or expires
// while still running (nobody could fetch its result), and when the connection ends its runs stop and its tasks go.
// One store per connection, so a client never sees another's tasks; over HTTP the SDK scopes them by session too.
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';

interface TrackedRun {
  controller: AbortController;
  expiry?: NodeJS.Timeout;
}

export class RunTaskStore extends InMemoryTaskStore {
  private readonly runs = new Map<string, TrackedRun>();
  private closed = false;

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

  override async updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string, sessionId?: string): Promise<void> {
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
  }
}
