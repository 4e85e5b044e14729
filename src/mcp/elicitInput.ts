// input() in an agent's run: the question goes to the person behind the MCP client through elicitation
// (elicitation/create, which VS Code supports), when the client declared it. Without it, nobody can answer,
// and the run is told so at once instead of waiting.
import type { InputHandler } from '../engine/index';
import { askDuringRun } from './elicitation';
import type { RunChannel } from './shared';

export function inputViaElicitation(channel: RunChannel): InputHandler | undefined {
  if (!channel.canAsk) return undefined;
  return async (request, signal) => {
    if (request.password) {
      // MCP forbids asking for sensitive information through elicitation.
      throw new Error(
        'getpass() cannot ask through MCP: servers must not request secrets by elicitation. Read the secret from an environment variable or a file instead',
      );
    }
    const prompt = request.prompt.trim();
    const result = await askDuringRun(
      channel,
      {
        message: prompt || 'The running Python code asks for a line of input.',
        requestedSchema: {
          type: 'object',
          properties: { answer: { type: 'string', title: prompt || 'input()' } },
          required: ['answer'],
        },
      },
      signal,
    );
    const asked = prompt ? ` ${JSON.stringify(prompt)}` : '';
    if (result.action === 'decline')
      throw new Error(`input was declined: the person at the MCP client declined to answer${asked}`);
    if (result.action === 'cancel')
      throw new Error(`input was cancelled: the person at the MCP client dismissed the question${asked}`);
    const answer = result.content?.answer;
    if (typeof answer !== 'string')
      throw new Error('input was refused: the MCP client accepted the question but sent no answer');
    return answer;
  };
}
