// A tool call from an agent's code that needs a person's yes (engine/codemode/approval.ts): the question goes to
// the person behind the MCP client as an elicitation form naming the server, the tool, its arguments and the run.
// Declining or cancelling the form is a no. Without elicitation nobody can be asked, and the bridge refuses the
// call at once, naming the flag that changes that.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  summarizeArgs,
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

export function approvalViaElicitation(server: Server, channel: RunChannel): ToolApprovalHandler | undefined {
  if (!server.getClientCapabilities()?.elicitation) return undefined;
  return async (request, signal) => {
    const result = await askDuringRun(
      server,
      channel,
      {
        message: approvalMessage(request),
        requestedSchema: {
          type: 'object',
          properties: {
            decision: {
              type: 'string',
              title: `Call ${request.server}.${request.tool}?`,
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

/** The question as plain text: which tool of which server, with which arguments, from which run. */
export function approvalMessage(request: ToolApprovalRequest): string {
  const where = request.run.location ? ` (${request.run.location.file}:${request.run.location.line})` : '';
  return [
    `Python code of run ${request.run.runId}${where}, session "${request.run.session}", wants to call the tool "${request.tool}" of the MCP server "${request.server}", which is not marked read-only. Arguments:`,
    summarizeArgs(request.args),
    'Allow this call?',
  ].join('\n');
}
