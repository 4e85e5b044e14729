// The question VS Code asks before a tool call from Python that needs a person's yes (engine/codemode/approval.ts
// decides which do): a modal naming the server, the tool, its arguments (readable, cut) and the run. "Allow this
// tool for this session" holds for this window until it closes, for every run in it (yours, Copilot's, the
// explorer's).
import * as vscode from 'vscode';
import {
  shownArgs,
  shownName,
  type RunOrigin,
  type ToolApprovalAnswer,
  type ToolApprovalRequest,
  type ToolApprovals,
} from '../engine/index';

export const ALLOW_ONCE = 'Allow once';
export const ALLOW_FOR_SESSION = 'Allow this tool for this session';
export const DENY = 'Deny';

/** What the modal shows: its message and its detail text. */
export interface ApprovalQuestion {
  message: string;
  detail: string;
}

/** Answers in place of the modal (tests: VS Code refuses to show a modal dialog while extension tests run). */
export type ApprovalStandIn = (question: ApprovalQuestion, request: ToolApprovalRequest) => Promise<ToolApprovalAnswer>;

const WHO: Record<RunOrigin, string> = {
  mcp: 'an agent (MCP)',
  cli: 'an agent (MCP)',
  generate: 'code a language model generated (Generate and Run)',
  command: 'your run',
  explorer: 'your run from the Tool Explorer',
  test: 'a test',
};

export class ToolApprovalQuestions {
  /** "server.tool" keys allowed for this window's session. */
  private readonly sessionAllowed = new Set<string>();
  private standIn: ApprovalStandIn | undefined;

  /** Who answers runs' tool-call questions in this window, for RunOptions.toolApprovals and our MCP servers. */
  readonly approvals: ToolApprovals = {
    ask: (request, signal) => this.ask(request, signal),
    sessionAllowed: this.sessionAllowed,
  };

  /** Tests only (the extension offers it in ExtensionMode.Test): answer questions without the modal. */
  answerWith(standIn: ApprovalStandIn | undefined): void {
    this.standIn = standIn;
  }

  private async ask(request: ToolApprovalRequest, stopped: AbortSignal): Promise<ToolApprovalAnswer> {
    const question = approvalQuestion(request);
    // VS Code cannot close a modal from an extension: a stopped run stops waiting at once, and a later click is ignored.
    const withdrawn = new Promise<never>((_resolve, reject) => {
      const stop = () => reject(new Error('the run was stopped while the question was open'));
      if (stopped.aborted) stop();
      stopped.addEventListener('abort', stop, { once: true });
    });
    const answered = this.standIn ? this.standIn(question, request) : showModal(question);
    return Promise.race([answered, withdrawn]);
  }
}

async function showModal(question: ApprovalQuestion): Promise<ToolApprovalAnswer> {
  const choice = await vscode.window.showWarningMessage(
    question.message,
    { modal: true, detail: question.detail },
    ALLOW_ONCE,
    ALLOW_FOR_SESSION,
    DENY,
  );
  // Cancel (Escape) is a no.
  return choice === ALLOW_ONCE ? 'once' : choice === ALLOW_FOR_SESSION ? 'session' : 'deny';
}

/** The modal's text: the tool and server up front, then the arguments, then where the call comes from. */
export function approvalQuestion(request: ToolApprovalRequest): ApprovalQuestion {
  const { run } = request;
  const from = run.location
    ? `${shownName(vscode.workspace.asRelativePath(run.location.file))}:${run.location.line}`
    : `session ${shownName(run.session)}`;
  return {
    message: `Allow Python code to call ${shownName(request.server)}.${shownName(request.tool)}?`,
    detail: [
      'The tool is not marked read-only: it may change something. It would receive:',
      shownArgs(request.args, request.undeclared),
      '',
      '',
      `From ${WHO[run.origin]}: run ${run.runId}, ${from}. The run waits, its time limit paused, until you answer.`,
    ].join('\n'),
  };
}
