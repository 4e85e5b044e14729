// Which tool calls made from Python need a person's yes (issue 18, part 2). Pure: the bridge applies it to each
// call, and the front ends only ask the question (the ToolApprovalHandler port in engine/types.ts).
import type { RunOrigin, ToolApproval, ToolApprovalAnswer } from '../types';

export type ApprovalMode = 'ask' | 'allow' | 'readonly';
export const APPROVAL_MODES: readonly ApprovalMode[] = ['ask', 'allow', 'readonly'];

export function isApprovalMode(value: unknown): value is ApprovalMode {
  return typeof value === 'string' && (APPROVAL_MODES as readonly string[]).includes(value);
}

export interface ApprovalPolicy {
  /** ask: a call to a tool not marked read-only waits for a person; allow: never asks; readonly: refuses such calls. */
  mode: ApprovalMode;
  /** Tools that need no question, as "server.tool" or "server.*". */
  autoApprove: string[];
  /** A person's own runs (Run File, Run Selection, the explorer) count as approved by that person. */
  approvePersonRuns: boolean;
  /** How a person changes the mode and the rules where this runs, named in refusals. */
  names: { mode: string; autoApprove: string };
}

/** Until a front end gives the policy its own names (the CLI's flags, VS Code's settings). */
const UNNAMED_SETTINGS: ApprovalPolicy['names'] = {
  mode: 'the tool approval setting',
  autoApprove: 'the auto-approve list',
};

export const defaultApprovalPolicy: ApprovalPolicy = {
  mode: 'ask',
  autoApprove: [],
  approvePersonRuns: true,
  names: UNNAMED_SETTINGS,
};

/** Runs a person started themselves; every other origin is an agent's (MCP, Copilot, generated code). */
const PERSON_ORIGINS: readonly RunOrigin[] = ['command', 'explorer'];

/** What is known about one call when it is decided. */
export interface ToolCallFacts {
  server: string;
  tool: string;
  /** The tool's annotations say `readOnlyHint: true`; unknown counts as not read-only. */
  readOnly: boolean;
  /** The provider asks a person itself before the call (VS Code's own tools): code mode must not ask twice. */
  confirmsItself: boolean;
  /** Who started the run; undefined when the call comes from no known run. */
  origin: RunOrigin | undefined;
  /** A person answered "Allow this tool for this session" for this tool before. */
  sessionAllowed: boolean;
}

export type ApprovalVerdict = { kind: 'allow'; approval: ToolApproval } | { kind: 'refuse'; reason: string };
export type ApprovalDecision = ApprovalVerdict | { kind: 'ask' };

/** `--auto-approve a.b,c.*` as a list, or what is wrong with an entry. */
export function parseToolPatterns(text: string): string[] | { error: string } {
  const patterns = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = patterns.find((entry) => !/^[^.\s]+(\.[^.\s]+)*\.[^.\s]+$/.test(entry));
  return bad === undefined ? patterns : { error: `"${bad}" is not "server.tool" or "server.*"` };
}

/** "server.tool" or "server.*" in `patterns` covers the call. */
export function matchesToolPattern(patterns: readonly string[], server: string, tool: string): boolean {
  return patterns.includes(`${server}.${tool}`) || patterns.includes(`${server}.*`);
}

/**
 * The decision for one call, before anyone is asked. A read-only tool and a rule allow in every mode (a rule is
 * the person's own allow, so `readonly` with rules means "read-only, plus these"); `readonly` refuses the rest
 * without asking. Under `ask`, a tool whose provider confirms calls itself, a tool allowed for the session and
 * a person's own run (unless approvePersonRuns is off) need no question.
 */
export function decideApproval(policy: ApprovalPolicy, call: ToolCallFacts): ApprovalDecision {
  if (call.readOnly) return { kind: 'allow', approval: 'read-only' };
  if (matchesToolPattern(policy.autoApprove, call.server, call.tool)) return { kind: 'allow', approval: 'rule' };
  if (policy.mode === 'allow') return { kind: 'allow', approval: 'policy-allow' };
  if (policy.mode === 'readonly') {
    return {
      kind: 'refuse',
      reason: `${call.server}.${call.tool} is not marked read-only, and tool approval is "readonly" (${policy.names.mode}); set it to "ask", or list "${call.server}.${call.tool}" in ${policy.names.autoApprove}`,
    };
  }
  if (call.confirmsItself) return { kind: 'allow', approval: 'policy-allow' };
  if (call.sessionAllowed) return { kind: 'allow', approval: 'session-allowed' };
  if (call.origin !== undefined && PERSON_ORIGINS.includes(call.origin) && policy.approvePersonRuns)
    return { kind: 'allow', approval: 'policy-allow' };
  return { kind: 'ask' };
}

/** Why a call that needed a question was refused when nobody could be asked. */
export function nobodyToAsk(policy: ApprovalPolicy, server: string, tool: string): string {
  return (
    `${server}.${tool} is not marked read-only and needs a person's approval, but nobody can be asked here (the client does not support elicitation); ` +
    `set ${policy.names.mode} to "allow", or list "${server}.${tool}" (or "${server}.*") in ${policy.names.autoApprove}`
  );
}

/** What a person's answer means for the call and the audit. */
export function answerDecision(answer: ToolApprovalAnswer, server: string, tool: string): ApprovalVerdict {
  if (answer === 'once' || answer === 'session') return { kind: 'allow', approval: 'asked-allowed' };
  return { kind: 'refuse', reason: `a person declined the call to ${server}.${tool}` };
}
