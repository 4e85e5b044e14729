// What went wrong with a run, in the terms of the MCP contract (RunResult.diagnostics).
import type { SettingNames } from '../config';
import type { BackendKind, Diagnostics } from '../types';
import type { BackendOutcome } from '../backends/contract';
import type { ActiveRun } from '../sessions/session';

/** Null when nothing went wrong. */
export function diagnose(
  outcome: BackendOutcome | undefined,
  active: ActiveRun,
  timeoutS: number,
  timeoutSource: string | undefined,
  startError?: string,
  hadState = true,
): Diagnostics | null {
  if (startError !== undefined || !outcome) {
    // An interpreter that never started held nothing to lose.
    return {
      error_type: 'BACKEND_CRASHED',
      message: `the interpreter could not start: ${startError ?? 'unknown error'}`,
      session_reset: hadState,
    };
  }
  const stoppedByUs =
    active.interruptedBy === 'timeout' || active.interruptedBy === 'cancel' || active.interruptedBy === 'user';
  if (stoppedByUs && (outcome.status === 'interrupted' || outcome.status === 'crashed')) {
    const reset = active.restarted || outcome.status === 'crashed';
    const resetNote = !reset
      ? ' The session state is kept.'
      : outcome.status === 'crashed' && outcome.restartFailed !== undefined
        ? ` The interpreter did not stop in time and could not be restarted (${outcome.restartFailed}): the session state is gone, and a fresh interpreter starts with the next run.`
        : outcome.status === 'crashed' && !active.restarted
          ? // It ended by itself before a restart was due (the server lost it): that, not a restart, is what happened.
            ` Meanwhile the interpreter stopped: ${outcome.message}. The session state was reset.`
          : ' The interpreter did not stop in time and was restarted: the session state was reset.';
    if (active.interruptedBy === 'timeout') {
      const source = timeoutSource ? ` (${timeoutSource})` : '';
      return {
        error_type: 'TIMEOUT',
        message: `the run exceeded its time limit of ${timeoutS} s${source} and was stopped.${resetNote}`,
        timeout_s: timeoutS,
        session_reset: reset,
      };
    }
    return { error_type: 'CANCELLED', message: `the run was cancelled.${resetNote}`, session_reset: reset };
  }
  switch (outcome.status) {
    case 'ok':
      return null;
    case 'interrupted':
      return {
        error_type: 'RuntimeError',
        exception: 'KeyboardInterrupt',
        message: 'KeyboardInterrupt',
        session_reset: false,
      };
    case 'crashed':
      return {
        error_type: 'BACKEND_CRASHED',
        message: `the interpreter stopped unexpectedly: ${outcome.message}. A fresh one starts with the next run: the session state was reset.`,
        session_reset: true,
      };
    case 'error':
      return {
        error_type: outcome.errorType,
        exception: outcome.excName,
        message: outcome.message,
        traceback: outcome.traceback,
        ...(outcome.sessionReset ? { session_reset: true } : {}),
      };
  }
}

/** What usually keeps a backend from starting, for the message of a start past its bound. */
export function startHint(kind: BackendKind, names: SettingNames): string {
  if (kind === 'jupyter')
    return `is the Jupyter Server reachable and answering?${names.jupyterUrl ? ` ${names.jupyterUrl}` : ''}`;
  if (kind === 'python') return 'does the interpreter start from a terminal?';
  return 'Pyodide loads from the extension; a busy or slow machine may need a moment more';
}
