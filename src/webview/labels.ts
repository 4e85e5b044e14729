// The words a person reads for a run, the same in the Results view, the Tool Explorer, the runs channel and
// the status bar: backends by their names (Jupyter capitalised), failures named like the exceptions they
// usually are ("ZeroDivisionError", "Cancelled", "Timed out"). No DOM: the host imports it too.
import type { BackendKind, Diagnostics, RunInfo, RunResult } from '../engine/browser';

export const BACKEND_LABELS: Record<BackendKind, string> = { pyodide: 'Pyodide', python: 'Python', jupyter: 'Jupyter' };

const ORIGIN_LABELS: Record<RunInfo['origin'], string> = {
  mcp: 'agent (MCP)',
  command: 'command',
  explorer: 'tool explorer',
  cli: 'CLI',
  generate: 'generate and run',
  test: 'test',
};

/** The failures that are not a Python exception, in words. */
const FAILURE_LABELS: Record<Diagnostics['error_type'], string> = {
  SyntaxError: 'SyntaxError',
  RuntimeError: 'RuntimeError',
  TIMEOUT: 'Timed out',
  CANCELLED: 'Cancelled',
  POLICY_VIOLATION: 'Refused by policy',
  BACKEND_CRASHED: 'Interpreter crashed',
  INVALID_ARGUMENT: 'Not run',
};

export function backendLabel(kind: string): string {
  return BACKEND_LABELS[kind as BackendKind] ?? kind;
}

/** Where a run came from; a run from a tool's form is named after the tool ("run_python form"). */
export function originLabel(run: Pick<RunInfo, 'origin' | 'tool'>): string {
  if (run.origin === 'explorer' && run.tool) return `${run.tool} form`;
  return ORIGIN_LABELS[run.origin] ?? run.origin;
}

/** A failed run's name: the Python exception, else what kind of failure. */
export function failureLabel(diagnostics: Diagnostics | null | undefined): string {
  if (!diagnostics) return 'error';
  return diagnostics.exception ?? FAILURE_LABELS[diagnostics.error_type] ?? diagnostics.error_type;
}

/** running, ok, or the failure's name. */
export function statusLabel(result: RunResult | undefined): string {
  if (!result) return 'running';
  return result.success ? 'ok' : failureLabel(result.diagnostics);
}
