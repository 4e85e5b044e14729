// The workspace interpreter: which one (the Python extension's selection when that extension is installed, else the
// codeMode.pythonPath setting, else PATH; the Python extension is optional, never a hard dependency), and its swap
// (sessions restarted) when the choice changes.
import type * as vscode from 'vscode';
import { describeDefaultInterpreter, type Logger } from '../../engine/index';
import { jupyterFactory, jupyterFollowsInterpreter, localFolders, pythonFactory } from '../backends';
import type * as pythonApis from '../common/python.apis';
import type * as windowApis from '../common/window.apis';
import type * as workspaceApis from '../common/workspace.apis';
import type { SettingsService } from '../settings';
import type { EngineService } from './engineService';

export interface InterpreterChoice {
  /** Undefined: let the engine search CODE_MODE_PYTHON and PATH. */
  path: string | undefined;
  source: 'python-extension' | 'setting' | 'path';
}

export interface InterpreterServiceDeps {
  engine: Pick<EngineService, 'ifCreated'>;
  settings: Pick<SettingsService, 'current'>;
  storageDir: string;
  logger: Logger;
  python: Pick<typeof pythonApis, 'isPythonExtensionInstalled' | 'pythonEnvironments'>;
  window: Pick<typeof windowApis, 'showInformationMessage'>;
  workspace: Pick<typeof workspaceApis, 'workspaceFolders'>;
}

export class InterpreterService implements vscode.Disposable {
  private choice: InterpreterChoice | undefined;
  /** The default interpreter (none chosen) as found: its path, version and what it runs (a pyenv shim's Python). */
  private defaultLabel: string | undefined;
  private environments: pythonApis.PythonEnvironments | undefined;
  private subscription: vscode.Disposable | undefined;
  private readonly listeners = new Set<(choice: InterpreterChoice) => void>();

  constructor(private readonly deps: InterpreterServiceDeps) {}

  /** The interpreter in use; undefined until the engine first asked for one. */
  get inUse(): InterpreterChoice | undefined {
    return this.choice;
  }

  /** Calls `listener` with the new choice when the Python extension's selection or codeMode.pythonPath changes. */
  onDidChange(listener: (choice: InterpreterChoice) => void): vscode.Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The interpreter in use, looking it up (the Python extension, the setting, PATH) the first time. */
  async current(): Promise<InterpreterChoice> {
    if (!this.choice) {
      this.choice = await this.lookUp();
      // Asking the interpreter its version takes a process start: the engine's start does not wait for the label.
      if (!this.choice.path) void this.describeDefault();
    }
    return this.choice;
  }

  /**
   * The interpreter in use as a person reads it: its path, or for the default the interpreter found on PATH with
   * its version and, behind a shim or link, the Python it runs.
   */
  label(): string {
    return this.choice?.path ?? this.defaultLabel ?? 'python3 on PATH';
  }

  /** codeMode.pythonPath changed: the interpreter is looked up and swapped in now, then the change is reported. */
  async settingChanged(): Promise<void> {
    await this.changed(await this.lookUp());
    this.reportChange();
  }

  /** The Python extension's selection, else the setting, else PATH. */
  private async lookUp(): Promise<InterpreterChoice> {
    const environments = await this.pythonEnvironments();
    if (environments) {
      try {
        const active = environments.getActiveEnvironmentPath(this.deps.workspace.workspaceFolders()[0]?.uri);
        const resolved = await environments.resolveEnvironment(active);
        const executable = resolved?.executable.uri?.fsPath;
        if (executable) return { path: executable, source: 'python-extension' };
      } catch (error) {
        this.deps.logger.warn(`Python extension did not resolve the active environment: ${String(error)}`);
      }
    }
    const setting = this.deps.settings.current.pythonPath;
    return setting ? { path: setting, source: 'setting' } : { path: undefined, source: 'path' };
  }

  private async pythonEnvironments(): Promise<pythonApis.PythonEnvironments | undefined> {
    if (this.environments || !this.deps.python.isPythonExtensionInstalled()) return this.environments;
    try {
      this.environments = await this.deps.python.pythonEnvironments();
      this.subscription = this.environments.onDidChangeActiveEnvironmentPath(() => this.reportChange());
    } catch (error) {
      this.deps.logger.warn(`Python extension API unavailable: ${String(error)}`);
    }
    return this.environments;
  }

  /** Looks the interpreter up again, swaps it in and tells the listeners (the status bar, the views). */
  private reportChange(): void {
    void this.lookUp().then((choice) => {
      void this.changed(choice);
      for (const listener of this.listeners) listener(choice);
    });
  }

  private async describeDefault(): Promise<void> {
    const found = await describeDefaultInterpreter();
    this.defaultLabel = found
      ? `${found.path} (Python ${found.version}${found.executable === found.path ? '' : `, ${found.executable}`}; the default, found on PATH)`
      : undefined;
  }

  /** A new choice: a created engine's workspace-Python backend (and a local Jupyter Server's) restarts on it. */
  private async changed(choice: InterpreterChoice): Promise<void> {
    if (choice.path === this.choice?.path) return;
    this.choice = choice;
    if (!choice.path) await this.describeDefault();
    const engine = await this.deps.engine.ifCreated();
    if (!engine) return;
    const { settings, storageDir, logger } = this.deps;
    const backends = settings.current.backends;
    const name = this.label();
    const env = {
      storageDir,
      logger,
      pythonPath: choice.path,
      workspaceRoots: localFolders(this.deps.workspace.workspaceFolders()),
    };
    const reason = `the workspace interpreter changed to ${name}`;
    await engine.setBackendFactory(pythonFactory(backends, env), reason);
    // A local Jupyter Server runs the workspace interpreter too.
    const jupyter = jupyterFollowsInterpreter(backends) && jupyterFactory(backends, env);
    if (jupyter) await engine.setBackendFactory(jupyter, reason);
    logger.info(`workspace Python is now ${name}; its sessions were restarted`);
    void this.deps.window.showInformationMessage(
      `Code Mode: workspace Python changed to ${name}. Its sessions were restarted: their variables are gone.`,
    );
  }

  dispose(): void {
    this.subscription?.dispose();
    this.listeners.clear();
  }
}
