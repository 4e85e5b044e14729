// input() in an agent's run: the question goes to the person behind the MCP client through elicitation
// (elicitation/create, which VS Code supports), when the client declared it. Without it, nobody can answer,
// and the run is told so at once instead of waiting.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { InputHandler } from '../engine/types';

/** How long a person may take to answer before the question is given up (the run's clock stands still meanwhile). */
export const ANSWER_WAIT_MS = 10 * 60 * 1000;

export function inputViaElicitation(server: Server): InputHandler | undefined {
  if (!server.getClientCapabilities()?.elicitation) return undefined;
  return async (request, signal) => {
    if (request.password) {
      // MCP forbids asking for sensitive information through elicitation.
      throw new Error('getpass() cannot ask through MCP: servers must not request secrets by elicitation. Read the secret from an environment variable or a file instead');
    }
    const result = await server.elicitInput(
      {
        message: request.prompt.trim() || 'The running Python code asks for a line of input.',
        requestedSchema: { type: 'object', properties: { answer: { type: 'string', title: request.prompt.trim() || 'input()' } }, required: ['answer'] },
      },
      { signal, timeout: ANSWER_WAIT_MS },
    );
    if (result.action !== 'accept') return undefined;
    const answer = result.content?.answer;
    return typeof answer === 'string' ? answer : undefined;
  };
}
