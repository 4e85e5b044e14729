import type { Logger } from '../../types';
import type { BackendFactory } from '../contract';
import type { ContainmentChoice } from './containment';
import { PythonSession } from './session';
import { SessionBounds } from './sessionBounds';

export interface PythonBackendConfig {
  /** Interpreter to run; else $CODE_MODE_PYTHON, else python3/python on PATH (see resolvePythonInterpreter). */
  pythonPath?: string;
  /** Where the backend logs; defaults to the logger each session is created with. */
  log?: Logger;
  /**
   * Bound on each session's memory in MB, 0 for none (Linux only: see processes.py). Each process's private
   * data (RLIMIT_DATA: beyond it an allocation raises MemoryError in the user's code and the session lives
   * on), and all the session's processes together, shared memory included (the reaper ends the largest).
   */
  memoryLimitMb?: number;
  /** What holds the session's processes together (containment.ts); the best this machine has by default. */
  containment?: ContainmentChoice;
}

/**
 * The 4 GiB a Pyodide (wasm32) session can address at most: a program that fits one backend fits the other,
 * and one runaway session cannot push a small machine (2 cores, 8 GB) into the out-of-memory killer.
 */
export const DEFAULT_MEMORY_LIMIT_MB = 4096;

/** The workspace-Python backend: one persistent driver process per session, started on first use. */
export function createPythonBackend(config: PythonBackendConfig = {}): BackendFactory {
  const memoryLimitMb = config.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB;
  if (!Number.isInteger(memoryLimitMb) || memoryLimitMb < 0) {
    throw new Error(`memoryLimitMb must be a whole number of MB (0 for no limit), not ${memoryLimitMb}`);
  }
  const bounds = new SessionBounds(config.containment ?? 'auto', memoryLimitMb);
  return {
    kind: 'python',
    create: (options) => new PythonSession(config, bounds, options),
    describe: async () => bounds.report(),
  };
}
