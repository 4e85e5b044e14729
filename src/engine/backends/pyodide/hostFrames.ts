// The host's side of the frame limit: the backend ends a host that sends a frame over
// MAX_FRAME_FROM_INTERPRETER_BYTES, so the host makes sure none of its legitimate messages needs one. Output is
// split into bounded chunks, an outcome's texts are bounded, a display that would not fit is cut (text) or replaced
// by a note; anything else too large is shrunk to a message that says so.
import { encodeFrame, FrameError, MAX_FRAME_FROM_INTERPRETER_BYTES } from '../../framing';
import { boundOutcome, MAX_DISPLAY_BYTES, MAX_RESULT_TEXT_CHARS } from '../../runLimits';
import { isHighSurrogate } from '../../surrogates';
import type { BackendDisplay } from '../contract';
import type { FromHost, OutputChunk } from './protocol';

/** Characters of output per 'output' frame: at most 6 bytes each as JSON, so 1.5 MiB. */
export const MAX_OUTPUT_CHUNK_CHARS = 256 * 1024;
/** Log lines, fatal errors and the like: plenty for a stack trace. */
const MAX_NOTE_CHARS = 64 * 1024;
/** Room in a frame for everything of a display but its data (type, run id, mime, title as JSON). */
const DISPLAY_ENVELOPE_BYTES = 16 * 1024;
const MIB = 1024 * 1024;
/** As the backend's schema allows (hostMessages.ts). */
const MAX_METHOD_CHARS = 200;
const MAX_LOST_REASON_CHARS = 10_000;

/** The frames that carry `message`, each within the limit, in order; a result's output goes in 'output' frames before it. */
export function framesFor(message: FromHost, maxBytes = MAX_FRAME_FROM_INTERPRETER_BYTES): Buffer[] {
  switch (message.type) {
    case 'result': {
      const output = splitOutput(message.output).map((chunk) =>
        encodeFrame({ type: 'output', runId: message.runId, ...chunk }, maxBytes),
      );
      return [
        ...output,
        encodeFrame(
          { type: 'result', runId: message.runId, outcome: boundOutcome(message.outcome), output: [] },
          maxBytes,
        ),
      ];
    }
    case 'output': {
      const { type: _type, runId, ...chunk } = message;
      return splitOutput([chunk]).map((part) => encodeFrame({ type: 'output', runId, ...part }, maxBytes));
    }
    case 'lost':
      // The backend's schema takes at most this much of a reason.
      return [encodeFrame({ ...message, reason: message.reason.slice(0, MAX_LOST_REASON_CHARS) }, maxBytes)];
    case 'display':
      return [
        encodeFrame(
          {
            type: 'display',
            runId: message.runId,
            display: fitDisplay(message.display, maxBytes - DISPLAY_ENVELOPE_BYTES),
          },
          maxBytes,
        ),
      ];
    default:
      try {
        return [encodeFrame(message, maxBytes)];
      } catch (error) {
        if (!(error instanceof FrameError)) throw error;
        return [encodeFrame(shrink(message), maxBytes)];
      }
  }
}

/** Why a host call cannot go to the backend as it is (Python gets this as the call's error), or undefined when it can. */
export function hostCallProblem(
  method: string,
  params: unknown,
  maxBytes = MAX_FRAME_FROM_INTERPRETER_BYTES,
): string | undefined {
  if (method.length > MAX_METHOD_CHARS) return `a host call's method name is at most ${MAX_METHOD_CHARS} characters`;
  try {
    encodeFrame({ type: 'hostCall', id: 0, runId: 'r'.repeat(100), method, params }, maxBytes - 32);
    return undefined;
  } catch (error) {
    return error instanceof FrameError
      ? `the parameters of this host call are too large to send (at most ${Math.floor(maxBytes / MIB)} MB as JSON)`
      : String(error);
  }
}

function splitOutput(chunks: OutputChunk[]): OutputChunk[] {
  const out: OutputChunk[] = [];
  for (const chunk of chunks) {
    if (!('text' in chunk) || chunk.text.length <= MAX_OUTPUT_CHUNK_CHARS) {
      out.push(chunk);
      continue;
    }
    for (let at = 0; at < chunk.text.length;) {
      let end = Math.min(chunk.text.length, at + MAX_OUTPUT_CHUNK_CHARS);
      // A surrogate pair stays in one chunk.
      if (end < chunk.text.length && isHighSurrogate(chunk.text.charCodeAt(end - 1))) end--;
      out.push({ stream: chunk.stream, text: chunk.text.slice(at, end) });
      at = end;
    }
  }
  return out;
}

/**
 * `display` with its data within `budget` bytes as JSON. Text is cut (escapes make JSON up to six times the
 * characters), anything else is replaced by a note; the engine applies its own, smaller, limit on top.
 */
export function fitDisplay(display: BackendDisplay, budget: number): BackendDisplay {
  const title = typeof display.title === 'string' ? display.title.slice(0, 1000) : undefined;
  // The value of the code's last expression, with its repr beside a richer form (bounded as the engine bounds it).
  const result = display.result === true;
  const text = result && typeof display.text === 'string' ? display.text.slice(0, MAX_RESULT_TEXT_CHARS) : undefined;
  if (text !== undefined) budget -= jsonBytes(text);
  const withTitle = (shown: BackendDisplay): BackendDisplay => ({
    ...shown,
    ...(title ? { title } : {}),
    ...(result ? { result: true } : {}),
    ...(text !== undefined ? { text } : {}),
  });
  const mime = String(display.mime).slice(0, 200);
  let data = String(display.data);
  let bytes = jsonBytes(data);
  if (bytes <= budget) return withTitle({ mime, data });
  const originalBytes = bytes;
  if (mime.startsWith('text/') && mime !== 'text/html') {
    const original = data.length;
    // Cut in proportion until it fits; uneven escaping may take a few rounds.
    for (let round = 0; round < 8 && bytes > budget; round++) {
      let keep = Math.floor((data.length * (budget - 256)) / bytes);
      if (keep > 0 && isHighSurrogate(data.charCodeAt(keep - 1))) keep--;
      data = data.slice(0, keep);
      bytes = jsonBytes(data) + 128;
    }
    if (bytes <= budget)
      return withTitle({
        mime,
        data: `${data}\n... [${original - data.length} characters not shown: a display's frame carries at most ${Math.floor(budget / MIB)} MB]`,
      });
  }
  return withTitle({
    mime: 'text/plain',
    data: `${mime} of ${(originalBytes / 1e6).toFixed(1)} MB not shown: a display carries at most ${MAX_DISPLAY_BYTES / MIB} MB`,
  });
}

/** A smaller message of the same meaning, for one that would not fit in a frame. */
function shrink(message: FromHost): FromHost {
  const note = (text: string) =>
    text.length > MAX_NOTE_CHARS
      ? `${text.slice(0, MAX_NOTE_CHARS)}\n... [${text.length - MAX_NOTE_CHARS} characters not shown]`
      : text;
  switch (message.type) {
    case 'log':
    case 'fatal':
      return { ...message, message: note(message.message) };
    case 'packagesDone':
      return {
        type: 'packagesDone',
        id: message.id,
        errors: [],
        versions: {},
        failed: 'the report of this install was too large to send',
      };
    default:
      throw new FrameError(`a ${message.type} message too large for a frame`);
  }
}

function jsonBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text));
}
