// The questions one run has asked (input(), approvals) that are not answered yet, for the two ways a 2026-07-28
// client answers without taking requests from the server: the retry of a paused call (pausedCalls.ts) and a task's
// tasks/update (taskExtension.ts). Questions are numbered over the run's life, so an answer names the question it
// is for and a late one finds nothing.
import type { ElicitRequestFormParams, ElicitResult, InputResponseView } from '@modelcontextprotocol/server';

/** A question as the client is shown it (inputRequests carry no mode). */
export type QuestionForm = Omit<ElicitRequestFormParams, 'mode'>;

interface Pending {
  form: QuestionForm;
  answer(result: ElicitResult): void;
  withdraw(error: Error): void;
}

export interface AskOptions {
  /** Aborting it withdraws the question. */
  signal?: AbortSignal;
  /** Without an answer within `ms` the question is withdrawn, saying `why`. */
  wait?: { ms: number; why: string };
}

/** What the table's owner hears: a question came (`asked`), or the last one was answered or withdrawn (`settled`). */
export interface QuestionEvents {
  asked?(): void;
  settled?(): void;
}

export class PendingQuestions {
  /** By number, oldest first. */
  private readonly pending = new Map<number, Pending>();
  private asked = 0;

  constructor(private readonly events: QuestionEvents = {}) {}

  get size(): number {
    return this.pending.size;
  }

  /** The questions waiting for an answer, oldest first. */
  outstanding(): [number, QuestionForm][] {
    return [...this.pending].map(([number, question]) => [number, question.form]);
  }

  /** A question, outstanding until it is answered or withdrawn. */
  ask(form: ElicitRequestFormParams, options: AskOptions = {}): Promise<ElicitResult> {
    return new Promise((answer, fail) => {
      const { signal, wait } = options;
      if (signal?.aborted) return fail(new Error(`the question was withdrawn: ${String(signal.reason)}`));
      const number = ++this.asked;
      const done = () => {
        this.pending.delete(number);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.pending.size === 0) this.events.settled?.();
      };
      const withdraw = (error: Error) => {
        if (!this.pending.has(number)) return;
        done();
        fail(error);
      };
      const onAbort = () => withdraw(new Error(`the question was withdrawn: ${String(signal?.reason)}`));
      const timer = wait ? setTimeout(() => withdraw(new Error(wait.why)), wait.ms) : undefined;
      timer?.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      const { mode: _mode, ...shown } = form;
      this.pending.set(number, {
        form: shown,
        answer: (result) => {
          done();
          answer(result);
        },
        withdraw,
      });
      this.events.asked?.();
    });
  }

  /** Whether question `number` is waiting for an answer. */
  has(number: number): boolean {
    return this.pending.has(number);
  }

  /** Answers question `number` with the client's response to it: false if there is no such question or no answer. */
  answer(number: number, response: InputResponseView): boolean {
    const question = this.pending.get(number);
    if (!question || response.kind !== 'elicit') return false;
    question.answer({
      action: response.action,
      ...(response.content ? { content: response.content as ElicitResult['content'] } : {}),
    });
    return true;
  }

  /** Every outstanding question fails with `why` (the run stopped or ended). */
  withdrawAll(why: string): void {
    for (const question of [...this.pending.values()]) question.withdraw(new Error(why));
  }
}
