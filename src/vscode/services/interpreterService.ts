import * as vscode from 'vscode';
import { describeDefaultInterpreter, type Logger } from '../../engine/index';
import { jupyterFactory, jupyterFollowsInterpreter, pythonFactory } from '../backends';
import type { InterpreterChoice, InterpreterTracker } from '../interpreter';
import type { EngineService } from './engineService';
import type { SettingsCache } from './settingsCache';

/** The workspace interpreter the python backend uses, and its swap (sessions restarted) when the choice changes. */
export class InterpreterService {
  private choice: InterpreterChoice | undefined;
  /** The default interpreter (none chosen) as found: its path, version and what it runs (a pyenv shim's Python). */
  private defaultLabel: string | undefined;

  constructor(
    private readonly tracker: InterpreterTracker,
    private readonly engine: EngineService,
    private readonly settings: SettingsCache,
    private readonly storageDir: string,
    private readonly logger: Logger,
  ) {}

  /** The interpreter in use; undefined until the engine first asked for one. */
  get inUse(): InterpreterChoice | undefined {
    return this.choice;
  }

  /** The interpreter in use, asking the tracker (the Python extension, the setting, PATH) the first time. */
  async current(): Promise<InterpreterChoice> {
    if (!this.choice) {
      this.choice = await this.tracker.current();
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

  private async describeDefault(): Promise<void> {
    const found = await describeDefaultInterpreter();
    this.defaultLabel = found
      ? `${found.path} (Python ${found.version}${found.executable === found.path ? '' : `, ${found.executable}`}; the default, found on PATH)`
      : undefined;
  }

  /**
   * codeMode.pythonPath changed: the interpreter is looked up and swapped in now, and the tracker reports it
   * through its change event (to the status bar and the views; changed() is then a no-op).
   */
  async settingChanged(): Promise<void> {
    await this.changed(await this.tracker.current());
    this.tracker.settingChanged();
  }

  async changed(choice: InterpreterChoice): Promise<void> {
    if (choice.path === this.choice?.path) return;
    this.choice = choice;
    if (!choice.path) await this.describeDefault();
    const engine = await this.engine.ifCreated();
    if (!engine) return;
    const name = this.label();
    const env = { storageDir: this.storageDir, logger: this.logger, pythonPath: choice.path };
    const reason = `the workspace interpreter changed to ${name}`;
    await engine.setBackendFactory(pythonFactory(this.settings.current.backends, env), reason);
    // A local Jupyter Server runs the workspace interpreter too.
    const jupyter =
      jupyterFollowsInterpreter(this.settings.current.backends) && jupyterFactory(this.settings.current.backends, env);
    if (jupyter) await engine.setBackendFactory(jupyter, reason);
    this.logger.info(`workspace Python is now ${name}; its sessions were restarted`);
    void vscode.window.showInformationMessage(
      `Code Mode: workspace Python changed to ${name}. Its sessions were restarted: their variables are gone.`,
    );
  }
}
