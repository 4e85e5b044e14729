// A tool call from an agent's code that needs a person's yes (engine/codemode/approval.ts): the question goes to
// the person behind the MCP client as an elicitation form naming the server, the tool, its arguments and the run.
// Declining or cancelling the form is a no. Without elicitation nobody can be asked, and the bridge refuses the
// call at once, naming the flag that changes that.
import {
  shownArgs,
  shownName,
  type ToolApprovalAnswer,
  type ToolApprovalHandler,
  type ToolApprovalRequest,
} from '../engine/index';
import { askDuringRun } from './elicitation';
import type { RunChannel } from './shared';

const CHOICES: { const: ToolApprovalAnswer; title: string }[] = [
  { const: 'once', title: 'Allow once' },
  { const: 'session', title: 'Allow this tool for this session' },
  { const: 'deny', title: 'Deny' },
];

export function approvalViaElicitation(channel: RunChannel): ToolApprovalHandler | undefined {
  if (!channel.canAsk) return undefined;
  return async (request, signal) => {
    const result = await askDuringRun(
      channel,
      {
        message: approvalMessage(request),
        requestedSchema: {
          type: 'object',
          properties: {
            decision: {
              type: 'string',
              title: `Call ${shownName(request.server)}.${shownName(request.tool)}?`,
              oneOf: CHOICES,
              default: 'once',
            },
          },
          required: ['decision'],
        },
      },
      signal,
    );
    if (result.action !== 'accept') return 'deny';
    const decision = result.content?.decision;
    return decision === 'once' || decision === 'session' ? decision : 'deny';
  };
}

/**
 * The question as plain text: which tool of which server first, then exactly the arguments it would receive, then
 * which run asks (shownArgs: nothing from the code reaches the person raw).
 */
export function approvalMessage(request: ToolApprovalRequest): string {
  const { run } = request;
  const where = run.location ? ` (${quotedPath(run.location.file)}:${run.location.line})` : '';
  return [
    `Call ${shownName(request.server)}.${shownName(request.tool)}? The tool is not marked read-only. It would receive:`,
    shownArgs(request.args, request.undeclared),
    `Asked by Python code of run ${run.runId}${where}, session ${shownName(run.session)}.`,
  ].join('\n');
}

function quotedPath(file: string): string {
  return shownName(file.split(/[\\/]/).pop() ?? file);
}
