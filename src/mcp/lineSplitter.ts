/** A piece of a newline-delimited byte stream: a whole line, or the news that a line was too long to keep. */
export type SplitLine =
  | { kind: 'line'; text: string }
  /** `bytes` is the line's full length; `head` and `tail` are its first and last bytes, so a caller can still read an id. */
  | { kind: 'tooLong'; bytes: number; head: Buffer; tail: Buffer };

/** How much of the start and of the end of an over-long line is kept. */
export const KEPT_EDGE_BYTES = 4096;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Splits bytes on '\n' (a '\r' before it is dropped) and never holds more than `maxLineBytes` of one line:
 * past that, the rest of the line is counted and thrown away as it streams in, keeping only its two edges.
 * Bytes, not strings, so a multi-byte character split across chunks is decoded whole.
 */
export class LineSplitter {
  private pieces: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while the current line is being discarded. */
  private overflow: { bytes: number; head: Buffer; tail: Buffer } | undefined;

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Buffer): SplitLine[] {
    const lines: SplitLine[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      this.take(chunk.subarray(start, newline));
      const line = this.finishLine();
      if (line) lines.push(line);
      start = newline + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
    return lines;
  }

  /** At end of input: the last line, when it had no '\n'. */
  end(): SplitLine[] {
    const line = this.finishLine();
    return line ? [line] : [];
  }

  private take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.overflow) {
      this.overflow.bytes += bytes.length;
      this.overflow.tail = lastBytes([this.overflow.tail, bytes], KEPT_EDGE_BYTES + 1);
      return;
    }
    this.pieces.push(bytes);
    this.pendingBytes += bytes.length;
    // One byte of slack: a line of exactly the limit may still be followed by the '\r' of its '\r\n'.
    if (this.pendingBytes > this.maxLineBytes + 1) {
      const held = Buffer.concat(this.pieces);
      // The tail keeps one byte more, for the '\r' that finishLine may strip.
      this.overflow = {
        bytes: held.length,
        head: Buffer.from(held.subarray(0, KEPT_EDGE_BYTES)),
        tail: lastBytes([held], KEPT_EDGE_BYTES + 1),
      };
      this.pieces = [];
      this.pendingBytes = 0;
    }
  }

  private finishLine(): SplitLine | undefined {
    const overflow = this.overflow;
    const held = Buffer.concat(this.pieces);
    this.pieces = [];
    this.pendingBytes = 0;
    this.overflow = undefined;
    if (overflow) {
      const tail = withoutCarriageReturn(overflow.tail);
      return {
        kind: 'tooLong',
        bytes: overflow.bytes - (overflow.tail.length - tail.length),
        head: overflow.head,
        tail: lastBytes([tail], KEPT_EDGE_BYTES),
      };
    }
    const line = withoutCarriageReturn(held);
    if (line.length > this.maxLineBytes)
      return {
        kind: 'tooLong',
        bytes: line.length,
        head: Buffer.from(line.subarray(0, KEPT_EDGE_BYTES)),
        tail: lastBytes([line], KEPT_EDGE_BYTES),
      };
    if (line.length === 0) return undefined;
    return { kind: 'line', text: line.toString('utf8') };
  }
}

function lastBytes(buffers: Buffer[], count: number): Buffer {
  const joined = Buffer.concat(buffers);
  return Buffer.from(joined.subarray(Math.max(0, joined.length - count)));
}

function withoutCarriageReturn(bytes: Buffer): Buffer {
  return bytes.at(-1) === CARRIAGE_RETURN ? bytes.subarray(0, -1) : bytes;
}
