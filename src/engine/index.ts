import * as os from 'node:os';
import * as path from 'node:path';
import type { EngineConfig } from './config';
import { Engine } from './engine';
import { createPyodideBackend } from './pyodide/backend';
import { createPythonBackend } from './python/backend';
import type { NetworkAccess } from './sandbox/index';
import type { Logger } from './types';

export interface EngineSetup {
  config?: Partial<EngineConfig>;
  /** Workspace-Python interpreter; else CODE_MODE_PYTHON, else python3/python on PATH. */
  pythonPath?: string;
  /** Data memory cap of each workspace-Python session in MB (0: none; default 4096). */
  pythonMemoryLimitMb?: number;
  /** Where caches (the Pyodide snapshot) and stores live. */
  storageDir?: string;
  /** The Pyodide sandbox: heap cap and network access (see PyodideSettings). */
  pyodide?: PyodideSettings;
  /** Folders whose files a run may show by printing their paths; `<storageDir>/scratch` is always one. */
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
  workspaceWritable?: boolean;
}

/** The Pyodide backend with its snapshot cache under `storageDir` (the engine's and the extension's swap use it). */
export function pyodideBackendFor(storageDir: string, settings: PyodideSettings, log: Logger | undefined) {
  return createPyodideBackend({ cacheDir: path.join(storageDir, 'pyodide-cache'), ...settings, log });
}

/** An engine with both backends, as the CLI and the extension use it. */
export function createEngine(setup: EngineSetup = {}): Engine {
  const storageDir = setup.storageDir ?? defaultStorageDir();
  return new Engine({
    config: setup.config,
    log: setup.log,
    workspaceRoots: setup.workspaceRoots,
    scratchDir: path.join(storageDir, 'scratch'),
    backends: [
      pyodideBackendFor(storageDir, setup.pyodide ?? {}, setup.log),
      createPythonBackend({ pythonPath: setup.pythonPath, memoryLimitMb: setup.pythonMemoryLimitMb, log: setup.log }),
    ],
  });
}
