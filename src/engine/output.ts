import { isHighSurrogate, isLowSurrogate } from './surrogates';

/**
 * Keeps a bounded copy of one output stream: the first half of the cap and the last half, with a marker in
 * between saying how much was dropped. Memory stays bounded however much the code prints.
 */
export class CappedOutput {
  private readonly halfBytes: number;
  private head = '';
  private headBytes = 0;
  private headFull = false;
  private tail: string[] = [];
  private tailBytes = 0;
  private totalBytes = 0;

  constructor(capBytes: number) {
    this.halfBytes = Math.max(1, Math.floor(capBytes / 2));
  }

  /** Records `text`; returns the part of it that still fits the head, i.e. what is worth streaming live. */
  append(text: string): string {
    if (!text) return '';
    const bytes = Buffer.byteLength(text);
    this.totalBytes += bytes;
    if (!this.headFull) {
      if (this.headBytes + bytes <= this.halfBytes) {
        this.head += text;
        this.headBytes += bytes;
        return text;
      }
      const fits = sliceToBytes(text, this.halfBytes - this.headBytes);
      this.head += fits;
      this.headBytes += Buffer.byteLength(fits);
      this.headFull = true;
      this.pushTail(text.slice(fits.length));
      return fits;
    }
    this.pushTail(text);
    return '';
  }

  /** Counts bytes a source dropped before they reached us: they sit between the head and what comes next. */
  skip(bytes: number): void {
    if (bytes <= 0) return;
    this.totalBytes += bytes;
    this.headFull = true;
  }

  get truncated(): boolean {
    return this.totalBytes > this.headBytes + this.tailBytes;
  }

  get byteLength(): number {
    return this.totalBytes;
  }

  text(): string {
    const { head, tail, marker } = this.kept();
    return head + marker + tail;
  }

  /**
   * What is kept, for cutting it at byte offsets of the stream (see outputOrder.ts): the head holds the stream's
   * bytes [0, headBytes), the tail its bytes [tailStart, byteLength), and `marker` stands for those in between.
   */
  kept(): { head: string; headBytes: number; tail: string; tailStart: number; marker: string } {
    const dropped = this.totalBytes - this.headBytes - this.tailBytes;
    return {
      head: this.head,
      headBytes: this.headBytes,
      tail: this.tail.join(''),
      tailStart: this.totalBytes - this.tailBytes,
      marker: dropped > 0 ? `\n… [${dropped} bytes of output truncated] …\n` : '',
    };
  }

  private pushTail(text: string): void {
    if (!text) return;
    this.tail.push(text);
    this.tailBytes += Buffer.byteLength(text);
    while (this.tailBytes > this.halfBytes) {
      const first = this.tail[0];
      const firstBytes = Buffer.byteLength(first);
      const excess = this.tailBytes - this.halfBytes;
      if (firstBytes <= excess) {
        this.tail.shift();
        this.tailBytes -= firstBytes;
      } else {
        const kept = sliceFromEndToBytes(first, firstBytes - excess);
        this.tail[0] = kept;
        this.tailBytes -= firstBytes - Buffer.byteLength(kept);
      }
    }
  }
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function sliceToBytes(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return text.slice(0, end);
}

/** The longest suffix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function sliceFromEndToBytes(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  // One pass from the end, in time linear in what is kept: a chunk of megabytes from an interpreter must not
  // cost the server quadratic time.
  let bytes = 0;
  let start = text.length;
  while (start > 0) {
    const code = text.charCodeAt(start - 1);
    const pair = isLowSurrogate(code) && start >= 2 && isHighSurrogate(text.charCodeAt(start - 2));
    // A lone surrogate is written as U+FFFD, three bytes, as Buffer.byteLength counts it.
    const size = pair ? 4 : code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    start -= pair ? 2 : 1;
  }
  return text.slice(start);
}
