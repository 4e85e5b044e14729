// An assertion message for a run's result, shared by the state-loss and scratch-folder suites (test/sandbox/).
import type { RunResult } from '../../src/engine/types';

/** What a run printed, its diagnostics and why its session was reset, if it was. */
export function explain(result: RunResult): string {
  return JSON.stringify({
    stdout: result.stdout,
    stderr: result.stderr,
    diagnostics: result.diagnostics,
    reset: result.reset_reason,
  });
}
