// What the tool modules share: argument schemas, the run result's schema, running code for a tool call, and
// the shape of results. The tool modules import this, never each other's registration code.
import type { RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ToolBridge } from '../engine/codemode/bridge';
import { MAX_TIMEOUT_S, SESSION_NAME } from '../engine/config';
import type { Engine, RunOptions } from '../engine/engine';
import { renderResultPieces } from '../engine/result';
import { StoreError } from '../engine/stores/index';
import { BACKEND_KINDS, type BackendKind, type RunResult } from '../engine/types';
import type { ClientLog } from './clientLog';
import { RunProgress } from './progress';
import type { ToolName } from './toolNames';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * What a run needs of the call it serves: the progress token, the signal that cancels it, and a way to tell the
 * client. A plain call's extra is one; a task's run gets its own (see toolTasks.ts), since its call was answered.
 */
export type RunChannel = Pick<ToolExtra, '_meta' | 'signal' | 'sendNotification'> & {
  /** Told when the run starts and stops waiting for a person's answer (a task reports `input_required`). */
  awaitingInput?: (waiting: boolean) => Promise<void>;
};

/** The tools one server offers, by name. */
export type OfferedTools = Partial<Record<ToolName, RegisteredTool>>;

export const backendKind = z.enum(BACKEND_KINDS as [BackendKind, ...BackendKind[]]);

export const backendArg = backendKind.optional();
export const sessionArg = z.string().regex(SESSION_NAME).optional();

export const runPythonInput = {
  code: z.string().optional(),
  file: z.string().optional(),
  backend: backendArg,
  timeout_s: z.number().positive().max(MAX_TIMEOUT_S).optional(),
  session: sessionArg,
  reset: z.boolean().optional(),
};

/**
 * An output schema: the fields declared are always there (or said optional), and more may come (a newer server
 * adds fields without breaking a client that validates).
 */
export function outputSchema<T extends z.ZodRawShape>(shape: T) {
  return z.object(shape).passthrough();
}

/**
 * The run result (RunResult in engine/types.ts) as run_python declares it. Declared to the first level, plus the
 * error type, so the tool list stays small; the README's tool contract names every field.
 */
export const runResultOutput = outputSchema({
  success: z.boolean(),
  stdout: z.string(),
  stderr: z.string(),
  duration_ms: z.number().int(),
  diagnostics: z
    .object({ error_type: z.enum(['SyntaxError', 'RuntimeError', 'TIMEOUT', 'CANCELLED', 'POLICY_VIOLATION', 'BACKEND_CRASHED', 'INVALID_ARGUMENT']), message: z.string() })
    .passthrough()
    .nullable(),
  backend: z.string(),
  session: z.string(),
  run_id: z.string(),
  truncated: z.boolean().optional(),
  displays: z.array(z.unknown()).optional(),
  auto_installed: z.array(z.unknown()).optional(),
  session_reset: z.boolean().optional(),
  reset_reason: z.string().optional(),
  tool_calls: z.array(z.unknown()).optional(),
});

/**
 * Whether code run here can reach beyond the server: the workspace interpreter and a Jupyter kernel always can
 * (they are not sandboxed), Pyodide when its network is on, and all through other MCP servers when code mode is on.
 */
export function codeReachesOutside(engine: Engine, options: { bridge?: ToolBridge }): boolean {
  const unsandboxedOn = (['python', 'jupyter'] as const).some((kind) => engine.backendKinds.includes(kind) && engine.disabledReason(kind) === undefined);
  return unsandboxedOn || engine.sandbox('pyodide')?.network === 'on' || (options.bridge?.providers().length ?? 0) > 0;
}

/**
 * Runs code for a tool call: output streams as coalesced progress notifications (with a heartbeat while the
 * run is silent) when the client sent a progress token, the client's cancel notification interrupts the run,
 * and what the client should hear of (a reset session, a policy refusal, an install) goes to its log.
 */
export async function runForTool(engine: Engine, run: Omit<RunOptions, 'signal' | 'onEvent'>, extra: RunChannel, log: ClientLog): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken;
  const progress =
    progressToken === undefined
      ? undefined
      : new RunProgress((progress, message) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }));
  let result: RunResult;
  try {
    result = await engine.run({
      ...run,
      signal: extra.signal,
      onEvent: progress && ((event) => (event.type === 'stdout' || event.type === 'stderr') && progress.output(event.type, event.text)),
    });
  } finally {
    // The client drops progress that arrives after the response: every notification is handed over before it.
    await progress?.finish();
  }
  await log.runFinished(result, run.reset === true, extra);
  return toolResult(result);
}

/**
 * The run as structured content; as content, its text rendering for models with the displays (image or text
 * content) between the text written before and after them, as the program made them, then its JSON. The JSON
 * leaves out the displays' data, which the content before it carries already.
 */
export function toolResult(result: RunResult): CallToolResult {
  const displays = result.displays?.map(({ data: _data, ...rest }) => rest);
  const content: CallToolResult['content'] = renderResultPieces(result).map((piece) => {
    if ('text' in piece) return { type: 'text', text: piece.text };
    const { display } = piece;
    if (display.mime.startsWith('image/')) return { type: 'image', data: display.data, mimeType: display.mime };
    // A file's text is labelled with its path, so several shown files stay apart.
    return { type: 'text', text: display.title ? `${display.title}:\n${display.data}` : display.data };
  });
  content.push(jsonText(displays ? { ...result, displays } : result));
  return { content, structuredContent: structured(result), isError: !result.success };
}

/** A tool's result: `line` for a reader first when it helps, then the structured content serialized, as the spec recommends. */
export function structuredResult(line: string | undefined, value: object, isError?: boolean): CallToolResult {
  const content: CallToolResult['content'] = line === undefined ? [jsonText(value)] : [{ type: 'text', text: line }, jsonText(value)];
  return { content, structuredContent: structured(value), ...(isError === undefined ? {} : { isError }) };
}

/** A call refused before anything ran (a bad name, a missing file): text only, as the SDK reports a bad argument. */
export function refused(message: string): CallToolResult {
  return { content: [{ type: 'text', text: `[INVALID_ARGUMENT] ${message}` }], isError: true };
}

/** A store's complaint about the caller's arguments becomes a refusal; anything else is the server's fault and propagates. */
export async function guarded(handler: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await handler();
  } catch (error) {
    if (error instanceof StoreError) return refused(error.message);
    throw error;
  }
}

function jsonText(value: object): { type: 'text'; text: string } {
  return { type: 'text', text: JSON.stringify(value) };
}

function structured(value: object): Record<string, unknown> {
  return value as Record<string, unknown>;
}
