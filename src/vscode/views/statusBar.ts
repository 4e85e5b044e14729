// The status bar item of a person's runs, as the Python extension shows its interpreter: which backend Run File
// and Run Selection use, a spinner while code runs, and the few actions a run needs one click away.
import * as vscode from 'vscode';
import type { BackendKind, RunEvent } from '../../engine/index';
import { BACKEND_LABELS as BACKEND_NAMES } from '../../webview/labels';

export const STATUS_MENU_COMMAND = 'codeMode.statusMenu';

/** What the item shows now (the integration tests read it; VS Code offers no API to read the status bar back). */
export interface RunStatusSnapshot {
  text: string;
  tooltip: string;
  visible: boolean;
  busy: boolean;
}

export class RunStatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('codeMode.runStatus', vscode.StatusBarAlignment.Right, 100);
  /** Runs started and not finished yet, of every origin: Stop interrupts them all. */
  private readonly running = new Set<string>();
  private visible = false;
  /** Results that arrived while the Results view was out of sight (ResultsView counts them). */
  private unseen = 0;

  /** `describeBackend` names where a person's runs go (the interpreter's path, or Pyodide's sandbox). */
  constructor(
    private readonly backend: () => BackendKind,
    private readonly describeBackend: (kind: BackendKind) => string,
  ) {
    this.item.name = 'Code Mode: backend of your runs';
    this.item.command = STATUS_MENU_COMMAND;
    this.update();
  }

  handle(event: RunEvent): void {
    // A queued run is one the person sees waiting: Stop cancels it too.
    if (event.type === 'started' || event.type === 'queued') this.running.add(event.runId);
    else if (event.type === 'finished') this.running.delete(event.runId);
    else return;
    this.update();
  }

  /** `count` results wait in the Results view, out of sight; 0 once it was seen. */
  setUnseen(count: number): void {
    this.unseen = count;
    this.update();
  }

  /** Call when the backend setting, workspace trust or the active editor changed. */
  update(): void {
    const kind = this.backend();
    const busy = this.running.size > 0;
    // Named as ours: the language indicator next to it also says "Python".
    const unseen = this.unseen === 0 ? '' : this.unseen === 1 ? '1 new result' : `${this.unseen} new results`;
    this.item.text = `${busy ? '$(sync~spin)' : '$(play-circle)'} Code Mode: ${BACKEND_NAMES[kind]}${unseen ? ` · $(bell-dot) ${unseen}` : ''}`;
    const doing = busy ? `${this.running.size === 1 ? 'A run is' : `${this.running.size} runs are`} busy. ` : '';
    const waiting = unseen ? `${unseen} in the Results view. ` : '';
    this.item.tooltip = `Code Mode: your runs use ${this.describeBackend(kind)}. ${doing}${waiting}Click to stop, restart the session, choose the backend or show the results.`;
    // As the Python extension's item: only beside Python code, but a busy run stays stoppable from anywhere.
    const visible = busy || this.unseen > 0 || vscode.window.activeTextEditor?.document.languageId === 'python';
    if (visible !== this.visible) {
      this.visible = visible;
      if (visible) this.item.show();
      else this.item.hide();
    }
  }

  snapshot(): RunStatusSnapshot {
    return {
      text: this.item.text,
      tooltip: String(this.item.tooltip),
      visible: this.visible,
      busy: this.running.size > 0,
    };
  }

  /** The item's click: a quick pick of the actions a run needs. */
  async showMenu(): Promise<unknown> {
    const showResults = {
      label: '$(preview) Show Results',
      ...(this.unseen > 0 ? { description: `${this.unseen} new` } : {}),
      command: 'codeMode.openResults',
    };
    const items = [
      // A result waiting out of sight is what the click is most likely for.
      ...(this.unseen > 0 ? [showResults] : []),
      {
        label: '$(debug-stop) Stop',
        description: this.running.size > 0 ? 'interrupt the running code' : 'nothing is running',
        command: 'codeMode.interrupt',
      },
      {
        label: '$(debug-restart) Restart Session',
        description: 'a fresh interpreter; variables are gone',
        command: 'codeMode.restartSession',
      },
      {
        label: '$(server-environment) Choose Backend…',
        description: `now ${BACKEND_NAMES[this.backend()]}`,
        command: 'codeMode.chooseBackend',
      },
      ...(this.unseen > 0 ? [] : [showResults]),
    ];
    const picked = await vscode.window.showQuickPick(items, { title: 'Code Mode', placeHolder: 'Your runs' });
    return picked && vscode.commands.executeCommand(picked.command);
  }

  dispose(): void {
    this.item.dispose();
  }
}
