import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';

export interface InterpreterChoice {
  /** Undefined: let the engine search CODE_MODE_PYTHON and PATH. */
  path: string | undefined;
  source: 'python-extension' | 'setting' | 'path';
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

/**
 * Follows the interpreter the Python extension selected, when that extension is installed; otherwise the
 * codeMode.pythonPath setting, then PATH. The Python extension is optional, never a hard dependency.
 */
export class InterpreterTracker implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<InterpreterChoice>();
  readonly onDidChange = this.changed.event;
  private api: PythonExtension | undefined;
  private subscription: vscode.Disposable | undefined;

  constructor(
    private readonly settingPath: () => string,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async current(): Promise<InterpreterChoice> {
    const api = await this.pythonApi();
    if (api) {
      try {
        const active = api.environments.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
        const resolved = await api.environments.resolveEnvironment(active);
        const executable = resolved?.executable.uri?.fsPath;
        if (executable) return { path: executable, source: 'python-extension' };
      } catch (error) {
        this.log.warn(`Python extension did not resolve the active environment: ${String(error)}`);
      }
    }
    const setting = this.settingPath();
    return setting ? { path: setting, source: 'setting' } : { path: undefined, source: 'path' };
  }

  /** Fire when the selected interpreter or the setting changes. */
  settingChanged(): void {
    void this.current().then((choice) => this.changed.fire(choice));
  }

  private async pythonApi(): Promise<PythonExtension | undefined> {
    if (this.api || !vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) return this.api;
    try {
      this.api = await PythonExtension.api();
      this.subscription = this.api.environments.onDidChangeActiveEnvironmentPath(() => this.settingChanged());
    } catch (error) {
      this.log.warn(`Python extension API unavailable: ${String(error)}`);
    }
    return this.api;
  }

  dispose(): void {
    this.subscription?.dispose();
    this.changed.dispose();
  }
}
