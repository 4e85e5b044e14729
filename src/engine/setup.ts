// How the CLI and the extension make an engine: its backends (jupyter when a server is set), their caches under one
// storage folder, and each session's scratch folder in it.
import * as os from 'node:os';
import * as path from 'node:path';
import type { EngineConfig } from './config';
import { Engine } from './engine';
import { createJupyterBackend } from './backends/jupyter/backend';
import { createPyodideBackend } from './backends/pyodide/backend';
import { createPythonBackend } from './backends/python/backend';
import type { NetworkAccess, SandboxChoice } from './sandbox/index';
import type { Logger } from './types';

export interface EngineSetup {
  config?: Partial<EngineConfig>;
  /** Workspace-Python interpreter; else CODE_MODE_PYTHON, else python3/python on PATH. */
  pythonPath?: string;
  /** Memory cap of each workspace-Python session in MB (0: none; default 4096); see PythonBackendConfig.memoryLimitMb. */
  pythonMemoryLimitMb?: number;
  /** Where caches (the Pyodide snapshot) and stores live. */
  storageDir?: string;
  /** The Pyodide sandbox: heap cap and network access (see PyodideSettings). */
  pyodide?: PyodideSettings;
  /** The Jupyter backend's server; without it there is no jupyter backend. */
  jupyter?: JupyterSettings;
  /** Folders whose files a run may show by printing their paths; so may its session's folder under `<storageDir>/scratch`. */
  workspaceRoots?: string[];
  log?: Logger;
}

/** The per-user folder for caches and stores when the caller names none (the CLI). */
export function defaultStorageDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'code-mode-python');
}

/** What a person may set about the Pyodide backend (CLI flags, VS Code settings). */
export interface PyodideSettings {
  heapLimitMb?: number;
  network?: NetworkAccess;
  /** What confines Pyodide: auto (bubblewrap where it works, else Deno), bubblewrap or deno. */
  sandbox?: SandboxChoice;
  workspaceWritable?: boolean;
  /** Files the host reads as configuration outside the protected names (a --servers file): never writable from Pyodide. */
  protectedPaths?: string[];
}

/** Where the jupyter backend runs code (CLI flags, VS Code settings). */
export interface JupyterSettings {
  /** A Jupyter Server's URL, or 'local' for one started from the workspace interpreter on first use. */
  url: string;
  token?: string;
  kernelName?: string;
  /** The interpreter a local server runs; the workspace interpreter when absent. */
  python?: string;
}

/** The word that asks for a local Jupyter Server instead of a URL. */
export const LOCAL_JUPYTER = 'local';

/** The jupyter backend for `settings`; a local server runs `python` (the workspace interpreter) in `rootDir`. */
export function jupyterBackendFor(
  settings: JupyterSettings,
  python: string | undefined,
  rootDir: string | undefined,
  log: Logger | undefined,
) {
  const local = settings.url === LOCAL_JUPYTER;
  return createJupyterBackend({
    ...(local
      ? { localPython: settings.python ?? python, localRootDir: rootDir }
      : { url: settings.url, token: settings.token }),
    kernelName: settings.kernelName,
    log,
  });
}

/** The Pyodide backend with its snapshot cache under `storageDir` (the engine's and the extension's swap use it). */
export function pyodideBackendFor(storageDir: string, settings: PyodideSettings, log: Logger | undefined) {
  return createPyodideBackend({ cacheDir: path.join(storageDir, 'pyodide-cache'), ...settings, log });
}

/** An engine with its backends (jupyter when a server is set), as the CLI and the extension use it. */
export function createEngine(setup: EngineSetup = {}): Engine {
  const storageDir = setup.storageDir ?? defaultStorageDir();
  return new Engine({
    config: setup.config,
    log: setup.log,
    workspaceRoots: setup.workspaceRoots,
    // Each session gets a folder of its own in it (scratch.ts).
    scratchDir: path.join(storageDir, 'scratch'),
    // Scratch folders live in the storage folder; the workspace is writable from Pyodide when a setting says so.
    codeWritableFolders: [storageDir, ...(setup.workspaceRoots ?? [])],
    backends: [
      pyodideBackendFor(storageDir, setup.pyodide ?? {}, setup.log),
      createPythonBackend({ pythonPath: setup.pythonPath, memoryLimitMb: setup.pythonMemoryLimitMb, log: setup.log }),
      ...(setup.jupyter
        ? [jupyterBackendFor(setup.jupyter, setup.pythonPath, setup.workspaceRoots?.[0], setup.log)]
        : []),
    ],
  });
}
