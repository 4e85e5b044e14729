// input() in an agent's run: the question goes to the person behind the MCP client through elicitation
// (elicitation/create, which VS Code supports), when the client declared it. Without it, nobody can answer,
// and the run is told so at once instead of waiting.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { InputHandler } from '../engine/types';
import type { RunChannel } from './shared';

/** How long a person may take to answer before the question is given up (the run's clock stands still meanwhile). */
const ANSWER_WAIT_MS = 10 * 60 * 1000;

export function inputViaElicitation(server: Server, channel: RunChannel): InputHandler | undefined {
  if (!server.getClientCapabilities()?.elicitation) return undefined;
  return async (request, signal) => {
    if (request.password) {
      // MCP forbids asking for sensitive information through elicitation.
      throw new Error('getpass() cannot ask through MCP: servers must not request secrets by elicitation. Read the secret from an environment variable or a file instead');
    }
    // A question of its own: the SDK never forgets an abort listener, so aborting the run's signal after an
    // answer came would tell the client to cancel a request it has already answered.
    const question = new AbortController();
    const withdraw = () => question.abort(signal.reason);
    signal.addEventListener('abort', withdraw, { once: true });
    const prompt = request.prompt.trim();
    await channel.awaitingInput?.(true);
    try {
      const result = await server.elicitInput(
        {
          message: prompt || 'The running Python code asks for a line of input.',
          requestedSchema: { type: 'object', properties: { answer: { type: 'string', title: prompt || 'input()' } }, required: ['answer'] },
        },
        { signal: question.signal, timeout: ANSWER_WAIT_MS },
      );
      const asked = prompt ? ` ${JSON.stringify(prompt)}` : '';
      if (result.action === 'decline') throw new Error(`input was declined: the person at the MCP client declined to answer${asked}`);
      if (result.action === 'cancel') throw new Error(`input was cancelled: the person at the MCP client dismissed the question${asked}`);
      const answer = result.content?.answer;
      if (typeof answer !== 'string') throw new Error('input was refused: the MCP client accepted the question but sent no answer');
      return answer;
    } finally {
      signal.removeEventListener('abort', withdraw);
      await channel.awaitingInput?.(false);
    }
  };
}
