import { findOnPath } from '../../executables';

/** Environment variable naming the interpreter when no explicit path is configured. */
export const PYTHON_ENV_VAR = 'CODE_MODE_PYTHON';

/**
 * The interpreter the workspace-Python backend runs: `explicit` (a setting or the Python extension's
 * choice), else $CODE_MODE_PYTHON, else `python3` or `python` on PATH. PATH is searched here rather than by
 * a shell, so no shell ever sees a path or a command line.
 */
export function resolvePythonInterpreter(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit?.trim()) return explicit;
  const fromEnv = env[PYTHON_ENV_VAR];
  if (fromEnv?.trim()) return fromEnv;
  for (const name of ['python3', 'python']) {
    const found = findOnPath(name, env);
    if (found) return found;
  }
  throw new Error(`no Python interpreter found: set ${PYTHON_ENV_VAR} or the interpreter path, or put python3 on PATH`);
}
