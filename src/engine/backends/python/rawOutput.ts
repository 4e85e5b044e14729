import { StringDecoder } from 'node:string_decoder';

const EMPTY = Buffer.alloc(0);

interface RunCap {
  liveLeft: number;
  tailCap: number;
  tail: Buffer[];
  tailBytes: number;
  dropped: number;
}

/**
 * One of the driver's real output pipes (fd 1 or 2), where bytes written below sys.stdout arrive:
 * os.write, C extensions, subprocesses. The driver ends a run by writing `marker` here (unless it saw that
 * everything written was already read, when the session calls endRun instead); this splits the byte stream
 * at those markers so each byte is credited to the run that wrote it, and caps each run's share as the
 * driver caps its own streams (half the cap live, the last half kept for the end).
 */
export class RawOutputChannel {
  private marker: Buffer | undefined;
  /** The end of the last chunk when it could be the start of a marker split across chunks. */
  private carry = EMPTY;
  private decoder = new StringDecoder('utf8');
  private cap: RunCap | undefined;

  constructor(
    private readonly onText: (text: string) => void,
    private readonly onMarker: () => void,
    private readonly onDropped: (bytes: number) => void,
  ) {}

  /** The driver names its marker in its hello frame; until then no run has started, so none can arrive. */
  setMarker(marker: Buffer): void {
    this.marker = marker;
  }

  beginRun(capBytes: number): void {
    const live = Math.floor(capBytes / 2);
    this.cap = { liveLeft: live, tailCap: capBytes - live, tail: [], tailBytes: 0, dropped: 0 };
  }

  push(chunk: Buffer): void {
    const marker = this.marker;
    if (!marker) {
      this.emit(chunk);
      return;
    }
    let data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = EMPTY;
    for (let at = data.indexOf(marker); at >= 0; at = data.indexOf(marker)) {
      this.emit(data.subarray(0, at));
      this.finishRun();
      this.onMarker();
      data = data.subarray(at + marker.length);
    }
    const held = partialMarkerLength(data, marker);
    this.emit(data.subarray(0, data.length - held));
    if (held > 0) this.carry = Buffer.from(data.subarray(data.length - held));
  }

  /**
   * Ends the current run without a marker: the pipe closed, or the driver saw that everything written to
   * it was already read. Whatever was held back as a possible marker start is output after all.
   */
  endRun(): void {
    const carry = this.carry;
    this.carry = EMPTY;
    this.emit(carry);
    this.finishRun();
  }

  private emit(bytes: Buffer): void {
    if (bytes.length === 0) return;
    const cap = this.cap;
    if (!cap) {
      this.emitText(this.decoder.write(bytes));
      return;
    }
    let rest = bytes;
    if (cap.liveLeft > 0) {
      const live = rest.length <= cap.liveLeft ? rest.length : charBoundaryAtOrBefore(rest, cap.liveLeft);
      cap.liveLeft = live === rest.length ? cap.liveLeft - live : 0;
      this.emitText(this.decoder.write(rest.subarray(0, live)));
      rest = rest.subarray(live);
      if (rest.length === 0) return;
    }
    // Past the live budget: keep only the newest tailCap bytes (copied, since chunks are slices of pool memory).
    cap.tail.push(Buffer.from(rest));
    cap.tailBytes += rest.length;
    while (cap.tail.length > 0 && cap.tailBytes - cap.tail[0].length >= cap.tailCap) {
      const first = cap.tail.shift() as Buffer;
      cap.tailBytes -= first.length;
      cap.dropped += first.length;
    }
  }

  private finishRun(): void {
    this.emitText(this.decoder.end());
    this.decoder = new StringDecoder('utf8');
    const cap = this.cap;
    this.cap = undefined;
    if (!cap || cap.tail.length === 0) return;
    let tail = Buffer.concat(cap.tail, cap.tailBytes);
    let dropped = cap.dropped;
    if (tail.length > cap.tailCap) {
      const start = charStart(tail, tail.length - cap.tailCap);
      dropped += start;
      tail = tail.subarray(start);
    }
    if (dropped > 0) this.onDropped(dropped);
    this.emitText(tail.toString('utf8'));
  }

  private emitText(text: string): void {
    if (text) this.onText(text);
  }
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/** The largest index <= `index` that starts a UTF-8 character, so a cut never splits one. */
function charBoundaryAtOrBefore(bytes: Buffer, index: number): number {
  let at = index;
  while (at > 0 && index - at < 3 && isContinuation(bytes[at])) at--;
  return at;
}

/** The smallest index >= `index` that starts a UTF-8 character. */
function charStart(bytes: Buffer, index: number): number {
  let at = index;
  while (at < bytes.length && at - index < 3 && isContinuation(bytes[at])) at++;
  return at;
}

/** Length of the longest suffix of `data` that is a proper prefix of `marker`. */
function partialMarkerLength(data: Buffer, marker: Buffer): number {
  for (let length = Math.min(marker.length - 1, data.length); length > 0; length--) {
    const start = data.length - length;
    if (data[start] === marker[0] && data.subarray(start).equals(marker.subarray(0, length))) return length;
  }
  return 0;
}
