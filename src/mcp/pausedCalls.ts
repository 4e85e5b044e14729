// Questions in the middle of a run for 2026-07-28 clients, which take no requests from the server: when a run asks
// (input(), a tool call that needs a yes), the tools/call is answered `input_required` with the question while the
// program waits, paused; the client's retry carries the answer and the sealed requestState, and that same paused
// program goes on, until it ends (the retry gets its result) or asks again. A retry that never comes stops the run.
import {
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type InputRequiredResult,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { createHash, randomBytes } from 'node:crypto';
import { ANSWER_WAIT_MS } from './elicitation';
import { PendingQuestions } from './pendingQuestions';
import { reportsOnRequest, runChannel } from './runChannel';
import type { RunChannel } from './shared';

/** What a sealed requestState says: which paused call, which of its questions, and a digest of the call's arguments. */
interface PausedState {
  call: string;
  question: number;
  args: string;
}

/** One call whose run is under way across rounds. */
interface PausedCall {
  id: string;
  args: string;
  result: Promise<CallToolResult>;
  settled: boolean;
  /** What the run asked and waits on; a round shows the client the newest. */
  questions: PendingQuestions;
  /** Wakes the round waiting for the run's next event (a question, or its end). */
  wake?: () => void;
  /** The request serving the current round: notifications go with it; none between rounds. */
  round?: ServerContext;
  stop: AbortController;
  expiry?: NodeJS.Timeout;
}

export interface PausedCallsOptions {
  /** How long a question waits for the client's retry before the run is stopped (default: as 2025's elicitation waits). */
  answerWaitMs: number;
}

/** The state of one question's round: what the retry must send back. */
const ANSWER_KEY = 'answer';

export class PausedCalls {
  private readonly calls = new Map<string, PausedCall>();
  /** What the next run of a session must hear: a run of it was stopped with nobody left to read its result. */
  private readonly notices = new Map<string, string>();
  private readonly codec;
  private readonly ttlSeconds: number;

  constructor(private readonly options: PausedCallsOptions = { answerWaitMs: ANSWER_WAIT_MS }) {
    this.ttlSeconds = Math.ceil(options.answerWaitMs / 1000);
    // A key per process: only this process holds the paused programs its states name.
    this.codec = createRequestStateCodec<PausedState>({ key: randomBytes(32), ttlSeconds: this.ttlSeconds });
  }

  /** For ServerOptions.requestState.verify: a forged, altered or expired state never reaches a handler (-32602). */
  readonly verify = (state: string, ctx: ServerContext) => this.codec.verify(state, ctx);

  /** Calls paused now. */
  get size(): number {
    return this.calls.size;
  }

  /**
   * Serves one round of a call that came to `server`: the first (no requestState) starts `work` with a channel whose
   * questions pause it; a retry answers the question its state names and goes on. Either way: the result, or the
   * next question.
   */
  async serve(
    server: Server,
    ctx: ServerContext,
    args: unknown,
    work: (channel: RunChannel) => Promise<CallToolResult>,
  ): Promise<CallToolResult | InputRequiredResult> {
    const digest = argsDigest(args);
    const state = ctx.mcpReq.requestState<PausedState>();
    const call = state ? this.resumed(state, digest, ctx) : this.started(digest, server, ctx, work);
    return this.nextEvent(call, ctx);
  }

  /** A run of the session `key` was stopped while no call waited for it: its next run says so. */
  remember(key: string, notice: string): void {
    this.notices.set(key, notice);
  }

  /** The notice for the session `key`, once. */
  take(key: string): string | undefined {
    const notice = this.notices.get(key);
    this.notices.delete(key);
    return notice;
  }

  /** Stops every paused run: the server is closing. */
  close(): void {
    for (const call of this.calls.values()) this.abandon(call, 'the MCP server closed');
  }

  private started(
    args: string,
    server: Server,
    ctx: ServerContext,
    work: (channel: RunChannel) => Promise<CallToolResult>,
  ): PausedCall {
    const stop = new AbortController();
    const call: PausedCall = {
      id: randomBytes(16).toString('hex'),
      args,
      settled: false,
      questions: new PendingQuestions({ asked: () => call.wake?.() }),
      stop,
    } as PausedCall;
    const channel = runChannel(server, ctx, {
      signal: stop.signal,
      nobodyWaits: () => call.stop.signal.aborted,
      // Between rounds no request is open to carry them: progress and log messages of that time are dropped.
      reports: reportsOnRequest(() => call.round),
      // A question stays until answered or the call is abandoned, which stops the run: the retry may still bring it.
      ask: (form) => call.questions.ask(form),
    });
    call.result = work(channel).finally(() => {
      call.settled = true;
      call.wake?.();
    });
    this.calls.set(call.id, call);
    return call;
  }

  private resumed(state: PausedState, args: string, ctx: ServerContext): PausedCall {
    const call = this.calls.get(state.call);
    // A state whose question was answered already (a replay), or for other arguments, or whose run is gone.
    if (!call || !call.questions.has(state.question) || call.args !== args) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState');
    }
    const response = inputResponse(ctx.mcpReq.inputResponses, ANSWER_KEY);
    if (call.questions.answer(state.question, response)) clearTimeout(call.expiry);
    // Without an answer the same question is asked again.
    return call;
  }

  /** Waits for the run's next event: its result ends the call; a question is this round's answer. */
  private async nextEvent(call: PausedCall, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> {
    call.round = ctx;
    const cancelled = () => this.abandon(call, 'the client cancelled the call');
    ctx.mcpReq.signal.addEventListener('abort', cancelled, { once: true });
    try {
      while (!call.settled && call.questions.size === 0) await new Promise<void>((resolve) => (call.wake = resolve));
      call.wake = undefined;
      if (call.settled) {
        this.calls.delete(call.id);
        return await call.result;
      }
      const [question, form] = call.questions.outstanding().at(-1)!;
      clearTimeout(call.expiry);
      call.expiry = setTimeout(
        () => this.abandon(call, `no answer came within ${this.ttlSeconds} s: the client never retried the call`),
        this.options.answerWaitMs,
      );
      call.expiry.unref();
      return inputRequired({
        inputRequests: { [ANSWER_KEY]: inputRequired.elicit(form) },
        requestState: await this.codec.mint({ call: call.id, question, args: call.args }),
      });
    } finally {
      ctx.mcpReq.signal.removeEventListener('abort', cancelled);
      call.round = undefined;
    }
  }

  /** The run is stopped (its question fails, its signal aborts) and its call forgotten. */
  private abandon(call: PausedCall, why: string): void {
    clearTimeout(call.expiry);
    this.calls.delete(call.id);
    call.questions.withdrawAll(`the question was withdrawn: ${why}`);
    call.stop.abort(why);
  }
}

function argsDigest(args: unknown): string {
  return createHash('sha256').update(JSON.stringify(args)).digest('base64url');
}
