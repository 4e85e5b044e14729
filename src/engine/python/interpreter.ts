import * as fs from 'node:fs';
import * as path from 'node:path';

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

/** The first executable file named `command` in a PATH directory, trying PATHEXT's extensions on Windows. */
export function findOnPath(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const searchPath = env.PATH ?? env.Path ?? '';
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';') : [''];
  for (const dir of searchPath.split(path.delimiter)) {
    // An empty entry would mean the working directory; an interpreter is never taken from there implicitly.
    if (!dir) continue;
    for (const extension of extensions) {
      const candidate = path.join(dir, command + extension);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
