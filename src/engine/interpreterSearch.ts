// The Python interpreters on this machine a person may choose for the workspace-Python backend: those on PATH,
// pyenv's versions, virtual environments in the workspace folders, and conda's environments. Each is asked its
// version and real executable (a pyenv shim says which Python it runs), and two ways to one interpreter are shown
// once. Found without a shell: each candidate is a path, and asking it is one process with fixed arguments.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolvePythonInterpreter } from './backends/python/interpreter';
import { findOnPath, isExecutableFile } from './executables';

export type InterpreterKind = 'path' | 'pyenv' | 'venv' | 'conda';

export interface FoundInterpreter {
  /** The path to run (a venv's or pyenv's own, a PATH entry as found). */
  path: string;
  /** The executable it runs, links and shims resolved (sys.executable, realpath). */
  executable: string;
  version: string;
  kind: InterpreterKind;
  /** Where it was found, in words: "on PATH", "pyenv 3.12.4", "venv .venv in app", "conda env data". */
  where: string;
}

export interface InterpreterSearch {
  workspaceRoots: readonly string[];
  env?: NodeJS.ProcessEnv;
  home?: string;
}

/** How long one interpreter may take to say its version before it is left out. */
const ASK_TIMEOUT_MS = 10_000;
const BIN = process.platform === 'win32' ? 'Scripts' : 'bin';
const EXE = process.platform === 'win32' ? 'python.exe' : 'python';

export async function findInterpreters(search: InterpreterSearch): Promise<FoundInterpreter[]> {
  const env = search.env ?? process.env;
  const home = search.home ?? os.homedir();
  const candidates: Omit<FoundInterpreter, 'executable' | 'version'>[] = [];
  // Every PATH folder's, not only the first: the system's python3 behind a pyenv shim is a choice too.
  const first = new Map(['python3', 'python'].map((name) => [name, findOnPath(name, env)]));
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean))
    for (const name of ['python3', 'python']) {
      const candidate = path.join(dir, name);
      const where = first.get(name) === candidate ? `${name} on PATH` : `${name} in ${dir}`;
      candidates.push({ path: candidate, kind: 'path', where });
    }
  const pyenvRoot = env.PYENV_ROOT || path.join(home, '.pyenv');
  for (const version of subfolders(path.join(pyenvRoot, 'versions')))
    candidates.push({
      path: pythonIn(path.join(pyenvRoot, 'versions', version)),
      kind: 'pyenv',
      where: `pyenv ${version}`,
    });
  for (const root of search.workspaceRoots)
    for (const folder of [root, ...subfolders(root).map((name) => path.join(root, name))]) {
      for (const name of subfolders(folder)) {
        const prefix = path.join(folder, name);
        if (fs.existsSync(path.join(prefix, 'pyvenv.cfg')))
          candidates.push({
            path: pythonIn(prefix),
            kind: 'venv',
            where: `venv ${path.relative(root, prefix)} in ${path.basename(root)}`,
          });
      }
    }
  for (const base of condaRoots(env, home)) {
    candidates.push({ path: pythonIn(base), kind: 'conda', where: `conda base (${base})` });
    for (const name of subfolders(path.join(base, 'envs')))
      candidates.push({ path: pythonIn(path.join(base, 'envs', name)), kind: 'conda', where: `conda env ${name}` });
  }
  const asked = await Promise.all(
    candidates
      .filter((candidate) => isExecutableFile(candidate.path))
      .map(async (candidate) => {
        const answer = await ask(candidate.path);
        return answer && { ...candidate, ...answer };
      }),
  );
  // One interpreter found two ways (python3 and python on PATH, a pyenv shim and its version) is listed once, the
  // first way; a venv is its own (its packages), though it runs its base's executable.
  const seen = new Set<string>();
  return asked
    .filter((found): found is FoundInterpreter & { prefix: string } => {
      if (!found) return false;
      const key = `${found.prefix}\0${found.executable}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .map(({ prefix: _prefix, ...found }) => found);
}

/** The interpreter a choice of none runs ($CODE_MODE_PYTHON, else python3 or python on PATH), described. */
export async function describeDefaultInterpreter(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ path: string; executable: string; version: string } | undefined> {
  let candidate: string;
  try {
    candidate = resolvePythonInterpreter(undefined, env);
  } catch {
    return undefined;
  }
  const answer = await ask(candidate);
  return answer && { path: candidate, executable: answer.executable, version: answer.version };
}

/** The interpreter's version, real executable and prefix, or undefined if it does not answer as Python. */
function ask(interpreter: string): Promise<{ executable: string; version: string; prefix: string } | undefined> {
  return new Promise((resolve) => {
    execFile(
      interpreter,
      ['-I', '-c', 'import sys, platform; print(platform.python_version()); print(sys.executable); print(sys.prefix)'],
      { timeout: ASK_TIMEOUT_MS, encoding: 'utf8', windowsHide: true },
      (error, stdout) => {
        const [version, executable, prefix] = stdout
          .trim()
          .split('\n')
          .map((line) => line.trim());
        if (error || !version || !/^\d+\.\d+/.test(version) || !executable || !prefix) return resolve(undefined);
        resolve({ version, executable: realPath(executable), prefix: realPath(prefix) });
      },
    );
  });
}

function condaRoots(env: NodeJS.ProcessEnv, home: string): string[] {
  const roots = [
    env.CONDA_PREFIX && !env.CONDA_PREFIX.includes(`${path.sep}envs${path.sep}`) ? env.CONDA_PREFIX : undefined,
    ...['miniconda3', 'anaconda3', 'miniforge3', 'mambaforge'].map((name) => path.join(home, name)),
  ].filter((root): root is string => !!root && fs.existsSync(path.join(root, 'conda-meta')));
  return [...new Set(roots)];
}

function pythonIn(prefix: string): string {
  return process.platform === 'win32' && !fs.existsSync(path.join(prefix, BIN))
    ? path.join(prefix, EXE)
    : path.join(prefix, BIN, EXE);
}

function subfolders(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.git') && entry.name !== 'node_modules')
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}
