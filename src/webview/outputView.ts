// A card's output in the order the program made it, as a notebook shows it: a block of text per stretch of one
// stream, the displays between them. Live chunks extend the last block; the result's `outputs` rebuild it.
import { TerminalText, type Display, type OutputItem, type StreamName } from '../engine/browser';
import { renderDisplay } from './displays';
import { el } from './dom';
import type { SaveImage } from './imageTools';
import { renderLine } from './terminalSpans';

/** Characters of stdout + stderr a card keeps; beyond it the rest of a flood is dropped with a note. */
export const CARD_TEXT_CAP = 200_000;
export const DROPPED_NOTE = `\n… [output beyond ${CARD_TEXT_CAP / 1000} K characters is not kept in this view]\n`;

/**
 * A stretch of one stream, read as a terminal shows it (a line rewritten with \r in place, colours as colours):
 * the lines that ended, then the one being written, redrawn at each flush.
 */
interface TextBlock {
  stream: StreamName;
  block: HTMLElement;
  pre: HTMLPreElement;
  terminal: TerminalText;
  current: HTMLSpanElement;
  pending: string;
}

export class OutputView {
  readonly root = el('div', { className: 'outputs' });
  private last: TextBlock | undefined;
  private readonly pending = new Set<TextBlock>();
  private readonly displayNodes: HTMLElement[] = [];
  private chars = 0;
  private capped = false;

  constructor(private readonly save?: SaveImage) {}

  /** Live text: shown on the next flush(), within the card's cap. Returns what was kept of it. */
  appendText(stream: StreamName, text: string): string {
    const kept = this.take(text);
    if (!kept) return '';
    const block = this.blockFor(stream);
    block.pending += kept;
    this.pending.add(block);
    return kept;
  }

  addDisplay(display: Display): void {
    const node = renderDisplay(display, this.save);
    this.displayNodes.push(node);
    this.root.append(node);
    this.last = undefined;
  }

  /** Writes the text that arrived since the last flush, following it where the person has not scrolled up. */
  flush(): void {
    for (const block of this.pending) {
      const { pre } = block;
      const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      const ended = block.terminal.feed(block.pending);
      block.pending = '';
      if (ended.length) block.current.before(...ended.flatMap((line) => [...renderLine(line), '\n']));
      block.current.replaceChildren(...renderLine(block.terminal.currentLine()));
      if (atBottom) pre.scrollTop = pre.scrollHeight;
    }
    this.pending.clear();
  }

  /** Shows `outputs` in their order, each display taken from `displays` (absent when no longer kept). */
  showOrdered(outputs: readonly OutputItem[], displays: readonly Display[]): void {
    this.reset();
    for (const item of outputs) {
      if (item.type === 'display') {
        const display = displays[item.index];
        if (display) this.addDisplay(display);
      } else if (item.type === 'execute_result') {
        // Its richer form while the page keeps it, else its text.
        const display = item.index === undefined ? undefined : displays[item.index];
        this.addDisplay(display ?? { mime: 'text/plain', data: item.text });
      } else {
        this.appendText(item.name, item.text);
      }
    }
    this.flush();
  }

  /** Shows stdout, then stderr, then the displays: a run whose result has no `outputs`, or one still running after a reload. */
  showGrouped(stdout: string, stderr: string, displays: readonly Display[]): void {
    this.showOrdered(
      [
        { type: 'stream', name: 'stdout', text: stdout },
        { type: 'stream', name: 'stderr', text: stderr },
        ...displays.map((_, index) => ({ type: 'display' as const, index })),
      ],
      displays,
    );
  }

  /** Removes the displays (the page keeps only so much); the text stays where it was. */
  dropDisplays(): void {
    for (const node of this.displayNodes.splice(0)) node.remove();
  }

  /** The text as shown, in order, with "stderr:" before stderr's blocks; for Copy. */
  text(): string {
    return Array.from(this.root.querySelectorAll<HTMLElement>('.stream'))
      .map((block) =>
        block.classList.contains('stderr')
          ? `stderr:\n${block.querySelector('pre')?.textContent ?? ''}`
          : (block.querySelector('pre')?.textContent ?? ''),
      )
      .join('\n');
  }

  private reset(): void {
    this.root.replaceChildren();
    this.displayNodes.length = 0;
    this.pending.clear();
    this.last = undefined;
    this.chars = 0;
    this.capped = false;
  }

  private take(text: string): string {
    if (!text || this.capped) return '';
    const room = CARD_TEXT_CAP - this.chars;
    if (text.length <= room) {
      this.chars += text.length;
      return text;
    }
    this.capped = true;
    this.chars = CARD_TEXT_CAP;
    return text.slice(0, Math.max(0, room)) + DROPPED_NOTE;
  }

  private blockFor(stream: StreamName): TextBlock {
    if (this.last?.stream === stream) return this.last;
    const current = el('span', { className: 'current-line' });
    const pre = el('pre', { className: 'stream-text' }, [current]);
    const block = el(
      'div',
      { className: `stream ${stream}`, attrs: { 'aria-label': stream } },
      stream === 'stderr' ? [el('span', { className: 'stream-label', text: 'stderr' }), pre] : [pre],
    );
    this.root.append(block);
    this.last = { stream, block, pre, terminal: new TerminalText(), current, pending: '' };
    return this.last;
  }
}
