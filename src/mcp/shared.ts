// What the tool modules (tools/) share: argument schemas, the channel a call's work reports on, whether code can
// reach outside, and the shape of results. The tool modules import this, never each other.
import type {
  CallToolResult,
  ElicitRequestFormParams,
  ElicitResult,
  LoggingLevel,
  RequestMeta,
  Server,
  ServerNotification,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  type ToolBridge,
  SESSION_NAME,
  type Engine,
  StoreError,
  BACKEND_KINDS,
  type BackendKind,
} from '../engine/index';

/**
 * What a call's work needs of the request it serves: the progress token, the signal that cancels it, and ways to
 * tell and ask the client. Built in one place (runChannel.ts) for each way a run can go: a plain call, a 2025 task,
 * a 2026 paused call or extension task.
 */
export interface RunChannel {
  _meta?: RequestMeta;
  signal: AbortSignal;
  /** A notification about this call (progress); over HTTP it travels on the call's own stream while it is open. */
  notify(notification: ServerNotification): Promise<void>;
  /** A log message about this call, at the level the client asked for (per connection in 2025, per request in 2026). */
  log(level: LoggingLevel, data: Record<string, unknown>, logger: string): Promise<void>;
  /** Whether the client can be asked (it declared elicitation). */
  canAsk: boolean;
  /** Asks the person behind the client (elicitation); only when `canAsk`. */
  elicit(form: ElicitRequestFormParams, options: { signal: AbortSignal; timeout: number }): Promise<ElicitResult>;
  /** True once no call waits for this run's result any more (a 2026 client that never retried): its end is told to the session's next run. */
  nobodyWaits?: () => boolean;
  /** Told when the run starts and stops waiting for a person's answer (a task reports `input_required`). */
  awaitingInput?: (waiting: boolean) => Promise<void>;
}

export const backendKind = z.enum(BACKEND_KINDS as [BackendKind, ...BackendKind[]]);

export const backendArg = backendKind.optional();
export const sessionArg = z.string().regex(SESSION_NAME).optional();

/**
 * Whether code run here can reach beyond the server: the workspace interpreter and a Jupyter kernel always can
 * (they are not sandboxed), Pyodide when its network is on, and all through other MCP servers when code mode is on.
 */
export function codeReachesOutside(engine: Engine, options: { bridge?: ToolBridge }): boolean {
  const unsandboxedOn = (['python', 'jupyter'] as const).some(
    (kind) => engine.backendKinds.includes(kind) && engine.disabledReason(kind) === undefined,
  );
  return unsandboxedOn || engine.sandbox('pyodide')?.network === 'on' || (options.bridge?.providers().length ?? 0) > 0;
}

/** A tool's result: `line` for a reader first when it helps, then the structured content serialized, as the spec recommends. */
export function structuredResult(line: string | undefined, value: object, isError?: boolean): CallToolResult {
  const content: CallToolResult['content'] =
    line === undefined ? [jsonText(value)] : [{ type: 'text', text: line }, jsonText(value)];
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

/** A value as text content: the structured content serialized, as the spec recommends. */
export function jsonText(value: object): { type: 'text'; text: string } {
  return { type: 'text', text: JSON.stringify(value) };
}

/** A result object as structuredContent. */
export function structured(value: object): Record<string, unknown> {
  return value as Record<string, unknown>;
}

/** Runs `dispose` when the server's connection closes (after whatever was set to run then before). */
export function whenClosed(server: Server, dispose: () => void): void {
  const previous = server.onclose;
  server.onclose = () => {
    dispose();
    previous?.();
  };
}
