import * as vscode from 'vscode';
import { type RunHistory, type RunEvent, errorText, PendingRequests } from '../../engine/index';
import {
  messageForRunEvent,
  parsePageMessage,
  type HostToPageMessage,
  type PageToHostMessage,
  type ProbedCard,
  type ToolFormSpec,
} from '../../webview/protocol';
import { makeNonce, renderResultsHtml } from './resultsHtml';
import { saveImage } from './saveImage';
import type { SettingsService } from '../settings';

export const RESULTS_VIEW_ID = 'codeMode.results';
const PANEL_TYPE = 'codeMode.resultsPanel';
/** How long a reveal waits for VS Code to resolve the sidebar view it opened, before saying it is not visible. */
const VIEW_RESOLVE_MS = 3000;
/** Set once a person's run opened the Results view by itself: later runs leave the side bar as the person has it. */
const REVEALED_ONCE_KEY = 'codeMode.results.revealedForARun';

export interface ResultsActions {
  rerun(runId: string): Promise<unknown>;
  interrupt(runId: string): Promise<unknown>;
  invokeTool(
    server: string | undefined,
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ ok: boolean; content: unknown }>;
}

export interface ResultsViewDeps {
  /** Where dist/webview.js, the styles and the icon are. */
  extensionUri: vscode.Uri;
  history: Pick<RunHistory, 'all' | 'clear'>;
  actions: ResultsActions;
  log: vscode.LogOutputChannel;
  /** Remembers across windows that the first run opened the view (globalState). */
  memory: vscode.Memento;
  settings: Pick<SettingsService, 'resultsLocation'>;
}

/**
 * The results webview, as a sidebar view and (when codeMode.results.location says so) an editor panel beside
 * the code: both show the same history and receive every run event live. The page is untrusted (it renders program output): everything it sends is
 * validated by parsePageMessage before the host acts on it.
 */
export class ResultsView implements vscode.WebviewViewProvider, vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private view: vscode.WebviewView | undefined;
  private readonly viewResolved = new vscode.EventEmitter<void>();
  /** Kept apart because a disposed panel throws on `.webview`. */
  private panelWebview: vscode.Webview | undefined;
  private readonly ready = new Set<vscode.Webview>();
  /** Reveal and form requests made before any page loaded; run events need no queue (history covers them). */
  private queued: HostToPageMessage[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly probes = new PendingRequests<string, ProbedCard[]>();
  private probeCounter = 0;
  /** Runs that finished while the results could not be seen: the badge and the status bar item count them. */
  private unseen = 0;
  private readonly unseenChanged = new vscode.EventEmitter<number>();
  readonly onDidChangeUnseen = this.unseenChanged.event;
  /** The Tool Explorer, beside the Results view in the Code Mode side bar: it carries the badge until the view is resolved. */
  private companion: vscode.TreeView<unknown> | undefined;

  constructor(private readonly deps: ResultsViewDeps) {}

  /** Forwards a run event to every open page; a run finishing out of sight is counted until the results are seen. */
  handle(event: RunEvent): void {
    this.post(messageForRunEvent(event));
    if (event.type === 'finished' && !this.isVisible()) this.setUnseen(this.unseen + 1);
  }

  /** The Tool Explorer's tree view: its visibility tells whether the person is in the Code Mode side bar. */
  setCompanion(tree: vscode.TreeView<unknown>): void {
    this.companion = tree;
    this.disposables.push(tree.onDidChangeVisibility(() => this.updateBadge()));
  }

  /** Runs finished since the results were last in sight. */
  get unseenRuns(): number {
    return this.unseen;
  }

  /**
   * Brings a person's run into sight without taking their layout: the panel beside the editor when that is where
   * results go; the Results view when the Code Mode side bar is showing, or for the very first run; otherwise the
   * side bar stays as the person has it (the Explorer, say) and a badge on the Code Mode icon says a result is there.
   */
  async present(): Promise<void> {
    if (this.deps.settings.resultsLocation() === 'beside') {
      this.revealPanel();
      return;
    }
    // The Code Mode side bar is showing (either view), or this is the first run: the Results view opens, expanded.
    if (this.view?.visible || this.companion?.visible || !this.deps.memory.get<boolean>(REVEALED_ONCE_KEY)) {
      await this.deps.memory.update(REVEALED_ONCE_KEY, true);
      await this.revealView();
    }
  }

  /**
   * Shows the results where codeMode.results.location says, optionally scrolled to one run. Focus stays where
   * it is (the editor, usually), and the sidebar view leaves the editor its whole width.
   */
  async reveal(runId?: string): Promise<void> {
    if (this.deps.settings.resultsLocation() === 'beside') this.revealPanel();
    else await this.revealView();
    if (runId) this.postOrQueue({ type: 'reveal', runId });
  }

  /** Whether a person can see the results now, in the sidebar or in the panel. */
  isVisible(): boolean {
    return Boolean(this.view?.visible || this.panel?.visible);
  }

  private async revealView(): Promise<void> {
    if (this.view) {
      this.view.show(true);
      return;
    }
    // VS Code resolves the view once its container opens; the focus command opens it (and expands it).
    const resolved = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        subscription.dispose();
        resolve();
      };
      const timer = setTimeout(done, VIEW_RESOLVE_MS);
      const subscription = this.viewResolved.event(done);
    });
    await vscode.commands.executeCommand(`${RESULTS_VIEW_ID}.focus`, { preserveFocus: true });
    await resolved;
  }

  private revealPanel(): void {
    if (this.panel) {
      try {
        this.panel.reveal(undefined, true);
      } catch {
        // Closed moments ago: onDidDispose has not reached us yet.
        this.forgetPanel();
      }
    }
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        PANEL_TYPE,
        'Code Mode Results',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        this.webviewOptions(),
      );
      this.panel.iconPath = vscode.Uri.joinPath(this.deps.extensionUri, 'media', 'icon.svg');
      this.panelWebview = this.panel.webview;
      this.attach(this.panelWebview);
      const panel = this.panel;
      panel.onDidDispose(() => {
        if (this.panel === panel) this.forgetPanel();
      });
      panel.onDidChangeViewState(() => this.updateBadge());
    }
  }

  private forgetPanel(): void {
    if (this.panelWebview) this.ready.delete(this.panelWebview);
    this.panel = undefined;
    this.panelWebview = undefined;
  }

  /** Shows a form for one tool in the panel; the page posts invokeTool when the person submits it. */
  showToolForm(tool: ToolFormSpec): void {
    void this.reveal();
    this.postOrQueue({ type: 'toolForm', tool });
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    view.webview.options = this.webviewOptions();
    this.view = view;
    this.viewResolved.fire();
    this.attach(view.webview);
    this.disposables.push(view.onDidChangeVisibility(() => this.updateBadge()));
    this.updateBadge();
    view.onDidDispose(() => {
      this.ready.delete(view.webview);
      if (this.view === view) this.view = undefined;
    });
  }

  private setUnseen(count: number): void {
    if (count === this.unseen) return;
    this.unseen = count;
    this.updateBadge();
    this.unseenChanged.fire(count);
  }

  /** Seen once visible; until then the badge is on the Results view, or on the Tool Explorer before the view exists. */
  private updateBadge(): void {
    if (this.isVisible() && this.unseen > 0) {
      this.setUnseen(0);
      return;
    }
    const badge =
      this.unseen > 0
        ? { value: this.unseen, tooltip: this.unseen === 1 ? '1 new result' : `${this.unseen} new results` }
        : undefined;
    if (this.view) this.view.badge = badge;
    if (this.companion) this.companion.badge = this.view ? undefined : badge;
  }

  /** What a submitted tool form does: call the tool, turning a failure into a result the form can show. */
  invokeFromForm(
    server: string | undefined,
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ ok: boolean; content: unknown }> {
    return this.deps.actions
      .invokeTool(server, name, args)
      .catch((error: unknown) => ({ ok: false, content: errorText(error) }));
  }

  /** The cards one loaded page renders now, read from its DOM; empty when no page is loaded. */
  async probe(): Promise<ProbedCard[]> {
    const [webview] = this.ready;
    if (!webview) return [];
    const requestId = `probe-${++this.probeCounter}`;
    // A page that does not answer within 5 s shows nothing.
    const cards = this.probes.wait(requestId, 5000).catch((): ProbedCard[] => []);
    void webview.postMessage({ type: 'probe', requestId } satisfies HostToPageMessage);
    return cards;
  }

  private webviewOptions(): vscode.WebviewOptions & vscode.WebviewPanelOptions {
    return {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [
        vscode.Uri.joinPath(this.deps.extensionUri, 'dist'),
        vscode.Uri.joinPath(this.deps.extensionUri, 'media'),
      ],
    };
  }

  private attach(webview: vscode.Webview): void {
    webview.html = renderResultsHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.deps.extensionUri, 'dist', 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(this.deps.extensionUri, 'media', 'results.css')).toString(),
      codiconsUri: webview
        .asWebviewUri(vscode.Uri.joinPath(this.deps.extensionUri, 'dist', 'codicons', 'codicon.css'))
        .toString(),
      title: 'Code Mode Results',
    });
    this.disposables.push(
      webview.onDidReceiveMessage((raw: unknown) => {
        const message = parsePageMessage(raw);
        if (!message) {
          this.deps.log.warn('results page sent a malformed message; ignored');
          return;
        }
        this.onPageMessage(webview, message).catch((error: unknown) =>
          this.deps.log.error(`results page action failed: ${String(error)}`),
        );
      }),
    );
  }

  private async onPageMessage(webview: vscode.Webview, message: PageToHostMessage): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.ready.add(webview);
        await webview.postMessage({ type: 'history', runs: this.deps.history.all() } satisfies HostToPageMessage);
        for (const queued of this.queued.splice(0)) await webview.postMessage(queued);
        return;
      case 'clear':
        this.deps.history.clear();
        this.post({ type: 'clear' });
        return;
      case 'rerun':
        await this.deps.actions.rerun(message.runId);
        return;
      case 'interrupt':
        // The other page showing this run (side bar, panel beside) says so too.
        this.post({ type: 'interrupting', runId: message.runId });
        await this.deps.actions.interrupt(message.runId);
        return;
      case 'openLocation':
        await openLocation(message.file, message.line);
        return;
      case 'saveImage': {
        const saved = await saveImage(message);
        if (saved)
          void vscode.window.showInformationMessage(
            `Code Mode: saved the figure to ${vscode.workspace.asRelativePath(saved)}.`,
          );
        return;
      }
      case 'probeResult':
        this.probes.resolve(message.requestId, message.cards);
        return;
      case 'invokeTool': {
        const reply = await this.invokeFromForm(message.server, message.name, message.args);
        await webview.postMessage({
          type: 'toolResult',
          requestId: message.requestId,
          ...reply,
        } satisfies HostToPageMessage);
        return;
      }
    }
  }

  private postOrQueue(message: HostToPageMessage): void {
    if (this.ready.size > 0) this.post(message);
    else this.queued = [...this.queued.slice(-9), message];
  }

  private post(message: HostToPageMessage): void {
    for (const webview of this.ready) void webview.postMessage(message);
  }

  dispose(): void {
    this.probes.rejectAll(new Error('the results view was closed'));
    this.panel?.dispose();
    this.viewResolved.dispose();
    this.unseenChanged.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** A traceback link: the file in the main editor group at that line; only a file that exists here. */
async function openLocation(file: string, line: number): Promise<void> {
  const uri = vscode.Uri.file(file);
  try {
    if ((await vscode.workspace.fs.stat(uri)).type !== vscode.FileType.File) return;
  } catch {
    void vscode.window.showInformationMessage(
      `Code Mode: ${file} is not a file on this machine (it may exist only inside Pyodide).`,
    );
    return;
  }
  const position = new vscode.Position(line - 1, 0);
  await vscode.window.showTextDocument(uri, {
    selection: new vscode.Range(position, position),
    viewColumn: vscode.ViewColumn.One,
  });
}
