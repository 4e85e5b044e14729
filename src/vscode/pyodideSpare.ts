// When the extension keeps a spare Pyodide interpreter (engine/spare.ts): from the moment the Code Mode server is
// first started for agents, or a Python file is opened, while Pyodide is the default backend and the setting
// codeMode.pyodide.warmSpare is on. Turning the setting off (or another default backend) ends the spare.
import * as vscode from 'vscode';
import type { Engine } from '../engine/index';
import type { ExtensionSettings } from './settings';

export class PyodideSpare implements vscode.Disposable {
  /** Python is about to be run: a spare is kept from now on, as the settings allow. */
  private wanted = false;
  private readonly opened: vscode.Disposable;

  constructor(
    private readonly engine: () => Promise<Engine>,
    private readonly settings: () => ExtensionSettings,
  ) {
    this.opened = vscode.workspace.onDidOpenTextDocument((document) => {
      if (document.languageId === 'python') this.want();
    });
    if (vscode.workspace.textDocuments.some((document) => document.languageId === 'python')) this.want();
  }

  want(): void {
    if (this.wanted) return;
    this.wanted = true;
    this.apply();
  }

  /** The settings changed: the spare is started or ended to match them. */
  apply(): void {
    if (!this.wanted) return;
    const settings = this.settings();
    const keep = settings.pyodideWarmSpare && settings.engine.defaultBackend === 'pyodide';
    this.engine().then(
      (engine) => engine.keepSpare(keep ? 'pyodide' : undefined),
      // The engine reports its own failure to start where it is used.
      () => undefined,
    );
  }

  dispose(): void {
    this.opened.dispose();
  }
}
