import * as vscode from 'vscode';
import type { Engine } from '../../engine/index';

/** The first Pyodide load takes a few seconds (making the memory snapshot): say so once, with what the sandbox lacks. */
export class PyodideProgress {
  private shown = false;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  watch(engine: Engine): void {
    engine.onStateChange(() => this.showOnce(engine));
  }

  private showOnce(engine: Engine): void {
    const loading = () => engine.describeSessions().some((s) => s.backend === 'pyodide' && s.info.state === 'loading');
    if (this.shown || !loading()) return;
    this.shown = true;
    this.warnIfSandboxIncomplete(engine);
    void vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: 'Code Mode: loading Pyodide (first start prepares a snapshot)…',
      },
      () =>
        new Promise<void>((resolve) => {
          const listener = engine.onStateChange(() => {
            if (!loading()) {
              listener.dispose();
              resolve();
            }
          });
        }),
    );
  }

  /** Said once, when Pyodide first starts: agents are told it is a sandbox, so a weaker one must not be silent. */
  private warnIfSandboxIncomplete(engine: Engine): void {
    const sandbox = engine.sandbox('pyodide');
    if (!sandbox || sandbox.complete) return;
    // The backend has logged every gap already.
    void vscode.window
      .showWarningMessage(
        `Code Mode: the Pyodide sandbox is incomplete on this machine (${sandbox.mechanism}): ${sandbox.gaps[0]}.`,
        'Show Details',
      )
      .then((choice) => choice && this.log.show());
  }
}
