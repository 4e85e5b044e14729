// A run's questions to a person: input(), sys.stdin and getpass, and whether a tool call may go ahead. The run's
// time limit stands still while a person decides, and a stopped run withdraws its question. Because the clock
// stands still, the waiting is bounded: per question, per run, and in the number of questions a run may ask.
import { performance } from 'node:perf_hooks';
import type { QuestionLimits } from '../config';
import type { InputRequest } from '../types';
import type { ActiveRun } from '../sessions/session';

/** The host-call method of user_input.py. */
export const INPUT_METHOD = 'input';

/** The run's clock, paused while a person is asked. */
export interface RunClock {
  pause(): void;
  resume(): void;
}

/** The question of a run, put to its front door; rejected (an EOFError in Python) when nobody can answer. */
export async function askFor(active: ActiveRun | undefined, params: unknown): Promise<string | null> {
  const request = params as Partial<InputRequest> | null;
  if (typeof request?.prompt !== 'string') throw new Error('input() was called with a malformed request');
  if (!active?.ask) {
    throw new Error(
      'input() has nobody to answer it: this run was started where no one can be asked (an MCP client without elicitation, a script). Put the data in the code, or read it from a file',
    );
  }
  return (await active.ask({ prompt: request.prompt, password: request.password === true })) ?? null;
}

/** What one run has left of its questions: how many it may still ask, and how long they may still wait. */
export class QuestionBudget {
  private asked = 0;
  private waitedMs = 0;

  constructor(private readonly limits: QuestionLimits) {}

  /** The longest the next question may wait; throws, saying which bound, when the run may ask no more. */
  admit(): number {
    const { maxPerRun, runWaitS, questionWaitS } = this.limits;
    if (this.asked >= maxPerRun)
      throw new Error(`this run already asked ${maxPerRun} questions, the most one run may ask`);
    const leftMs = runWaitS * 1000 - this.waitedMs;
    if (leftMs <= 0) throw new Error(`this run already waited ${runWaitS} s for answers, the longest one run may wait`);
    this.asked++;
    return Math.min(questionWaitS * 1000, leftMs);
  }

  spent(ms: number): void {
    this.waitedMs += ms;
  }
}

/**
 * Asks a person (input(), a tool call's approval) with the run's clock paused; a stopped run dismisses the question,
 * and so does the end of the time the budget gives it (the asker is told through its signal, and the question
 * fails whether or not the asker listens).
 */
export function askPausingClock<Q, A>(
  ask: (request: Q, signal: AbortSignal) => Promise<A>,
  stopped: () => AbortSignal,
  clock: RunClock,
  budget: QuestionBudget,
) {
  return async (request: Q): Promise<A> => {
    const waitMs = budget.admit();
    const withdrawn = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const unanswered = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`no answer came within ${Math.round(waitMs / 1000)} s; the question was withdrawn`));
        withdrawn.abort();
      }, waitMs);
    });
    clock.pause();
    const since = performance.now();
    try {
      return await Promise.race([ask(request, AbortSignal.any([stopped(), withdrawn.signal])), unanswered]);
    } finally {
      clearTimeout(timer);
      budget.spent(performance.now() - since);
      clock.resume();
    }
  };
}
