// One card per run: status, where it ran, the code, live output, the error and what it displayed.
import {
  tracebackFrames,
  type Diagnostics,
  type Display,
  type RunResult,
  type ToolApproval,
  type ToolCallRecord,
} from '../engine/browser';
import { button, el, formatClock, formatDuration } from './dom';
import { backendLabel, originLabel, statusLabel } from './labels';
import { CARD_TEXT_CAP, DROPPED_NOTE, OutputView } from './outputView';
import { droppedText, SAVABLE_IMAGES, type PageToHostMessage, type RunCard, type SavableImageMime } from './protocol';

/** Code longer than this many lines starts collapsed. */
const OPEN_CODE_LINES = 8;

type Stream = 'stdout' | 'stderr';

/** What each approval value of the audit means, as a tooltip. */
const APPROVAL_MEANINGS: Record<ToolApproval, string> = {
  'read-only': 'the tool is marked read-only: no question',
  rule: 'listed in codeMode.tools.autoApprove: no question',
  'asked-allowed': 'a person was asked and allowed it',
  'session-allowed': 'a person allowed this tool for the session earlier',
  'policy-allow': 'no question by policy: approval "allow", your own run, or a VS Code tool VS Code confirms itself',
  denied: 'not called: a person said no, the policy refused it, or nobody could be asked',
};

export interface CardHost {
  post(message: PageToHostMessage): void;
  /** Asks for `flush()` on the next animation frame, so a burst of chunks costs one DOM update. */
  scheduleFlush(card: RunCardView): void;
  /** The card's data changed and should be persisted. */
  changed(): void;
}

/** Appends `text` to `current` without letting a card's two streams together pass CARD_TEXT_CAP. */
function appendCapped(current: string, other: string, text: string): string {
  if (!text || current.endsWith(DROPPED_NOTE)) return current;
  const room = CARD_TEXT_CAP - current.length - other.length;
  if (text.length <= room) return current + text;
  return current + text.slice(0, Math.max(0, room)) + DROPPED_NOTE;
}

/** The button's text, not its icon: the icon is a span in the codicon font too. */
function setButtonLabel(node: HTMLButtonElement, label: string): void {
  const span = node.querySelector('.label');
  if (span) span.textContent = label;
}

export class RunCardView {
  readonly root: HTMLElement;
  private readonly badge: HTMLElement;
  private readonly badgeLabel: HTMLElement;
  private readonly duration: HTMLElement;
  private readonly rerunButton: HTMLButtonElement;
  private readonly interruptButton: HTMLButtonElement;
  private readonly copyButton: HTMLButtonElement;
  private readonly output: OutputView;
  private readonly errorBox: HTMLElement;
  private readonly toolCallsBox: HTMLElement;
  private readonly droppedNote: HTMLElement;
  private readonly emptyNote: HTMLElement;
  private readonly queuedNote: HTMLElement;

  constructor(
    readonly model: RunCard,
    private readonly host: CardHost,
  ) {
    const { run } = model;
    this.badgeLabel = el('span', { className: 'badge-label' });
    this.badge = el('span', { className: 'badge' }, [
      el('span', { className: 'spinner', attrs: { 'aria-hidden': 'true' } }),
      this.badgeLabel,
    ]);
    this.duration = el('span', { className: 'duration' });
    const started = el('time', {
      className: 'started',
      text: formatClock(run.startedAt),
      attrs: { datetime: new Date(run.startedAt).toISOString(), title: new Date(run.startedAt).toLocaleString() },
    });

    const meta = el('span', { className: 'card-meta' }, [
      el('span', { className: 'meta-item backend', text: backendLabel(run.backend), attrs: { title: 'backend' } }),
      el('span', { className: 'meta-item session', text: run.session, attrs: { title: 'session' } }),
      el('span', { className: 'meta-item origin', text: originLabel(run), attrs: { title: 'started from' } }),
    ]);

    this.interruptButton = button('Interrupt', 'stop', 'card-button interrupt', 'Interrupt this run');
    this.interruptButton.addEventListener('click', () => {
      this.markInterrupting();
      this.host.post({ type: 'interrupt', runId: run.runId });
    });
    this.rerunButton = button('Re-run', 'rerun', 'card-button rerun', 'Run this code again in the same session');
    this.rerunButton.addEventListener('click', () => this.host.post({ type: 'rerun', runId: run.runId }));
    this.copyButton = button('Copy', 'copy', 'card-button copy', 'Copy stdout, stderr and traceback');
    this.copyButton.addEventListener('click', () => void this.copyOutput());

    // Two groups that wrap as wholes: in a narrow side bar the timing and buttons move to a second line.
    const head = el('header', { className: 'card-head' }, [
      el('span', { className: 'card-title' }, [this.badge, meta]),
      el('span', { className: 'card-side' }, [
        el('span', { className: 'card-time' }, [this.duration, started]),
        el('span', { className: 'card-actions' }, [this.interruptButton, this.rerunButton, this.copyButton]),
      ]),
    ]);

    this.output = new OutputView(({ mime, data, title }) => {
      if (isSavableImage(mime)) this.host.post({ type: 'saveImage', mime, data, ...(title ? { title } : {}) });
    });
    this.errorBox = el('div', { className: 'error-block', attrs: { role: 'alert' } });
    this.toolCallsBox = el('div', { className: 'tool-calls' });
    this.droppedNote = el('p', { className: 'note displays-dropped' });
    this.emptyNote = el('p', { className: 'note empty-output', text: 'No output' });
    this.queuedNote = el('p', {
      className: 'note queued-note',
      text: run.waitingFor ? `waiting for ${run.waitingFor}` : '',
    });

    this.root = el('article', { className: 'run-card', attrs: { 'data-run-id': run.runId, tabindex: '-1' } }, [
      head,
      this.queuedNote,
      this.renderCode(run.code),
      this.output.root,
      this.errorBox,
      this.toolCallsBox,
      this.droppedNote,
      this.emptyNote,
    ]);

    this.showOutput();
    this.renderDroppedNote();
    this.renderStatus();
  }

  /** Characters of display data this card holds. */
  get displayChars(): number {
    return this.model.displays.reduce((sum, display) => sum + display.data.length, 0);
  }

  /** Lets go of the card's displays (the page keeps only so much), leaving a note in their place. */
  dropDisplays(reason: string): void {
    const displays = this.model.displays;
    if (displays.length === 0) return;
    const before = this.model.displaysDropped;
    this.model.displaysDropped = {
      count: (before?.count ?? 0) + displays.length,
      bytes: (before?.bytes ?? 0) + displays.reduce((sum, display) => sum + display.data.length, 0),
      reason,
    };
    this.model.displays = [];
    this.output.dropDisplays();
    this.renderDroppedNote();
    this.updateEmptyNote();
    this.host.changed();
  }

  get runId(): string {
    return this.model.run.runId;
  }

  get running(): boolean {
    return !this.model.result;
  }

  appendOutput(stream: Stream, text: string): void {
    // Chunks that arrive after the result are already part of the result's text.
    if (!this.running || !text) return;
    const other: Stream = stream === 'stdout' ? 'stderr' : 'stdout';
    const before = this.model[stream];
    const after = appendCapped(before, this.model[other], text);
    if (after === before) return;
    this.model[stream] = after;
    this.output.appendText(stream, after.slice(before.length));
    this.host.scheduleFlush(this);
    this.host.changed();
  }

  /** Writes the output that arrived since the last frame. */
  flush(): void {
    this.output.flush();
    this.updateEmptyNote();
  }

  addDisplay(display: Display): void {
    if (!this.running || this.model.displaysDropped) return;
    this.model.displays.push(display);
    this.output.addDisplay(display);
    this.updateEmptyNote();
    this.host.changed();
  }

  finish(result: RunResult): void {
    this.model.result = result;
    this.model.stdout = appendCapped('', '', result.stdout);
    this.model.stderr = appendCapped('', this.model.stdout, result.stderr);
    // Displays streamed live are the same ones the result lists, unless some came while the page was away.
    if (result.displays && result.displays.length !== this.model.displays.length && !this.model.displaysDropped)
      this.model.displays = [...result.displays];
    this.showOutput();
    this.renderStatus();
    this.host.changed();
  }

  /** Interrupt was asked for, here or in the other page showing this run (the side bar and the panel beside). */
  markInterrupting(): void {
    if (!this.running) return;
    this.interruptButton.disabled = true;
    setButtonLabel(this.interruptButton, this.root.dataset.status === 'queued' ? 'Cancelling…' : 'Interrupting…');
  }

  /** Updates the elapsed time of a running card. */
  tick(now: number): void {
    if (this.running) this.duration.textContent = formatDuration(now - this.model.run.startedAt);
  }

  reveal(): void {
    this.root.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    this.root.classList.remove('revealed');
    // Reading layout restarts the highlight animation when the same card is revealed twice in a row.
    void this.root.offsetWidth;
    this.root.classList.add('revealed');
    this.root.focus({ preventScroll: true });
  }

  /** The result's order when it has one; else (running, or a result from before `outputs`) text then displays. */
  private showOutput(): void {
    const { result, stdout, stderr, displays } = this.model;
    if (result?.outputs) this.output.showOrdered(result.outputs, displays);
    else this.output.showGrouped(stdout, stderr, displays);
  }

  private renderCode(code: string): HTMLElement {
    const lines = code.split('\n');
    const firstLine = lines.find((line) => line.trim()) ?? '';
    const details = el('details', { className: 'code' }, [
      el('summary', {}, [
        el('span', { className: 'code-label', text: lines.length === 1 ? 'Code' : `Code · ${lines.length} lines` }),
        el('code', { className: 'code-preview', text: firstLine.trim() }),
      ]),
      el('pre', { className: 'code-text' }, [el('code', { text: code })]),
    ]);
    details.open = lines.length <= OPEN_CODE_LINES;
    return details;
  }

  private renderStatus(): void {
    const result = this.model.result;
    // A queued run waits behind another on its session; its start replaces this card with a running one.
    const queued = !result && this.model.run.waitingFor !== undefined;
    const status = !result ? (queued ? 'queued' : 'running') : result.success ? 'ok' : 'error';
    this.root.dataset.status = status;
    this.badgeLabel.textContent = queued ? 'queued' : statusLabel(result);
    this.queuedNote.hidden = !queued;
    if (queued) {
      setButtonLabel(this.interruptButton, 'Cancel');
      this.interruptButton.title = 'Cancel this run before it starts';
      this.interruptButton.setAttribute('aria-label', this.interruptButton.title);
    }
    if (result?.diagnostics) this.badge.dataset.errorType = result.diagnostics.error_type;
    this.duration.textContent = result
      ? formatDuration(result.duration_ms)
      : formatDuration(Date.now() - this.model.run.startedAt);
    this.interruptButton.hidden = !!result;
    this.rerunButton.hidden = !result;
    this.renderError(result?.diagnostics ?? null);
    this.renderToolCalls(result?.tool_calls ?? []);
    this.updateEmptyNote();
  }

  /** The run's audit: which tools its code called, how each went, and why it was allowed or not (not the arguments). */
  private renderToolCalls(calls: ToolCallRecord[]): void {
    this.toolCallsBox.hidden = calls.length === 0;
    if (calls.length === 0) return this.toolCallsBox.replaceChildren();
    const denied = calls.filter((call) => call.approval === 'denied').length;
    const title = `Tool calls · ${calls.length}${denied ? ` · ${denied} refused` : ''}`;
    const items = calls.map((call) =>
      el('li', { className: 'tool-call', attrs: { 'data-approval': call.approval, 'data-ok': String(call.ok) } }, [
        el('code', { className: 'tool-call-name', text: `${call.server}.${call.tool}` }),
        el('span', {
          className: 'tool-call-outcome',
          text: call.approval === 'denied' ? 'not called' : call.ok ? `ok · ${call.ms} ms` : `failed · ${call.ms} ms`,
        }),
        el('span', {
          className: 'tool-call-approval',
          text: call.approval,
          attrs: { title: APPROVAL_MEANINGS[call.approval] ?? '' },
        }),
      ]),
    );
    this.toolCallsBox.replaceChildren(el('span', { className: 'tool-calls-title', text: title }), el('ul', {}, items));
  }

  private renderError(diagnostics: Diagnostics | null): void {
    const children: HTMLElement[] = [];
    if (diagnostics) {
      children.push(el('div', { className: 'error-title', text: diagnostics.message || diagnostics.error_type }));
      const notes: string[] = [];
      if (diagnostics.timeout_s !== undefined) notes.push(`Time limit: ${diagnostics.timeout_s} s.`);
      if (diagnostics.session_reset) notes.push('The session was reset: its variables and imports are gone.');
      if (diagnostics.policy) notes.push(`Policy ${diagnostics.policy.rule}: ${diagnostics.policy.detail}`);
      if (diagnostics.auto_install) notes.push(`Auto-install: ${diagnostics.auto_install}`);
      for (const note of notes) children.push(el('p', { className: 'error-note', text: note }));
      if (diagnostics.traceback)
        children.push(
          tracebackWithLinks(diagnostics.traceback, (file, line) =>
            this.host.post({ type: 'openLocation', file, line }),
          ),
        );
      if (diagnostics.hints?.length) {
        children.push(
          el('div', { className: 'hints' }, [
            el('span', { className: 'hints-title', text: 'Hints from past fixes' }),
            el(
              'ul',
              {},
              diagnostics.hints.map((hint) => el('li', { text: hint })),
            ),
          ]),
        );
      }
    }
    this.errorBox.replaceChildren(...children);
    this.errorBox.hidden = children.length === 0;
  }

  private updateEmptyNote(): void {
    const m = this.model;
    this.emptyNote.hidden =
      this.running ||
      !!m.stdout ||
      !!m.stderr ||
      m.displays.length > 0 ||
      !!m.displaysDropped ||
      !!m.result?.diagnostics;
  }

  private renderDroppedNote(): void {
    const dropped = this.model.displaysDropped;
    this.droppedNote.hidden = !dropped;
    if (dropped) this.droppedNote.textContent = droppedText(dropped);
  }

  private async copyOutput(): Promise<void> {
    const text = [this.output.text(), this.model.result?.diagnostics?.traceback ?? ''].filter(Boolean).join('\n');
    try {
      await navigator.clipboard.writeText(text);
      setButtonLabel(this.copyButton, 'Copied');
    } catch {
      setButtonLabel(this.copyButton, 'Copy failed');
    }
    window.setTimeout(() => setButtonLabel(this.copyButton, 'Copy'), 1500);
  }
}

function isSavableImage(mime: string): mime is SavableImageMime {
  return Object.hasOwn(SAVABLE_IMAGES, mime);
}

/** The traceback as text, its `File "...", line N` frames as links that open the file at that line. */
function tracebackWithLinks(traceback: string, open: (file: string, line: number) => void): HTMLPreElement {
  const parts: (Node | string)[] = [];
  let at = 0;
  for (const frame of tracebackFrames(traceback)) {
    parts.push(traceback.slice(at, frame.start));
    const link = el('a', {
      className: 'location',
      text: traceback.slice(frame.start, frame.end),
      attrs: { href: '#', title: `Open ${frame.file} at line ${frame.line}` },
    });
    link.addEventListener('click', (event) => {
      event.preventDefault();
      open(frame.file, frame.line);
    });
    parts.push(link);
    at = frame.end;
  }
  parts.push(traceback.slice(at));
  return el('pre', { className: 'traceback' }, parts);
}
