import { defaultPolicy, type PolicyConfig } from './policy';
import { BACKEND_KINDS, type BackendKind } from './types';

export interface EngineConfig {
  defaultBackend: BackendKind;
  /** Seconds a run may take unless the caller says otherwise. */
  timeoutS: number;
  /** How a person changes `timeoutS` here, named when a run is stopped for it. */
  timeoutSource: string;
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
  /** How a person sets `wheelhouse` here, named when an install needs one. */
  wheelhouseSetting?: string;
  /** Live sessions per backend; past it the least recently used idle one is ended. */
  maxSessions: number;
  policy: PolicyConfig;
}

export const defaultEngineConfig: EngineConfig = {
  defaultBackend: 'pyodide',
  timeoutS: 30,
  timeoutSource: 'the default time limit',
  outputCapBytes: 64 * 1024,
  interruptGraceMs: 1500,
  // Measured here: workspace Python 0.1 s, a local Jupyter Server and kernel 1.7 s, Pyodide's first start (no
  // snapshot yet) about 10 s; a slow disk or a busy machine may take several times as long.
  startTimeoutS: 120,
  autoInstall: true,
  maxSessions: 8,
  policy: defaultPolicy,
};

export const MAX_TIMEOUT_S = 3600;

/** Session names appear in logs, file names and the UI: keep them short and plain. */
export const SESSION_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function isBackendKind(value: unknown): value is BackendKind {
  return typeof value === 'string' && (BACKEND_KINDS as readonly string[]).includes(value);
}

/** Why `timeoutS` is unusable, or undefined when it is fine. */
export function timeoutProblem(timeoutS: unknown): string | undefined {
  if (typeof timeoutS !== 'number' || !Number.isFinite(timeoutS) || timeoutS <= 0 || timeoutS > MAX_TIMEOUT_S) {
    return `timeout_s must be a number of seconds greater than 0 and at most ${MAX_TIMEOUT_S}`;
  }
  return undefined;
}
