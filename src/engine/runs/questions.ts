// A run's questions to a person: input(), sys.stdin and getpass, and whether a tool call may go ahead. The run's
// time limit stands still while a person decides, and a stopped run withdraws its question.
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

/** Asks a person (input(), a tool call's approval) with the run's clock paused; a stopped run dismisses the question. */
export function askPausingClock<Q, A>(
  ask: (request: Q, signal: AbortSignal) => Promise<A>,
  stopped: () => AbortSignal,
  clock: RunClock,
) {
  return async (request: Q): Promise<A> => {
    clock.pause();
    try {
      return await ask(request, stopped());
    } finally {
      clock.resume();
    }
  };
}
