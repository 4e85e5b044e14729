import type { BackendKind, InputHandler, RunEvent, RunOrigin, ScriptRun, ToolApprovals } from '../types';

/** One run a front end asks for. */
export interface RunOptions {
  code: string;
  backend?: BackendKind;
  session?: string;
  /** Whose sessions: a front door serving several clients keeps each one's apart (see endScope). Default: shared. */
  scope?: string;
  /** Seconds before the run is stopped; 0 for no limit (a person's own runs). Default: the engine's. */
  timeoutS?: number;
  /** What set `timeoutS` (e.g. "setting codeMode.run.timeoutSeconds"), named when the run is stopped for it. */
  timeoutSource?: string;
  /** The code is a file's, or lines of one: it runs as that script (working folder, __file__, sys.path). */
  script?: ScriptRun;
  /**
   * Show the value of the code's last expression, as a notebook cell or the REPL does (an `execute_result` item in
   * `outputs`). Default true; false runs the code as `python file.py` would, showing only what it prints (Run File).
   */
  echoLastExpression?: boolean;
  /** Answers input(), sys.stdin and getpass; without it they raise EOFError saying nobody can answer. */
  onInput?: InputHandler;
  /** Who answers questions about tool calls the code makes; without it a call that needs a yes is refused. */
  toolApprovals?: ToolApprovals;
  /** Start from a fresh interpreter. */
  reset?: boolean;
  /** Aborting interrupts the run (or drops it while queued); the result says CANCELLED. */
  signal?: AbortSignal;
  origin?: RunOrigin;
  /** The MCP tool that started the run, named in the run's start event. */
  tool?: string;
  /** Events of this run only, in addition to the engine-wide listeners. */
  onEvent?: (event: RunEvent) => void;
}
