// Program output as a terminal (or Jupyter) shows it: a carriage return moves back to the start of the line so
// what follows overwrites it (progress bars such as tqdm's), a backspace steps back one character, "erase in
// line" clears, and SGR escape sequences colour the text instead of showing as `[31m`. Other escape sequences
// (cursor moves, titles, hyperlinks) are dropped, their text kept. Pure, and free of Node and DOM, so the
// engine (the text a model reads), the runs channel and the results webview all read output the same way.

/** A colour: one of the 16 ANSI colours (0-7, bright 8-15), or a CSS colour from a 256-colour or RGB sequence. */
export type TerminalColor = number | string;

export interface TextStyle {
  fg?: TerminalColor;
  bg?: TerminalColor;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
  strike?: boolean;
}

/** A stretch of one line in one style. */
export interface StyledText {
  text: string;
  style: TextStyle;
}

export type StyledLine = StyledText[];

const PLAIN: TextStyle = Object.freeze({});
/** An escape sequence longer than this is not one: its bytes are shown as text. */
const MAX_SEQUENCE = 256;

interface Cell {
  ch: string;
  style: TextStyle;
}

/**
 * A terminal's view of one stream, fed in chunks as they arrive (a sequence split across chunks is held until
 * it is whole). `feed` returns the lines that ended; `currentLine` is the one still being written.
 */
export class TerminalText {
  private cells: Cell[] = [];
  private column = 0;
  private style: TextStyle = PLAIN;
  /** An escape sequence begun in one chunk, finished in a later one. */
  private partial = '';

  /** The lines `text` completed (with what came before it), in order. */
  feed(text: string): StyledLine[] {
    const done: StyledLine[] = [];
    const input = this.partial + text;
    this.partial = '';
    let i = 0;
    while (i < input.length) {
      const ch = input[i]!;
      if (ch === '\x1b') {
        const end = sequenceEnd(input, i);
        if (end === undefined) {
          // Incomplete: wait for the rest, unless it is too long to be a sequence.
          if (input.length - i < MAX_SEQUENCE) {
            this.partial = input.slice(i);
            break;
          }
          i++; // the escape character alone, dropped: what follows shows as text
          continue;
        }
        this.apply(input.slice(i, end));
        i = end;
        continue;
      }
      if (ch === '\n') {
        done.push(this.endLine());
      } else if (ch === '\r') {
        this.column = 0;
      } else if (ch === '\b') {
        this.column = Math.max(0, this.column - 1);
      } else if (ch === '\t') {
        const stop = (Math.floor(this.column / 8) + 1) * 8;
        while (this.column < stop) this.write(' ');
      } else if (ch >= ' ' || ch > '\x7f') {
        this.write(ch);
      }
      i++;
    }
    return done;
  }

  /** The line being written now, as shown. */
  currentLine(): StyledLine {
    return runsOf(this.cells);
  }

  /** Whether a line is being written (something since the last newline). */
  get hasCurrentLine(): boolean {
    return this.cells.length > 0;
  }

  private endLine(): StyledLine {
    const line = runsOf(this.cells);
    this.cells = [];
    this.column = 0;
    return line;
  }

  private write(ch: string): void {
    while (this.cells.length < this.column) this.cells.push({ ch: ' ', style: PLAIN });
    this.cells[this.column] = { ch, style: this.style };
    this.column++;
  }

  private apply(sequence: string): void {
    if (sequence[1] !== '[') return; // OSC, charset selection and the like: nothing to show
    const final = sequence[sequence.length - 1];
    const params = sequence.slice(2, -1);
    if (final === 'm') this.style = withSgr(this.style, params);
    else if (final === 'K') {
      const mode = params === '' ? 0 : Number(params);
      if (mode === 0) this.cells.length = Math.min(this.cells.length, this.column);
      else if (mode === 1)
        for (let c = 0; c < Math.min(this.column + 1, this.cells.length); c++)
          this.cells[c] = { ch: ' ', style: PLAIN };
      else if (mode === 2) this.cells = [];
    } else if (final === 'G') this.column = Math.max(0, (Number(params) || 1) - 1);
    else if (final === 'D') this.column = Math.max(0, this.column - (Number(params) || 1));
    else if (final === 'C') this.column += Number(params) || 1;
  }
}

/** The index just past the escape sequence starting at `start`, or undefined if it is not complete yet. */
function sequenceEnd(text: string, start: number): number | undefined {
  const kind = text[start + 1];
  if (kind === undefined) return undefined;
  if (kind === '[') {
    // CSI: parameter and intermediate bytes, then one final byte from @ to ~.
    for (let i = start + 2; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x40 && code <= 0x7e) return i + 1;
      if (code < 0x20 || code > 0x3f) return i; // not a CSI byte: the sequence ends before it
    }
    return undefined;
  }
  if (kind === ']') {
    // OSC: ended by BEL or by ESC \.
    for (let i = start + 2; i < text.length; i++) {
      if (text[i] === '\x07') return i + 1;
      if (text[i] === '\x1b') return text[i + 1] === undefined ? undefined : text[i + 1] === '\\' ? i + 2 : i;
    }
    return undefined;
  }
  // Two-byte sequences (ESC 7, ESC =, ESC ( B...): the charset designators take one more byte.
  if ('()*+'.includes(kind)) return text[start + 2] === undefined ? undefined : start + 3;
  return start + 2;
}

/** `style` after the SGR parameters `params` ("1;31", "38;5;208", "" for reset). */
function withSgr(style: TextStyle, params: string): TextStyle {
  const codes = params === '' ? [0] : params.split(/[;:]/).map((part) => (part === '' ? 0 : Number(part)));
  let next: TextStyle = { ...style };
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i]!;
    if (code === 0) next = {};
    else if (code === 1) next.bold = true;
    else if (code === 2) next.dim = true;
    else if (code === 3) next.italic = true;
    else if (code === 4) next.underline = true;
    else if (code === 7) next.inverse = true;
    else if (code === 9) next.strike = true;
    else if (code === 22) {
      delete next.bold;
      delete next.dim;
    } else if (code === 23) delete next.italic;
    else if (code === 24) delete next.underline;
    else if (code === 27) delete next.inverse;
    else if (code === 29) delete next.strike;
    else if (code >= 30 && code <= 37) next.fg = code - 30;
    else if (code >= 90 && code <= 97) next.fg = code - 90 + 8;
    else if (code === 39) delete next.fg;
    else if (code >= 40 && code <= 47) next.bg = code - 40;
    else if (code >= 100 && code <= 107) next.bg = code - 100 + 8;
    else if (code === 49) delete next.bg;
    else if (code === 38 || code === 48) {
      const [color, used] = extendedColor(codes, i + 1);
      if (color !== undefined) next[code === 38 ? 'fg' : 'bg'] = color;
      i += used;
    }
  }
  return Object.keys(next).length ? next : PLAIN;
}

/** The colour of "5;n" or "2;r;g;b" at `at`, and how many codes it took. */
function extendedColor(codes: number[], at: number): [TerminalColor | undefined, number] {
  if (codes[at] === 5) {
    const n = codes[at + 1];
    if (n === undefined || n < 0 || n > 255) return [undefined, 2];
    return [n < 16 ? n : xterm256(n), 2];
  }
  if (codes[at] === 2) {
    const [r, g, b] = [codes[at + 1], codes[at + 2], codes[at + 3]].map((v) => Math.min(255, Math.max(0, v ?? 0)));
    return [`rgb(${r}, ${g}, ${b})`, 4];
  }
  return [undefined, 0];
}

/** xterm's 256-colour palette beyond the first 16: a 6×6×6 cube, then 24 greys. */
function xterm256(n: number): string {
  if (n >= 232) {
    const level = 8 + (n - 232) * 10;
    return `rgb(${level}, ${level}, ${level})`;
  }
  const index = n - 16;
  const step = (v: number) => (v === 0 ? 0 : 55 + v * 40);
  return `rgb(${step(Math.floor(index / 36))}, ${step(Math.floor(index / 6) % 6)}, ${step(index % 6)})`;
}

function runsOf(cells: Cell[]): StyledLine {
  const runs: StyledLine = [];
  for (const cell of cells) {
    const last = runs[runs.length - 1];
    if (last && last.style === cell.style) last.text += cell.ch;
    else runs.push({ text: cell.ch, style: cell.style });
  }
  return runs;
}

/** The text of a styled line. */
export function lineText(line: StyledLine): string {
  return line.map((run) => run.text).join('');
}

/**
 * `text` as a terminal finally shows it, without colours: each rewritten line once, in its last state. A text
 * that ended with a newline keeps it.
 */
export function finalText(text: string): string {
  if (!text.includes('\r') && !text.includes('\b') && !text.includes('\x1b')) return text;
  const terminal = new TerminalText();
  const lines = terminal.feed(text).map(lineText);
  if (terminal.hasCurrentLine) lines.push(lineText(terminal.currentLine()));
  else lines.push('');
  return lines.join('\n');
}
