import type { CappedOutput } from './output';
import { finalText } from './terminalText';
import type { BackendKind, Diagnostics, Display, OutputItem, RunResult, ToolCallRecord } from './types';

export interface ResultParts {
  runId: string;
  backend: BackendKind;
  session: string;
  durationMs: number;
  diagnostics: Diagnostics | null;
  /** A run's streams as it captured them, or the whole text of a run the engine wrote itself (an install's). */
  stdout?: CappedOutput | string;
  stderr?: CappedOutput | string;
  displays?: Display[];
  outputs?: OutputItem[];
  /** Why the session's interpreter was replaced before or during the run, when it was. */
  reset?: string;
  /** The tools the code called (none for a run that did not start). */
  toolCalls?: ToolCallRecord[];
}

/** Durations are whole milliseconds (`duration_ms` is an integer in the tool contract); a faster run says 0. */
export function roundMs(ms: number): number {
  return Math.round(ms);
}

/**
 * The result of a run as every front end reports it, with `truncated` said both at the top and in the diagnostics.
 * Every run's result is made here, from camelCase parts into the wire's snake_case (types.ts says why).
 */
export function shapeResult(parts: ResultParts): RunResult {
  const truncated = [parts.stdout, parts.stderr].some((stream) => typeof stream === 'object' && stream.truncated);
  const diagnostics = parts.diagnostics && truncated ? { ...parts.diagnostics, truncated: true } : parts.diagnostics;
  return {
    success: diagnostics === null,
    stdout: textOf(parts.stdout),
    stderr: textOf(parts.stderr),
    duration_ms: roundMs(parts.durationMs),
    diagnostics,
    backend: parts.backend,
    session: parts.session,
    run_id: parts.runId,
    ...(truncated ? { truncated: true } : {}),
    ...(parts.displays && parts.displays.length > 0 ? { displays: parts.displays } : {}),
    ...(parts.outputs && parts.outputs.length > 0 ? { outputs: parts.outputs } : {}),
    ...(parts.reset ? { session_reset: true as const, reset_reason: parts.reset } : {}),
    tool_calls: parts.toolCalls ?? [],
  };
}

function textOf(stream: CappedOutput | string | undefined): string {
  return typeof stream === 'object' ? stream.text() : (stream ?? '');
}

/** A piece of a result as rendered for people and models: text, or one of its displays, in program order. */
export type RenderedPiece = { text: string } | { display: Display };

/**
 * A short plain-text rendering of a result, for MCP text content and logs: its output in the order the program
 * made it (stderr under a "[stderr]" line), as a terminal finally shows it, the value of its last expression as
 * the REPL shows it, then what went wrong and how the run ended. Displays are left out.
 */
export function renderResultText(result: RunResult): string {
  return renderResultPieces(result)
    .flatMap((piece) => ('text' in piece ? [piece.text] : []))
    .join('\n');
}

/**
 * The rendering of renderResultText cut at the displays, which stand between the text written before and after
 * them: the content of `run_python`, in program order. The last text piece ends with the status lines. The value
 * of the last expression is its text; an image of it (a figure, a PIL image) follows as a display, while a form
 * that is text already (an HTML table) is left to people's views.
 */
export function renderResultPieces(result: RunResult): RenderedPiece[] {
  const pieces: RenderedPiece[] = [];
  let lines: string[] = [];
  // A stretch of one stream is read whole, as a terminal shows it: a line rewritten with \r (a progress bar) once, in
  // its last state, and no colour codes.
  let stretch: { name: 'stdout' | 'stderr'; text: string } | undefined;
  const endStretch = () => {
    const trimmed = stretch ? finalText(stretch.text).replace(/\n$/, '') : '';
    if (trimmed) lines.push(stretch?.name === 'stderr' ? `[stderr]\n${trimmed}` : trimmed);
    stretch = undefined;
  };
  const addText = (name: 'stdout' | 'stderr', text: string) => {
    if (stretch && stretch.name !== name) endStretch();
    stretch = { name, text: (stretch?.text ?? '') + text };
  };
  const addDisplay = (display: Display) => {
    endStretch();
    if (lines.length > 0) pieces.push({ text: lines.join('\n') });
    lines = [];
    pieces.push({ display });
  };
  if (result.outputs) {
    for (const item of result.outputs) {
      if (item.type === 'stream') {
        addText(item.name, item.text);
        continue;
      }
      const display = item.index === undefined ? undefined : result.displays?.[item.index];
      if (item.type === 'execute_result') {
        endStretch();
        lines.push(item.text.replace(/\n$/, ''));
        if (display?.mime.startsWith('image/')) addDisplay(display);
        continue;
      }
      if (display) addDisplay(display);
    }
  } else {
    addText('stdout', result.stdout);
    addText('stderr', result.stderr);
  }
  endStretch();
  pieces.push({ text: [...lines, ...statusLines(result)].join('\n') });
  // A result made before `outputs` existed: its displays follow its text.
  if (!result.outputs) for (const display of result.displays ?? []) pieces.push({ display });
  return pieces;
}

function statusLines(result: RunResult): string[] {
  const lines: string[] = [];
  const d = result.diagnostics;
  if (d) {
    // A traceback ends with the message ("ZeroDivisionError: division by zero"): it is said once, there.
    const traceback = d.traceback?.trim() ? d.traceback.replace(/\n$/, '') : undefined;
    const endsWithMessage = traceback !== undefined && traceback.trimEnd().endsWith(d.message.trim());
    lines.push(endsWithMessage ? `[${d.error_type}]` : `[${d.error_type}] ${d.message}`);
    if (traceback && traceback.trim() !== d.message.trim()) lines.push(traceback);
    if (d.auto_install) lines.push(`auto-install: ${d.auto_install}`);
    if (d.hints?.length) lines.push(...d.hints.map((h) => `hint: ${h}`));
  }
  if (result.tool_calls?.length) lines.push(`[tool calls: ${result.tool_calls.map(describeToolCall).join(', ')}]`);
  if (result.auto_installed) lines.push(`[auto-installed ${result.auto_installed.join(', ')} and ran the code again]`);
  if (result.truncated) lines.push('[output truncated: head and tail kept]');
  if (result.session_reset && !d?.session_reset) lines.push(`[session reset before this run: ${result.reset_reason}]`);
  else if (result.session_reset && d && result.reset_reason !== d.message)
    lines.push(`[session reset: ${result.reset_reason}]`);
  lines.push(
    `[${result.success ? 'ok' : 'failed'} in ${result.duration_ms} ms on ${result.backend}, session "${result.session}"]`,
  );
  return lines;
}

/** One call of the audit in a few words, e.g. `memory.create_entities ok 12 ms (asked-allowed)`. */
export function describeToolCall(call: ToolCallRecord): string {
  const outcome = call.approval === 'denied' ? 'refused' : call.ok ? `ok ${call.ms} ms` : `failed ${call.ms} ms`;
  return `${call.server}.${call.tool} ${outcome} (${call.approval})`;
}
