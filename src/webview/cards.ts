// One card per run: status, where it ran, the code, live output, the error and what it displayed.
import { tracebackFrames } from '../engine/tracebackFrames';
import type { Diagnostics, Display, RunOrigin, RunResult } from '../engine/types';
import { renderDisplay } from './displays';
import { button, el, formatClock, formatDuration } from './dom';
import { droppedText, type PageToHostMessage, type RunCard } from './protocol';

/** Characters of stdout + stderr a card keeps; beyond it the rest of a flood is dropped with a note. */
const CARD_TEXT_CAP = 200_000;
/** Code longer than this many lines starts collapsed. */
const OPEN_CODE_LINES = 8;

type Stream = 'stdout' | 'stderr';

const BACKEND_LABELS: Record<string, string> = { pyodide: 'Pyodide', python: 'Python' };
const ORIGIN_LABELS: Record<RunOrigin, string> = {
  mcp: 'agent (MCP)',
  command: 'command',
  explorer: 'tool explorer',
  cli: 'CLI',
  generate: 'generate and run',
  test: 'test',
};

export interface CardHost {
  post(message: PageToHostMessage): void;
  /** Asks for `flush()` on the next animation frame, so a burst of chunks costs one DOM update. */
  scheduleFlush(card: RunCardView): void;
  /** The card's data changed and should be persisted. */
  changed(): void;
}

const DROPPED_NOTE = `\n… [output beyond ${CARD_TEXT_CAP / 1000} K characters is not kept in this view]\n`;

/** Appends `text` to `current` without letting a card's two streams together pass CARD_TEXT_CAP. */
function appendCapped(current: string, other: string, text: string): string {
  if (!text || current.endsWith(DROPPED_NOTE)) return current;
  const room = CARD_TEXT_CAP - current.length - other.length;
  if (text.length <= room) return current + text;
  return current + text.slice(0, Math.max(0, room)) + DROPPED_NOTE;
}

function setButtonLabel(node: HTMLButtonElement, label: string): void {
  // The label's span, not the icon's (a codicon span comes first, and text in it is drawn in the icon font).
  const span = node.querySelector('span:not(.codicon)');
  if (span) span.textContent = label;
}

interface StreamView {
  block: HTMLElement;
  pre: HTMLPreElement;
  text: Text;
  pending: string;
}

export class RunCardView {
  readonly root: HTMLElement;
  private readonly badge: HTMLElement;
  private readonly badgeLabel: HTMLElement;
  private readonly duration: HTMLElement;
  private readonly rerunButton: HTMLButtonElement;
  private readonly interruptButton: HTMLButtonElement;
  private readonly copyButton: HTMLButtonElement;
  private readonly streams: Record<Stream, StreamView>;
  private readonly errorBox: HTMLElement;
  private readonly displaysBox: HTMLElement;
  private readonly droppedNote: HTMLElement;
  private readonly emptyNote: HTMLElement;
  private readonly queuedNote: HTMLElement;

  constructor(
    readonly model: RunCard,
    private readonly host: CardHost,
  ) {
    const { run } = model;
    this.badgeLabel = el('span', { className: 'badge-label' });
    this.badge = el('span', { className: 'badge' }, [el('span', { className: 'spinner', attrs: { 'aria-hidden': 'true' } }), this.badgeLabel]);
    this.duration = el('span', { className: 'duration' });
    const started = el('time', { className: 'started', text: formatClock(run.startedAt), attrs: { datetime: new Date(run.startedAt).toISOString(), title: new Date(run.startedAt).toLocaleString() } });

    const meta = el('span', { className: 'card-meta' }, [
      el('span', { className: 'meta-item backend', text: BACKEND_LABELS[run.backend] ?? run.backend, attrs: { title: 'backend' } }),
      el('span', { className: 'meta-item session', text: run.session, attrs: { title: 'session' } }),
      el('span', { className: 'meta-item origin', text: ORIGIN_LABELS[run.origin] ?? run.origin, attrs: { title: 'started from' } }),
    ]);

    this.interruptButton = button('Interrupt', 'stop', 'card-button interrupt', 'Interrupt this run');
    this.interruptButton.addEventListener('click', () => {
      this.interruptButton.disabled = true;
      setButtonLabel(this.interruptButton, this.root.dataset.status === 'queued' ? 'Cancelling…' : 'Interrupting…');
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

    this.streams = { stdout: this.makeStream('stdout'), stderr: this.makeStream('stderr') };
    this.errorBox = el('div', { className: 'error-block', attrs: { role: 'alert' } });
    this.displaysBox = el('div', { className: 'displays' });
    this.droppedNote = el('p', { className: 'note displays-dropped' });
    this.emptyNote = el('p', { className: 'note empty-output', text: 'No output' });
    this.queuedNote = el('p', { className: 'note queued-note', text: run.waitingFor ? `waiting for ${run.waitingFor}` : '' });

    this.root = el('article', { className: 'run-card', attrs: { 'data-run-id': run.runId, tabindex: '-1' } }, [
      head,
      this.queuedNote,
      this.renderCode(run.code),
      this.streams.stdout.block,
      this.streams.stderr.block,
      this.errorBox,
      this.displaysBox,
      this.droppedNote,
      this.emptyNote,
    ]);

    this.setStreamText('stdout', model.stdout);
    this.setStreamText('stderr', model.stderr);
    for (const display of model.displays) this.displaysBox.append(renderDisplay(display));
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
    this.displaysBox.replaceChildren();
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
    this.streams[stream].pending += after.slice(before.length);
    this.host.scheduleFlush(this);
    this.host.changed();
  }

  /** Writes the output that arrived since the last frame. */
  flush(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const view = this.streams[stream];
      if (!view.pending) continue;
      const pre = view.pre;
      // Follow the output only when the person has not scrolled up to read something.
      const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      view.text.appendData(view.pending);
      view.pending = '';
      view.block.hidden = false;
      if (atBottom) pre.scrollTop = pre.scrollHeight;
    }
    this.updateEmptyNote();
  }

  addDisplay(display: Display): void {
    if (!this.running || this.model.displaysDropped) return;
    this.model.displays.push(display);
    this.displaysBox.append(renderDisplay(display));
    this.updateEmptyNote();
    this.host.changed();
  }

  finish(result: RunResult): void {
    this.model.result = result;
    this.model.stdout = appendCapped('', '', result.stdout);
    this.model.stderr = appendCapped('', this.model.stdout, result.stderr);
    this.setStreamText('stdout', this.model.stdout);
    this.setStreamText('stderr', this.model.stderr);
    // Displays streamed live are the same ones the result lists; re-render only when they differ.
    if (result.displays && result.displays.length !== this.model.displays.length && !this.model.displaysDropped) {
      this.model.displays = [...result.displays];
      this.displaysBox.replaceChildren(...this.model.displays.map(renderDisplay));
    }
    this.renderStatus();
    this.host.changed();
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

  private makeStream(stream: Stream): StreamView {
    const text = document.createTextNode('');
    const pre = el('pre', { className: 'stream-text' }, [text]);
    const block = el('div', { className: `stream ${stream}`, attrs: { 'aria-label': stream } }, stream === 'stderr' ? [el('span', { className: 'stream-label', text: 'stderr' }), pre] : [pre]);
    block.hidden = true;
    return { block, pre, text, pending: '' };
  }

  private setStreamText(stream: Stream, value: string): void {
    const view = this.streams[stream];
    view.pending = '';
    view.text.data = value;
    view.block.hidden = !value;
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
    this.badgeLabel.textContent = !result ? status : result.success ? 'ok' : failureLabel(result.diagnostics);
    this.queuedNote.hidden = !queued;
    if (queued) {
      setButtonLabel(this.interruptButton, 'Cancel');
      this.interruptButton.title = 'Cancel this run before it starts';
      this.interruptButton.setAttribute('aria-label', this.interruptButton.title);
    }
    if (result?.diagnostics) this.badge.dataset.errorType = result.diagnostics.error_type;
    this.duration.textContent = result ? formatDuration(result.duration_ms) : formatDuration(Date.now() - this.model.run.startedAt);
    this.interruptButton.hidden = !!result;
    this.rerunButton.hidden = !result;
    this.renderError(result?.diagnostics ?? null);
    this.updateEmptyNote();
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
      if (diagnostics.traceback) children.push(tracebackWithLinks(diagnostics.traceback, (file, line) => this.host.post({ type: 'openLocation', file, line })));
      if (diagnostics.hints?.length) {
        children.push(
          el('div', { className: 'hints' }, [
            el('span', { className: 'hints-title', text: 'Hints from past fixes' }),
            el('ul', {}, diagnostics.hints.map((hint) => el('li', { text: hint }))),
          ]),
        );
      }
    }
    this.errorBox.replaceChildren(...children);
    this.errorBox.hidden = children.length === 0;
  }

  private updateEmptyNote(): void {
    const m = this.model;
    this.emptyNote.hidden = this.running || !!m.stdout || !!m.stderr || m.displays.length > 0 || !!m.displaysDropped || !!m.result?.diagnostics;
  }

  private renderDroppedNote(): void {
    const dropped = this.model.displaysDropped;
    this.droppedNote.hidden = !dropped;
    if (dropped) this.droppedNote.textContent = droppedText(dropped);
  }

  private async copyOutput(): Promise<void> {
    const { stdout, stderr, result } = this.model;
    const text = [stdout, stderr, result?.diagnostics?.traceback ?? ''].filter(Boolean).join('\n');
    try {
      await navigator.clipboard.writeText(text);
      setButtonLabel(this.copyButton, 'Copied');
    } catch {
      setButtonLabel(this.copyButton, 'Copy failed');
    }
    window.setTimeout(() => setButtonLabel(this.copyButton, 'Copy'), 1500);
  }
}

/** The badge of a failed run: the Python exception, else what kind of failure; a refused run says it did not run. */
function failureLabel(diagnostics: Diagnostics | null): string {
  if (!diagnostics) return 'error';
  if (diagnostics.exception) return diagnostics.exception;
  return diagnostics.error_type === 'INVALID_ARGUMENT' ? 'not run' : diagnostics.error_type;
}

/** The traceback as text, its `File "...", line N` frames as links that open the file at that line. */
function tracebackWithLinks(traceback: string, open: (file: string, line: number) => void): HTMLPreElement {
  const parts: (Node | string)[] = [];
  let at = 0;
  for (const frame of tracebackFrames(traceback)) {
    parts.push(traceback.slice(at, frame.start));
    const link = el('a', { className: 'location', text: traceback.slice(frame.start, frame.end), attrs: { href: '#', title: `Open ${frame.file} at line ${frame.line}` } });
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
