// The engine's backends as VS Code configures them: the one module where backend settings are read and handed
// to the engine. A new backend is added here — its settings in BackendSettings and readBackendSettings, what the
// engine is created with in engineSetup, which setting changes re-create its factory in factorySwaps — and in
// the backend pickers (Choose Backend in features/runCommands.ts, the status bar's names).
import * as vscode from 'vscode';
import type { EngineSetup, PyodideSettings } from '../engine/index';
import { pyodideBackendFor } from '../engine/index';
import { createPythonBackend } from '../engine/python/backend';
import type { BackendFactory, BackendKind, Logger } from '../engine/types';
import type { ExtensionSettings } from './settings';

export interface BackendSettings {
  python: {
    /** Data memory cap of each workspace-Python session in MB (0: none). */
    memoryLimitMb: number;
  };
  pyodide: Required<PyodideSettings>;
}

/** The backends' settings from the `codeMode` section; VS Code's schema already bounds the numbers. */
export function readBackendSettings(c: vscode.WorkspaceConfiguration): BackendSettings {
  return {
    python: { memoryLimitMb: c.get<number>('python.memoryLimitMB', 4096) },
    pyodide: {
      heapLimitMb: c.get<number>('pyodide.heapLimitMB', 1024),
      network: c.get<string>('pyodide.network', 'off') === 'on' ? 'on' : 'off',
      workspaceWritable: c.get<boolean>('pyodide.workspaceWrite', false),
    },
  };
}

/** What the backends need besides settings: where their caches live, the log, the interpreter in use. */
export interface BackendEnvironment {
  storageDir: string;
  logger: Logger;
  /** The workspace interpreter (the Python extension's, else codeMode.pythonPath); undefined: python3 on PATH. */
  pythonPath: string | undefined;
}

/** What the engine is created with. */
export function engineSetup(settings: ExtensionSettings, env: BackendEnvironment): EngineSetup {
  return {
    config: settings.engine,
    pythonPath: env.pythonPath,
    pythonMemoryLimitMb: settings.backends.python.memoryLimitMb,
    storageDir: env.storageDir,
    pyodide: settings.backends.pyodide,
    workspaceRoots: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    log: env.logger,
  };
}

/** The workspace-Python backend for the interpreter in use (also when the interpreter changes). */
export function pythonFactory(settings: BackendSettings, env: BackendEnvironment): BackendFactory {
  return createPythonBackend({ pythonPath: env.pythonPath, memoryLimitMb: settings.python.memoryLimitMb, log: env.logger });
}

/** The backends a settings change re-creates (their sessions restart), each with the reason it is told. */
export function factorySwaps(before: BackendSettings, after: BackendSettings, env: BackendEnvironment): { factory: BackendFactory; reason: string }[] {
  const swaps: { factory: BackendFactory; reason: string }[] = [];
  if (before.python.memoryLimitMb !== after.python.memoryLimitMb) {
    swaps.push({ factory: pythonFactory(after, env), reason: `the memory cap of workspace-Python sessions changed to ${after.python.memoryLimitMb || 'none'} MB` });
  }
  const { heapLimitMb, network, workspaceWritable } = after.pyodide;
  if (before.pyodide.heapLimitMb !== heapLimitMb || before.pyodide.network !== network || before.pyodide.workspaceWritable !== workspaceWritable) {
    const workspace = workspaceWritable ? 'writable' : 'read-only';
    swaps.push({
      factory: pyodideBackendFor(env.storageDir, after.pyodide, env.logger),
      reason: `the Pyodide settings changed (heap ${heapLimitMb} MB, network ${network}, workspace ${workspace})`,
    });
  }
  return swaps;
}

/** Where a person's runs on `kind` go, as the status bar's tooltip says it. */
export function describeBackend(kind: BackendKind, pythonPath: string | undefined): string {
  return kind === 'python' ? `the workspace interpreter (${pythonPath ?? 'python3 on PATH'})` : 'Pyodide (WebAssembly, sandboxed)';
}
