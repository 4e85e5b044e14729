// The engine's backends as VS Code configures them: the one module where backend settings are read and handed
// to the engine. A new backend is added here — its settings in BackendSettings and readBackendSettings, what the
// engine is created with in engineSetup, which setting changes re-create its factory in factorySwaps (or take it
// away in backendRemovals) — and in the backend pickers (Choose Backend in features/runCommands.ts, the status
// bar's names).
import * as path from 'node:path';
import type * as vscode from 'vscode';
import {
  type EngineSetup,
  type JupyterSettings,
  type PyodideSettings,
  jupyterBackendFor,
  LOCAL_JUPYTER,
  pyodideBackendFor,
  createPythonBackend,
  type BackendKind,
  type Logger,
  type BackendFactory,
  isSandboxChoice,
  type SandboxChoice,
} from '../engine/index';
import type { ExtensionSettings } from './settings';

export interface BackendSettings {
  python: {
    /** Memory cap of each workspace-Python session in MB (0: none); see PythonBackendConfig.memoryLimitMb. */
    memoryLimitMb: number;
  };
  pyodide: Required<PyodideSettings>;
  jupyter: {
    /** A Jupyter Server's URL, 'local' for one started from the workspace interpreter, '' for no jupyter backend. */
    url: string;
    /** The kernel spec; '' for the server's default. */
    kernelName: string;
  };
}

/** The backends' settings from the `codeMode` section; VS Code's schema already bounds the numbers. */
export function readBackendSettings(c: Pick<vscode.WorkspaceConfiguration, 'get'>): BackendSettings {
  return {
    python: { memoryLimitMb: c.get<number>('python.memoryLimitMB', 4096) },
    pyodide: {
      heapLimitMb: c.get<number>('pyodide.heapLimitMB', 1024),
      network: c.get<string>('pyodide.network', 'off') === 'on' ? 'on' : 'off',
      sandbox: sandboxChoice(c.get<string>('pyodide.sandbox', 'auto')),
      workspaceWritable: c.get<boolean>('pyodide.workspaceWrite', false),
      // The files the extension reads as configuration sit at the top of the workspace folders, protected by name;
      // the wheelhouse is read by installs on the host, so a wheel planted there would be installed elsewhere.
      protectedPaths: wheelhouseOf(c),
    },
    jupyter: { url: c.get<string>('jupyter.url', '').trim(), kernelName: c.get<string>('jupyter.kernel', '').trim() },
  };
}

function wheelhouseOf(c: Pick<vscode.WorkspaceConfiguration, 'get'>): string[] {
  const wheelhouse = c.get<string>('wheelhouse', '').trim();
  return wheelhouse ? [path.resolve(wheelhouse)] : [];
}

function sandboxChoice(value: string): SandboxChoice {
  return isSandboxChoice(value) ? value : 'auto';
}

/** What the backends need besides settings: where their caches live, the log, the interpreter in use. */
export interface BackendEnvironment {
  storageDir: string;
  logger: Logger;
  /** The workspace interpreter (the Python extension's, else codeMode.pythonPath); undefined: python3 on PATH. */
  pythonPath: string | undefined;
  /** The token of the configured Jupyter Server, from secret storage. */
  jupyterToken?: string;
  /** The workspace folders on disk (a local Jupyter Server starts in the first). */
  workspaceRoots: string[];
}

/** The workspace folders on disk, of those VS Code has open. */
export function localFolders(folders: readonly Pick<vscode.WorkspaceFolder, 'uri'>[]): string[] {
  return folders.filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

function jupyterSettings(settings: BackendSettings, env: BackendEnvironment): JupyterSettings | undefined {
  const { url, kernelName } = settings.jupyter;
  if (!url) return undefined;
  return {
    url,
    ...(jupyterTokenKey(settings) && env.jupyterToken ? { token: env.jupyterToken } : {}),
    ...(kernelName ? { kernelName } : {}),
  };
}

/** The jupyter backend for the configured server (a local one runs the workspace interpreter), if one is set. */
export function jupyterFactory(settings: BackendSettings, env: BackendEnvironment): BackendFactory | undefined {
  const jupyter = jupyterSettings(settings, env);
  return jupyter && jupyterBackendFor(jupyter, env.pythonPath, env.workspaceRoots[0], env.logger);
}

/** Whether the jupyter backend depends on the workspace interpreter (a local server runs it). */
export function jupyterFollowsInterpreter(settings: BackendSettings): boolean {
  return settings.jupyter.url === LOCAL_JUPYTER;
}

/** The server a token is kept for, or undefined where none is needed (no server, a local one). */
export function jupyterTokenKey(settings: BackendSettings): string | undefined {
  const { url } = settings.jupyter;
  return url && url !== LOCAL_JUPYTER ? url : undefined;
}

/** What the engine is created with. */
export function engineSetup(settings: ExtensionSettings, env: BackendEnvironment): EngineSetup {
  return {
    config: settings.engine,
    pythonPath: env.pythonPath,
    pythonMemoryLimitMb: settings.backends.python.memoryLimitMb,
    storageDir: env.storageDir,
    pyodide: settings.backends.pyodide,
    jupyter: jupyterSettings(settings.backends, env),
    workspaceRoots: env.workspaceRoots,
    log: env.logger,
  };
}

/** The workspace-Python backend for the interpreter in use (also when the interpreter changes). */
export function pythonFactory(settings: BackendSettings, env: BackendEnvironment): BackendFactory {
  return createPythonBackend({
    pythonPath: env.pythonPath,
    memoryLimitMb: settings.python.memoryLimitMb,
    log: env.logger,
  });
}

/** The backends a settings change re-creates (their sessions restart), each with the reason it is told. */
export function factorySwaps(
  before: BackendSettings,
  after: BackendSettings,
  env: BackendEnvironment,
): { factory: BackendFactory; reason: string }[] {
  const swaps: { factory: BackendFactory; reason: string }[] = [];
  if (before.python.memoryLimitMb !== after.python.memoryLimitMb) {
    swaps.push({
      factory: pythonFactory(after, env),
      reason: `the memory cap of workspace-Python sessions changed to ${after.python.memoryLimitMb || 'none'} MB`,
    });
  }
  const { heapLimitMb, network, workspaceWritable, sandbox } = after.pyodide;
  const pyodideChanged =
    (['heapLimitMb', 'network', 'workspaceWritable', 'sandbox'] as const).some(
      (key) => before.pyodide[key] !== after.pyodide[key],
    ) || String(before.pyodide.protectedPaths) !== String(after.pyodide.protectedPaths);
  if (pyodideChanged) {
    const workspace = workspaceWritable ? 'writable' : 'read-only';
    swaps.push({
      factory: pyodideBackendFor(env.storageDir, after.pyodide, env.logger),
      reason: `the Pyodide settings changed (heap ${heapLimitMb} MB, network ${network}, workspace ${workspace}, sandbox ${sandbox})`,
    });
  }
  const jupyter = jupyterFactory(after, env);
  if (jupyter && (before.jupyter.url !== after.jupyter.url || before.jupyter.kernelName !== after.jupyter.kernelName)) {
    swaps.push({
      factory: jupyter,
      reason: `the Jupyter Server changed to ${after.jupyter.url}${after.jupyter.kernelName ? ` (kernel ${after.jupyter.kernelName})` : ''}`,
    });
  }
  return swaps;
}

/** Backends a settings change takes away, each with the reason its sessions' next runs are told. */
export function backendRemovals(
  before: BackendSettings,
  after: BackendSettings,
): { kind: BackendKind; reason: string }[] {
  return before.jupyter.url && !after.jupyter.url
    ? [{ kind: 'jupyter', reason: 'the Jupyter Server setting (codeMode.jupyter.url) was cleared' }]
    : [];
}

/** Where a person's runs on `kind` go, as the status bar's tooltip says it. */
export function describeBackend(kind: BackendKind, interpreter: string, settings: BackendSettings): string {
  if (kind === 'python') return `the workspace interpreter (${interpreter})`;
  if (kind === 'jupyter')
    return settings.jupyter.url === LOCAL_JUPYTER
      ? 'a Jupyter kernel on a local server (the workspace interpreter)'
      : `a Jupyter kernel on ${settings.jupyter.url}`;
  return 'Pyodide (WebAssembly, sandboxed)';
}
