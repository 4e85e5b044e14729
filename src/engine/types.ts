// The contracts the engine and its front ends share (what a backend implements is in backends/contract.ts). No `vscode` import anywhere under engine/.
//
// Names are camelCase but in the results that leave as they are, RunResult (with Diagnostics) and PackagesResult:
// those are snake_case because they are the wire's shape. They are run_python's and packages' structuredContent
// (docs/tools.md), what the MCP App reads of a call, and what history.json keeps, so they are made once in that
// shape: a run's result in result.ts (shapeResult) from camelCase parts, its diagnostics from a backend's
// camelCase outcome in runs/diagnose.ts.

export type BackendKind = 'pyodide' | 'python' | 'jupyter';
export const BACKEND_KINDS: readonly BackendKind[] = ['pyodide', 'python', 'jupyter'];

export type ErrorType =
  | 'SyntaxError'
  | 'RuntimeError'
  | 'TIMEOUT'
  | 'CANCELLED'
  | 'POLICY_VIOLATION'
  | 'BACKEND_CRASHED'
  | 'INVALID_ARGUMENT';

export interface PolicyViolation {
  rule: string;
  detail: string;
}

export interface Diagnostics {
  error_type: ErrorType;
  /** The Python exception's class (ZeroDivisionError, EOFError), for SyntaxError and RuntimeError. */
  exception?: string;
  message: string;
  traceback?: string;
  timeout_s?: number;
  truncated?: boolean;
  session_reset?: boolean;
  policy?: PolicyViolation;
  /** Fixes that worked before for failures like this one (the learnings store). */
  hints?: string[];
  /** What auto-install did about a ModuleNotFoundError, when it could not help. */
  auto_install?: string;
}

/** Something the code showed besides text: an image, HTML, a file's text. `data` is base64 for binary mimes. */
export interface Display {
  mime: string;
  data: string;
  title?: string;
}

export type StreamName = 'stdout' | 'stderr';

/**
 * One piece of a run's output, in the order the program made them: text of one stream (consecutive text of the
 * same stream joined), the display at `index` of the result's `displays`, or the value of the code's last
 * expression (Jupyter's execute_result), after what the code wrote: its `text` (the repr, as Python's REPL shows
 * it), and the display at `index` when the value has a richer form (an HTML table, an image).
 */
export type OutputItem =
  | { type: 'stream'; name: StreamName; text: string }
  | { type: 'display'; index: number }
  | { type: 'execute_result'; text: string; index?: number };

/** Displays of a run that are no longer kept for it (to bound memory), and why; shown in their place. */
export interface DroppedDisplays {
  count: number;
  /** Their data, as UTF-8; absent when not known (a run loaded from disk). */
  bytes?: number;
  /** Why, for a person: e.g. "the history keeps the displays of recent runs only (64 MB in all)". */
  reason: string;
}

/** What every run returns, whatever its backend and front end (run_python's structured content; docs/tools.md names its fields). */
export interface RunResult {
  success: boolean;
  stdout: string;
  stderr: string;
  duration_ms: number;
  diagnostics: Diagnostics | null;
  backend: BackendKind;
  session: string;
  run_id: string;
  truncated?: boolean;
  displays?: Display[];
  /**
   * stdout, stderr and displays interleaved as the program made them (as a notebook shows them); absent when the
   * run made no output. Text from outside the interpreter's own streams (a subprocess writing to the inherited
   * pipe) is placed where it arrived.
   */
  outputs?: OutputItem[];
  /** Packages installed because the code failed with ModuleNotFoundError and was then run again, as `name==version`. */
  auto_installed?: string[];
  /** The session's interpreter was replaced before or during this run: globals, imports and installs are gone. */
  session_reset?: true;
  /** Why it was replaced (killed between runs, evicted, another interpreter selected, asked for). */
  reset_reason?: string;
  /** The tools its code called through code mode, in order, refused ones included (absent in runs saved before). */
  tool_calls?: ToolCallRecord[];
}

/**
 * Why a tool call from code was made or not: `read-only` (the tool says so), `rule` (autoApprove), `asked-allowed`
 * (a person said yes), `session-allowed` (a person allowed the tool for the session before), `policy-allow` (no
 * question by policy: approval "allow", a person's own run, or a VS Code tool that VS Code confirms itself),
 * `denied` (a person said no, the policy refused it, or nobody could be asked).
 */
export type ToolApproval = 'read-only' | 'rule' | 'asked-allowed' | 'session-allowed' | 'denied' | 'policy-allow';

/** One tool call of a run, for the audit: not its arguments. `ms` is the call's own time (0 when refused). */
export interface ToolCallRecord {
  server: string;
  tool: string;
  ok: boolean;
  ms: number;
  approval: ToolApproval;
}

/** One package of an install or a check. */
export interface PackageStatus {
  /** Distribution name. */
  name: string;
  /** The entry as it was given. */
  requested: string;
  /** Installed (for a check: installed in a version that meets the request). */
  installed: boolean;
  version?: string;
  /** Where an install came from. */
  source?: 'file' | 'url' | 'wheelhouse' | 'pyodide' | 'micropip' | 'pip';
  error?: string;
}

/** What a backend reports for an install or a check. */
export interface PackageReport {
  packages: PackageStatus[];
  /** One line for people and models, e.g. what to do when offline. */
  message: string;
}

export interface InstallOptions {
  /** A folder of .whl files that installs by name look in before any index. */
  wheelhouse?: string;
  /** How a person sets `wheelhouse` where they are, named in advice (SettingNames.wheelhouse). */
  wheelhouseSetting?: string;
}

/** The result of the packages tool (install or check). */
export interface PackagesResult extends PackageReport {
  /** Every package is (now) installed. */
  success: boolean;
  action: 'install' | 'check';
  backend: BackendKind;
  session: string;
  duration_ms: number;
}

export type RunOrigin = 'mcp' | 'command' | 'explorer' | 'cli' | 'generate' | 'test';

/**
 * A person's own runs (a command, the tool explorer's forms, Re-run): they show what the code displays. The
 * others are agents' (or a model's, for `generate`), whose printed file paths are shown too (displayFiles.ts).
 */
export function isPersonOrigin(origin: RunOrigin): boolean {
  return origin === 'command' || origin === 'explorer';
}

/** What is known about a run when it starts. */
export interface RunInfo {
  runId: string;
  session: string;
  backend: BackendKind;
  code: string;
  origin: RunOrigin;
  /** Epoch milliseconds. */
  startedAt: number;
  /** Where the code comes from, when it is a file's (or lines of one). */
  location?: { file: string; line: number };
  /** The MCP tool that started the run (run_python), when a tool did. */
  tool?: string;
  /** A queued run: what it waits for (the file, or the code's first line, of the work queued before it). */
  waitingFor?: string;
}

export type RunEvent =
  /** A run that waits behind other work on its session; `started` follows when its turn comes (or `finished`, cancelled). */
  | ({ type: 'queued' } & RunInfo & { waitingFor: string })
  | ({ type: 'started' } & RunInfo)
  | { type: 'stdout' | 'stderr'; runId: string; text: string }
  | { type: 'display'; runId: string; display: Display }
  | { type: 'finished'; runId: string; result: RunResult };

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** What input(), sys.stdin or getpass asks the person behind a run. */
export interface InputRequest {
  prompt: string;
  /** The answer must not be shown (getpass). */
  password: boolean;
}

/**
 * Asks whoever started a run (an input box, an MCP elicitation). Resolves to the answer, or undefined when
 * the question was dismissed (Python sees end of file); rejects with why nobody can answer. `signal` aborts
 * when the run is stopped meanwhile.
 */
export type InputHandler = (request: InputRequest, signal: AbortSignal) => Promise<string | undefined>;

/** A tool call from a run's code that waits for a person's yes. */
export interface ToolApprovalRequest {
  server: string;
  tool: string;
  args: Record<string, unknown>;
  /** Argument names the tool's input schema does not declare: the question marks them. */
  undeclared: string[];
  run: RunLabel;
}

/** The run a question comes from, as a person knows it. */
export interface RunLabel {
  runId: string;
  origin: RunOrigin;
  session: string;
  /** The file (and first line) the code is from, when it is a file's. */
  location?: { file: string; line: number };
}

/** Allow once, allow this tool for the rest of the session (window, MCP session), or deny. */
export type ToolApprovalAnswer = 'once' | 'session' | 'deny';

/**
 * Asks a person whether a tool call may go ahead (a modal in VS Code, an MCP elicitation). A dismissed question is
 * 'deny'; rejects when nobody can answer. `signal` aborts when the run is stopped meanwhile.
 */
export type ToolApprovalHandler = (request: ToolApprovalRequest, signal: AbortSignal) => Promise<ToolApprovalAnswer>;

/** Who answers a run's tool-call questions, and which tools they allowed for the session. */
export interface ToolApprovals {
  ask?: ToolApprovalHandler;
  /** "server.tool" keys answered "Allow this tool for this session", kept by the front end for its session. */
  sessionAllowed: Set<string>;
}

/** What a host call knows of the run whose code made it. */
export interface HostCallRun extends RunLabel {
  /** Asks with the run's time limit paused; absent when nobody can be asked. A stopped run withdraws the question. */
  askToolApproval?: (request: ToolApprovalRequest) => Promise<ToolApprovalAnswer>;
  sessionAllowed: Set<string>;
  /** Adds a tool call to the run's audit (RunResult.tool_calls), as it reaches the tool; later changes to it count. */
  recordToolCall(call: ToolCallRecord): void;
  /** Set once the run's result is made: its code reaches no tool after that. */
  over?: boolean;
}

/**
 * A call from Python into the host (the code-mode tool bridge builds on it), with the run it comes from when one is
 * running. Rejections become Python exceptions.
 */
export type HostCallHandler = (method: string, params: unknown, run?: HostCallRun) => Promise<unknown>;

// ---- what a run's code and its backend are, as the front ends see them ---------------------------

/** Code that is a file's, or lines of one: it runs as `python file.py` would run it (see cell.py). */
export interface ScriptRun {
  /** The file's real path: tracebacks name it, `__file__` is it, its folder leads `sys.path`. */
  path: string;
  /** The file's line number of the code's first line (1 for a whole file). */
  firstLine: number;
  /** The working folder of the run (the file's folder, or the workspace's). */
  cwd?: string;
}

export type BackendState = 'not-loaded' | 'loading' | 'ready' | 'busy' | 'dead';

export interface BackendInfo {
  kind: BackendKind;
  state: BackendState;
  pythonVersion?: string;
  /** Interpreter path (python) or Pyodide version (pyodide). */
  executable?: string;
  pyodideVersion?: string;
  pid?: number;
  /** The Jupyter kernel serving the session, and its server. */
  kernel?: { id: string; name: string; server: string };
}
