// One question to the person behind the MCP client, asked on behalf of a running run (input(), a tool call that
// needs a yes). The run's clock already stands still (the engine pauses it); a task says it waits for input.
import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/server';
import type { RunChannel } from './shared';

/** How long a person may take to answer before the question is given up. */
export const ANSWER_WAIT_MS = 10 * 60 * 1000;

/** Asks with a form; stopping the run (`signal`) withdraws the question. */
export async function askDuringRun(
  channel: RunChannel,
  form: Omit<ElicitRequestFormParams, 'mode'>,
  signal: AbortSignal,
): Promise<ElicitResult> {
  // A question of its own: the SDK never forgets an abort listener, so aborting the run's signal after an
  // answer came would tell the client to cancel a request it has already answered.
  const question = new AbortController();
  const withdraw = () => question.abort(signal.reason);
  signal.addEventListener('abort', withdraw, { once: true });
  await channel.awaitingInput?.(true);
  try {
    return await channel.elicit({ mode: 'form', ...form }, { signal: question.signal, timeout: ANSWER_WAIT_MS });
  } finally {
    signal.removeEventListener('abort', withdraw);
    await channel.awaitingInput?.(false);
  }
}
