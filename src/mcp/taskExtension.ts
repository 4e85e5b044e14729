// Long runs for 2026-07-28 clients through the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663). A call
// from a client that declared the extension on its request is answered with its result when the run ends within
// a short grace, and otherwise with a task (`resultType: "task"`) while the run goes on with no request open: the
// client polls tasks/get (the status; the result or the JSON-RPC error inline once it ends), answers the run's
// questions (input(), approvals) with tasks/update while the task is `input_required`, and stops the run with
// tasks/cancel. Over HTTP every 2026 request gets a server of its own, so the tasks live here, in one TaskExtension
// per HTTP server (per stdio connection) that those servers share. The 2025-11-25 tasks utility (runTaskStore.ts,
// taskMethods.ts) is a different wire and stays as it is: both answer tasks/get and tasks/cancel, picked by the
// request's revision.
import {
  inputRequired,
  inputResponse,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { randomBytes } from 'node:crypto';
import { errorText } from '../engine/index';
import { ANSWER_WAIT_MS } from './elicitation';
import { KeptResults, MAX_SERVER_TASK_RESULT_BYTES } from './keptResults';
import { TERMINAL } from './runTaskStore';
import { PendingQuestions } from './pendingQuestions';
import { requestCapabilities } from './requestEnvelope';
import { plainChannel, reportsOnRequest, runChannel } from './runChannel';
import type { RunChannel } from './shared';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** How long a call waits for its run before answering with a task: most runs end sooner and need no polling. */
export const DEFAULT_GRACE_MS = 2000;
/** How often a client should ask tasks/get; runs take seconds to an hour. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;
/** How long an ended task and its result are kept (counted from its end; `ttlMs` says it counted from creation). */
export const DEFAULT_KEEP_MS = 60 * 60_000;
/** A status message drawn from a run's output is at most this long. */
const STATUS_MESSAGE_CHARS = 200;

export type ExtensionTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The extension's Task. */
export interface ExtensionTask {
  taskId: string;
  status: ExtensionTaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** From creation; null (unlimited) while the run goes on, then its end plus the time the result is kept. */
  ttlMs: number | null;
  pollIntervalMs: number;
}

/** A JSON-RPC error as a failed task carries it. */
export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

/** What tasks/get answers: the task, with its questions, result or error inline as its status says. */
export interface DetailedTask extends ExtensionTask {
  inputRequests?: Record<string, { method: string; params?: unknown }>;
  result?: CallToolResult;
  error?: TaskError;
}

/** What a tools/call answers when it made a task. */
export interface CreateTaskResult extends ExtensionTask {
  resultType: 'task';
}

export interface TaskExtensionOptions {
  /** Default DEFAULT_GRACE_MS; 0: every call from a declaring client is a task at once. */
  graceMs?: number;
  pollIntervalMs?: number;
  keepMs?: number;
  answerWaitMs?: number;
  /** Bytes of results kept, all tasks together; past it the oldest lose their displays. Default 128 MB. */
  maxResultBytes?: number;
}

/** One call's run, from the call on; a task once the call was answered with it (`published`). */
interface Entry {
  task: ExtensionTask;
  published: boolean;
  settled: boolean;
  running: Promise<CallToolResult>;
  stop: AbortController;
  /** The call while it waits for the run: progress and log messages go with it; none after. */
  call?: ServerContext;
  /** Outstanding questions; the inputRequests key of each is its number's (questionKey). */
  questions: PendingQuestions;
  error?: TaskError;
  /** Wakes the call waiting within the grace (the run ended, or asked). */
  wake?: () => void;
  expiry?: NodeJS.Timeout;
}

export class TaskExtension {
  private readonly tasks = new Map<string, Entry>();
  private readonly live = new Set<Entry>();
  /** The results of ended tasks, all of them within one budget. */
  private readonly results: KeptResults;
  private closed = false;
  private readonly graceMs: number;
  private readonly pollIntervalMs: number;
  private readonly keepMs: number;
  private readonly answerWaitMs: number;

  constructor(options: TaskExtensionOptions = {}) {
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.keepMs = options.keepMs ?? DEFAULT_KEEP_MS;
    // A question waits for its tasks/update as long as 2025's elicitation waits; then it is withdrawn (input() fails).
    this.answerWaitMs = options.answerWaitMs ?? ANSWER_WAIT_MS;
    this.results = new KeptResults(options.maxResultBytes ?? MAX_SERVER_TASK_RESULT_BYTES);
  }

  /** Runs under way (tasks or calls still within their grace). */
  get runningCount(): number {
    return this.live.size;
  }

  /** Tasks kept now (running or ended). */
  get size(): number {
    return this.tasks.size;
  }

  /** Bytes of results held now. */
  get heldResultBytes(): number {
    return this.results.heldBytes;
  }

  /**
   * Serves one tools/call of a client that declared the extension: `work` runs on a channel of its own; its result
   * (or what it throws) if it ends within the grace, else the task, made before this answers so tasks/get finds it.
   * A question within the grace makes the task at once, `input_required` (no multi-round-trip exchange first).
   */
  async serve(
    server: Server,
    ctx: ServerContext,
    work: (channel: RunChannel) => Promise<CallToolResult>,
  ): Promise<CallToolResult | CreateTaskResult> {
    if (this.closed) return work(plainChannel(server, ctx));
    const entry = this.start(server, ctx, work);
    const cancelled = () => this.stopRun(entry, 'the client cancelled the call');
    ctx.mcpReq.signal.addEventListener('abort', cancelled, { once: true });
    let graceOver = this.graceMs <= 0;
    const grace = setTimeout(() => {
      graceOver = true;
      entry.wake?.();
    }, this.graceMs);
    try {
      while (!entry.settled && entry.questions.size === 0 && !graceOver && !this.closed)
        await new Promise<void>((resolve) => (entry.wake = resolve));
      if (entry.settled || this.closed) return await entry.running;
      return this.publish(entry);
    } finally {
      clearTimeout(grace);
      entry.wake = undefined;
      // The SDK aborts the request's signal once it has answered: that must not stop the task.
      ctx.mcpReq.signal.removeEventListener('abort', cancelled);
      entry.call = undefined;
    }
  }

  /** tasks/get: the task as it is now. */
  get(taskId: string, ctx: ServerContext): DetailedTask {
    requireDeclared(ctx);
    return this.detailed(this.known(taskId, 'Failed to retrieve task'));
  }

  /** tasks/update: answers to outstanding questions go to the run; anything else is ignored, as the spec asks. */
  update(taskId: string, ctx: ServerContext): Record<string, never> {
    requireDeclared(ctx);
    const entry = this.known(taskId, 'Failed to update task');
    for (const [number] of entry.questions.outstanding())
      entry.questions.answer(number, inputResponse(ctx.mcpReq.inputResponses, questionKey(number)));
    return {};
  }

  /** tasks/cancel: the task says cancelled and its run is stopped; a task that ended stays as it is. */
  cancel(taskId: string, ctx: ServerContext): Record<string, never> {
    requireDeclared(ctx);
    const entry = this.known(taskId, 'Failed to cancel task');
    if (TERMINAL.has(entry.task.status)) return {};
    this.setStatus(entry, 'cancelled', 'The client cancelled the task.');
    this.stopRun(entry, 'the client cancelled the task');
    this.ended(entry);
    return {};
  }

  /** The server (HTTP) or connection (stdio) ends: every run stops, every task goes. */
  close(): void {
    this.closed = true;
    for (const entry of [...this.live]) {
      entry.wake?.();
      this.stopRun(entry, 'the MCP server closed');
    }
    for (const entry of this.tasks.values()) clearTimeout(entry.expiry);
    this.tasks.clear();
    this.results.clear();
  }

  private start(server: Server, ctx: ServerContext, work: (channel: RunChannel) => Promise<CallToolResult>): Entry {
    const now = new Date().toISOString();
    const entry = {
      task: {
        taskId: randomBytes(16).toString('hex'),
        status: 'working',
        createdAt: now,
        lastUpdatedAt: now,
        ttlMs: null,
        pollIntervalMs: this.pollIntervalMs,
      },
      published: false,
      settled: false,
      stop: new AbortController(),
      call: ctx,
    } as Omit<Entry, 'running' | 'questions'> as Entry;
    entry.questions = new PendingQuestions({
      asked: () => {
        this.setStatus(entry, 'input_required', 'The run waits for an answer (inputRequests).');
        entry.wake?.();
      },
      settled: () => {
        if (entry.task.status === 'input_required') this.setStatus(entry, 'working');
      },
    });
    const onCall = reportsOnRequest(() => entry.call);
    const channel = runChannel(server, ctx, {
      signal: entry.stop.signal,
      // Stopped (cancelled, or the server closed): nobody will read its result; the session's next run hears of it.
      nobodyWaits: () => entry.stop.signal.aborted,
      reports: {
        notify: async (notification) => {
          if (entry.call) return onCall.notify(notification);
          // The extension carries no progress on tasks: the run's latest output line is the task's status message.
          if (notification.method === 'notifications/progress') this.progressed(entry, notification.params.message);
        },
        log: onCall.log,
      },
      ask: (form, options) => this.ask(entry, form, options),
    });
    this.live.add(entry);
    entry.running = work(channel);
    entry.running.then(
      (result) => this.finished(entry, { result }),
      (error: unknown) => this.finished(entry, { error }),
    );
    return entry;
  }

  private publish(entry: Entry): CreateTaskResult {
    entry.published = true;
    this.tasks.set(entry.task.taskId, entry);
    return { resultType: 'task', ...entry.task };
  }

  private detailed(entry: Entry): DetailedTask {
    const task: DetailedTask = { ...entry.task };
    if (task.status === 'input_required') {
      task.inputRequests = Object.fromEntries(
        entry.questions.outstanding().map(([number, form]) => [questionKey(number), inputRequired.elicit(form)]),
      );
    }
    const result = this.results.get(task.taskId);
    if (task.status === 'completed' && result) task.result = result;
    if (task.status === 'failed' && entry.error) task.error = entry.error;
    return task;
  }

  private known(taskId: string, what: string): Entry {
    const entry = this.tasks.get(taskId);
    if (!entry) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${what}: Task not found`);
    return entry;
  }

  /** A question of the run: outstanding until tasks/update answers it, the run stops, or the wait is over. */
  private ask(
    entry: Entry,
    form: ElicitRequestFormParams,
    options: { signal: AbortSignal; timeout: number },
  ): Promise<ElicitResult> {
    if (options.signal.aborted || entry.stop.signal.aborted)
      return Promise.reject(new Error('the question was withdrawn: the run was stopped'));
    const waitMs = Math.min(options.timeout, this.answerWaitMs);
    return entry.questions.ask(form, {
      signal: options.signal,
      wait: { ms: waitMs, why: `no answer came within ${Math.round(waitMs / 1000)} s (tasks/update)` },
    });
  }

  private progressed(entry: Entry, message: string | undefined): void {
    if (entry.task.status !== 'working' || !message) return;
    const line = message
      .split('\n')
      .map((text) => text.trim())
      .filter(Boolean)
      .at(-1);
    if (line) this.setStatus(entry, 'working', line.slice(0, STATUS_MESSAGE_CHARS));
  }

  /** The run ended: within the grace the call answers with it; a task stores it, unless it was cancelled. */
  private finished(entry: Entry, outcome: { result?: CallToolResult; error?: unknown }): void {
    entry.settled = true;
    this.live.delete(entry);
    entry.questions.withdrawAll('the run ended');
    entry.wake?.();
    if (!entry.published || TERMINAL.has(entry.task.status) || this.closed) return;
    const { error } = outcome;
    if (error instanceof ProtocolError) {
      // A JSON-RPC error is what `failed` is for; a tool's error result is `completed`, as the spec says.
      entry.error = {
        code: error.code,
        message: error.message,
        ...(error.data === undefined ? {} : { data: error.data }),
      };
      this.setStatus(entry, 'failed', `The call failed: ${error.message}`);
    } else {
      // As a tool that throws is answered (toolRegistry.ts).
      const result = outcome.result ?? { content: [{ type: 'text', text: errorText(error) }], isError: true };
      this.results.keep(entry.task.taskId, result);
      this.setStatus(entry, 'completed');
    }
    this.ended(entry);
  }

  /** A task that ended is kept `keepMs` more, which its ttl now says. */
  private ended(entry: Entry): void {
    const lived = Date.now() - Date.parse(entry.task.createdAt);
    entry.task.ttlMs = lived + this.keepMs;
    clearTimeout(entry.expiry);
    entry.expiry = setTimeout(() => {
      this.tasks.delete(entry.task.taskId);
      this.results.forget(entry.task.taskId);
    }, this.keepMs);
    entry.expiry.unref();
  }

  private stopRun(entry: Entry, why: string): void {
    entry.questions.withdrawAll(`the question was withdrawn: ${why}`);
    if (!entry.stop.signal.aborted) entry.stop.abort(why);
  }

  private setStatus(entry: Entry, status: ExtensionTaskStatus, statusMessage?: string): void {
    if (TERMINAL.has(entry.task.status)) return;
    entry.task.status = status;
    if (statusMessage === undefined) delete entry.task.statusMessage;
    else entry.task.statusMessage = statusMessage;
    entry.task.lastUpdatedAt = new Date().toISOString();
  }
}

/** The inputRequests key of the run's question `number`, unique over the task's life. */
function questionKey(number: number): string {
  return `input_${number}`;
}

/** Whether the request's client declared the extension (only a 2026 request can: 2025 has no such capability). */
export function declaresTasks(ctx: ServerContext): boolean {
  const declared = (requestCapabilities(ctx)?.extensions as Record<string, unknown> | undefined)?.[TASKS_EXTENSION];
  return typeof declared === 'object' && declared !== null;
}

/** The spec's answer to a client that names a task without having declared the extension. */
function requireDeclared(ctx: ServerContext): void {
  if (!declaresTasks(ctx)) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      'Missing required client capability',
    );
  }
}
