// What the server keeps of one run, whatever the interpreter sends. displays.py applies the display limits in
// Python too, but only as a courtesy that saves the sending: the code a run executes can change anything in its
// interpreter (module globals such as `_code_mode_displays.MAX_PER_RUN` included), so the engine checks every
// display again, for every backend, before it is kept or passed on. Frames are bounded before that, from their
// headers (MAX_FRAME_FROM_INTERPRETER_BYTES in framing.ts), and output by CappedOutput.
import type { Display } from './types';
import type { BackendDisplay, BackendOutcome } from './backends/contract';
import { isHighSurrogate, isLowSurrogate } from './surrogates';

/** Displays a run shows; past it they are counted and one note says how many were left out. */
export const MAX_DISPLAYS_PER_RUN = 20;
/** Data of one display, as UTF-8 (images travel base64): text past it is cut, anything else becomes a note. */
export const MAX_DISPLAY_BYTES = 5 * 1024 * 1024;
/** The repr of a last expression's value (an execute_result's text), head and tail kept, as displays.py keeps it. */
export const MAX_RESULT_TEXT_CHARS = 64 * 1024;
/** The error message, and separately the traceback, of a run's outcome (head and tail kept). */
export const MAX_ERROR_TEXT_CHARS = 256 * 1024;
const MAX_MIME_CHARS = 200;
const MAX_TITLE_CHARS = 1000;

/**
 * How displays.py reports the displays it left out itself (over its own per-run limit): a display of this type
 * whose data is the count. The engine adds it to the ones it left out and shows one note for all of them; a
 * forged count changes nothing but the number in that note.
 */
export const DISPLAYS_DROPPED_MIME = 'application/vnd.code-mode.displays-dropped';
/** A reported count beyond this is taken as this. */
const MAX_REPORTED_DROPS = 1_000_000_000;

const MIB = 1024 * 1024;

/** The displays of one run (one attempt of it): admits at most MAX_DISPLAYS_PER_RUN, each bounded in size. */
export class RunDisplays {
  private admitted = 0;
  private dropped = 0;
  private results = 0;

  /**
   * The value of the code's last expression (a display marked `result`): its text, and its richer form as a display
   * when it has one, each bounded. The first of a run is always kept (it ends the run, after any number of
   * displays); another (sent by the code itself) counts as a display. Undefined when it is not kept.
   */
  admitResult(display: BackendDisplay): { text: string; display?: Display } | undefined {
    const { mime, data, text, title } = display as unknown as Record<string, unknown>;
    if (typeof mime !== 'string' || typeof data !== 'string') return undefined;
    if (this.results++ > 0) {
      if (this.admitted >= MAX_DISPLAYS_PER_RUN) {
        this.dropped = Math.min(this.dropped + 1, MAX_REPORTED_DROPS);
        return undefined;
      }
      this.admitted++;
    }
    const repr = headAndTail(typeof text === 'string' ? text : data, MAX_RESULT_TEXT_CHARS);
    if (mime === 'text/plain') return { text: repr };
    return {
      text: repr,
      display: boundDisplay(
        mime.slice(0, MAX_MIME_CHARS),
        data,
        typeof title === 'string' && title ? title.slice(0, MAX_TITLE_CHARS) : undefined,
      ),
    };
  }

  /**
   * The display to keep and show (cut, or a note in its place, when its data is too large); undefined when it is
   * not shown: past the per-run limit, not a display at all, or displays.py's count of the ones it left out.
   */
  admit(display: unknown): Display | undefined {
    if (typeof display !== 'object' || display === null) {
      this.dropped++;
      return undefined;
    }
    const { mime, data, title } = display as Record<string, unknown>;
    if (typeof mime !== 'string' || typeof data !== 'string') {
      this.dropped++;
      return undefined;
    }
    if (mime === DISPLAYS_DROPPED_MIME) {
      const count = Number(data);
      if (Number.isSafeInteger(count) && count > 0) this.dropped = Math.min(this.dropped + count, MAX_REPORTED_DROPS);
      return undefined;
    }
    if (this.admitted >= MAX_DISPLAYS_PER_RUN) {
      this.dropped = Math.min(this.dropped + 1, MAX_REPORTED_DROPS);
      return undefined;
    }
    this.admitted++;
    return boundDisplay(
      mime.slice(0, MAX_MIME_CHARS),
      data,
      typeof title === 'string' && title ? title.slice(0, MAX_TITLE_CHARS) : undefined,
    );
  }

  /** One note for every display left out so far (here or by displays.py), or undefined when none was; once. */
  takeNote(): Display | undefined {
    if (this.dropped === 0) return undefined;
    const data = `${this.dropped} more display(s) not shown: at most ${MAX_DISPLAYS_PER_RUN} per run`;
    this.dropped = 0;
    return { mime: 'text/plain', data };
  }
}

/** The display within MAX_DISPLAY_BYTES: as it is, its text cut with a note, or a note instead of it. */
function boundDisplay(mime: string, data: string, title: string | undefined): Display {
  const withTitle = (display: Display): Display => (title === undefined ? display : { ...display, title });
  // A UTF-16 code unit is at most 3 bytes of UTF-8: short data needs no counting.
  if (data.length * 3 <= MAX_DISPLAY_BYTES) return withTitle({ mime, data });
  const bytes = Buffer.byteLength(data);
  if (bytes <= MAX_DISPLAY_BYTES) return withTitle({ mime, data });
  if (mime.startsWith('text/') && mime !== 'text/html') return withTitle({ mime, data: cutText(data, bytes) });
  return withTitle({
    mime: 'text/plain',
    data: `${mime} of ${(bytes / 1e6).toFixed(1)} MB not shown: a display carries at most ${MAX_DISPLAY_BYTES / MIB} MB`,
  });
}

/** The head of `data` with a note, within MAX_DISPLAY_BYTES, never splitting a character. */
function cutText(data: string, bytes: number): string {
  const encoded = Buffer.from(data, 'utf8');
  // Room for the note, whose number has at most 10 digits.
  let cut = MAX_DISPLAY_BYTES - 64;
  while (cut > 0 && (encoded[cut] & 0xc0) === 0x80) cut--;
  return `${encoded.toString('utf8', 0, cut)}\n... [${bytes - cut} bytes not shown: a display carries at most ${MAX_DISPLAY_BYTES / MIB} MB]`;
}

/** `outcome` with its message and traceback within MAX_ERROR_TEXT_CHARS each (a traceback keeps its end). */
export function boundOutcome(outcome: BackendOutcome): BackendOutcome {
  if (outcome.status === 'crashed') return { ...outcome, message: headAndTail(outcome.message, MAX_ERROR_TEXT_CHARS) };
  if (outcome.status !== 'error') return outcome;
  return {
    ...outcome,
    message: headAndTail(outcome.message, MAX_ERROR_TEXT_CHARS),
    traceback: headAndTail(outcome.traceback, MAX_ERROR_TEXT_CHARS),
  };
}

/** `text` within `max` UTF-16 code units: its head and tail around a note saying how much was left out and why. */
export function headAndTail(text: string, max: number, leftOut = 'not shown'): string {
  if (typeof text !== 'string') return String(text);
  if (text.length <= max) return text;
  let half = Math.floor((max - 80) / 2);
  // Neither half ends inside a surrogate pair.
  if (isHighSurrogate(text.charCodeAt(half - 1))) half--;
  let tailStart = text.length - half;
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  return `${text.slice(0, half)}\n... [${tailStart - half} characters ${leftOut}] ...\n${text.slice(tailStart)}`;
}
