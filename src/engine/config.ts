import { defaultPolicy, type PolicyConfig } from './policy';
import { BACKEND_KINDS, type BackendKind } from './types';

export interface EngineConfig {
  defaultBackend: BackendKind;
  /** Seconds a run may take unless the caller says otherwise. */
  timeoutS: number;
  /** Per stream (stdout, stderr), head and tail kept. */
  outputCapBytes: number;
  /** After an interrupt, how long the code has to stop before its interpreter is killed and respawned. */
  interruptGraceMs: number;
  /**
   * Seconds a backend may take to start (an interpreter, Pyodide, a Jupyter Server and its kernel) before the run
   * that waits for it fails with the reason; the session then starts afresh on its next run.
   */
  startTimeoutS: number;
  /** On ModuleNotFoundError in Pyodide, install the package once and re-run. */
  autoInstall: boolean;
  /** A folder of .whl files that installs by name (and auto-install) look in first; works offline. */
  wheelhouse?: string;
  /** Live sessions per backend; past it the least recently used idle one is ended. */
  maxSessions: number;
  /** How long and how often a run may wait on a person (input(), a tool call's approval): see runs/questions.ts. */
  questions: QuestionLimits;
  policy: PolicyConfig;
  /** How the front end names its settings in the engine's messages. */
  settingNames: SettingNames;
}

export interface QuestionLimits {
  /** A question unanswered this long is withdrawn (input() raises EOFError, the tool call is refused). */
  questionWaitS: number;
  /** All of one run's questions together wait at most this long; later ones are not asked. */
  runWaitS: number;
  /** Questions one run may ask; later ones are not asked. */
  maxPerRun: number;
}

/**
 * How a person changes each setting the engine's messages mention, in the front end's words ("setting
 * codeMode.maxSessions", "flag --max-sessions"). The engine knows no front end: a name left out is not mentioned.
 */
export interface SettingNames {
  /** The default time limit of a run (`timeoutS`). */
  timeout?: string;
  /** The wheelhouse folder installs look in (`wheelhouse`). */
  wheelhouse?: string;
  /** Live sessions per backend (`maxSessions`). */
  maxSessions?: string;
  /** The Jupyter Server the jupyter backend runs on. */
  jupyterUrl?: string;
  /** The kernel spec the jupyter backend starts. */
  jupyterKernel?: string;
  /** Network access of the Pyodide sandbox. */
  pyodideNetwork?: string;
}

export const defaultEngineConfig: EngineConfig = {
  defaultBackend: 'pyodide',
  timeoutS: 30,
  outputCapBytes: 64 * 1024,
  interruptGraceMs: 1500,
  // Pyodide's first start (no snapshot yet) is the slowest start by far (docs/performance.md has the figures), and
  // a slow disk or a busy machine may take several times as long.
  startTimeoutS: 120,
  autoInstall: true,
  maxSessions: 8,
  // Plenty for a person at the keyboard; a run's clock stands still while it waits, so none of it may be endless.
  questions: { questionWaitS: 600, runWaitS: 1800, maxPerRun: 100 },
  policy: defaultPolicy,
  settingNames: {},
};

/** ` (name)` when the front end named the setting, else nothing: for the end of a sentence. */
export function settingNote(name: string | undefined): string {
  return name ? ` (${name})` : '';
}

export const MAX_TIMEOUT_S = 3600;

/** Session names appear in logs, file names and the UI: keep them short and plain. */
export const SESSION_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function isBackendKind(value: unknown): value is BackendKind {
  return typeof value === 'string' && (BACKEND_KINDS as readonly string[]).includes(value);
}

/** Why `timeoutS` is unusable, or undefined when it is fine; `name` is what the caller set it with. */
export function timeoutProblem(timeoutS: unknown, name = 'timeout_s'): string | undefined {
  if (typeof timeoutS !== 'number' || !Number.isFinite(timeoutS) || timeoutS <= 0 || timeoutS > MAX_TIMEOUT_S) {
    return `${name} must be a number of seconds greater than 0 and at most ${MAX_TIMEOUT_S}`;
  }
  return undefined;
}
