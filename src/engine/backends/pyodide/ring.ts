// Stdout/stderr travel from the worker to the host through shared memory instead of postMessage: code that
// prints and then computes for a minute keeps the worker's thread busy the whole time, and only memory the
// host can read on its own lets that output reach the user while Python is still running. Writing to it is
// a copy and an atomic store, so a print loop pays nothing per line for the hop.
//
// Layout: Int32 [write counter, read counter] then a power-of-two byte area. Counters grow by bytes written
// and wrap as int32; records are [tag byte, u32 little-endian length, payload].
//
// The buffer is within reach of the code the worker runs (`import js` reaches workerData), so neither end
// believes it: each keeps its own copy of the counter only it moves, and the reader checks every record
// against what is waiting before it copies anything. A ring found changed by anyone else raises
// RingCorruption; the host then treats the instance as lost (host.ts), never waits on it or allocates for it.

export const STDOUT = 0;
export const STDERR = 1;
export type StreamId = typeof STDOUT | typeof STDERR;
/** A record's tag: the stream, plus DROPPED when the payload is a count (float64) of bytes dropped from it. */
export const DROPPED = 2;
/**
 * A record with no payload marking where a display came in the output: its data travels by message, which can
 * arrive before or after the text written after it, so the host places it here (host.ts).
 */
export const DISPLAY_MARK = 4;
export type RecordTag = number;

const WRITE = 0;
const READ = 1;
const CONTROL_BYTES = 8;
const HEADER_BYTES = 5;
const DEFAULT_DATA_BYTES = 1 << 18;
/** Every tag the writer uses: a stream, with or without DROPPED, or DISPLAY_MARK. */
const MAX_TAG = DISPLAY_MARK;
const DROPPED_PAYLOAD_BYTES = 8;

/** Someone other than the two ends changed the ring: nothing in it can be trusted any more. */
export class RingCorruption extends Error {}

export function createRing(dataBytes = DEFAULT_DATA_BYTES): SharedArrayBuffer {
  if (dataBytes < 64 || (dataBytes & (dataBytes - 1)) !== 0) throw new RangeError('ring size must be a power of two');
  return new SharedArrayBuffer(CONTROL_BYTES + dataBytes);
}

class RingView {
  protected readonly control: Int32Array;
  protected readonly data: Uint8Array;
  protected readonly mask: number;

  constructor(buffer: SharedArrayBuffer) {
    this.control = new Int32Array(buffer, 0, 2);
    this.data = new Uint8Array(buffer, CONTROL_BYTES);
    this.mask = this.data.length - 1;
  }

  /** Bytes between the two counters, which must lie within the ring. */
  protected span(from: number, to: number, what: string): number {
    const bytes = (to - from) | 0;
    if (bytes < 0 || bytes > this.data.length)
      throw new RingCorruption(`${what} ${bytes} bytes in a ring of ${this.data.length}`);
    return bytes;
  }
}

/** The worker's end. Only one thread may write. */
export class RingWriter extends RingView {
  private readonly header = new Uint8Array(HEADER_BYTES);
  /** The write counter as this end last stored it: only this end moves it. */
  private written: number;

  constructor(buffer: SharedArrayBuffer) {
    super(buffer);
    this.written = Atomics.load(this.control, WRITE);
  }

  /**
   * Appends a record (an empty one too: a mark), splitting large payloads; blocks while the ring is full until
   * the host drains it. Throws RingCorruption, writing nothing more, once the counters are not what the two
   * ends left.
   */
  write(tag: RecordTag, bytes: Uint8Array): void {
    const maxPayload = this.data.length - HEADER_BYTES;
    for (let offset = 0; offset === 0 || offset < bytes.length; offset += maxPayload) {
      const chunk = bytes.subarray(offset, offset + maxPayload);
      const size = HEADER_BYTES + chunk.length;
      const write = this.written;
      for (;;) {
        if (Atomics.load(this.control, WRITE) !== write) throw new RingCorruption('its write counter was changed');
        const read = Atomics.load(this.control, READ);
        if (this.data.length - this.span(read, write, 'the counters hold') >= size) break;
        Atomics.wait(this.control, READ, read);
      }
      this.header[0] = tag;
      new DataView(this.header.buffer).setUint32(1, chunk.length, true);
      this.copyIn(write, this.header);
      this.copyIn(write + HEADER_BYTES, chunk);
      this.written = (write + size) | 0;
      Atomics.store(this.control, WRITE, this.written);
    }
  }

  private copyIn(at: number, source: Uint8Array): void {
    const position = at & this.mask;
    const first = Math.min(source.length, this.data.length - position);
    this.data.set(source.subarray(0, first), position);
    if (first < source.length) this.data.set(source.subarray(first), 0);
  }
}

/** The host's end. */
export class RingReader extends RingView {
  /** The read counter as this end last stored it: only this end moves it. */
  private read: number;

  constructor(buffer: SharedArrayBuffer) {
    super(buffer);
    this.read = Atomics.load(this.control, READ);
  }

  /**
   * Hands every complete record written so far to `emit`, in order, and frees its space. Throws
   * RingCorruption, handing over nothing, when the counters or any waiting record are impossible.
   */
  drain(emit: (tag: RecordTag, bytes: Uint8Array) => void): void {
    const { write, records } = this.waiting();
    if (records.length === 0) return;
    // Moved only if it still holds what this end left: a change made since the check is caught here, never
    // overwritten (the other thread can write it at any moment).
    if (Atomics.compareExchange(this.control, READ, this.read, write) !== this.read)
      throw new RingCorruption('its read counter was changed');
    this.read = write;
    Atomics.notify(this.control, READ);
    for (const [tag, bytes] of records) emit(tag, bytes);
  }

  /** Throws RingCorruption if a drain now would; consumes nothing. */
  check(): void {
    this.waiting();
  }

  /** The waiting records, each checked against the ring before a byte of it is copied. */
  private waiting(): { write: number; records: [RecordTag, Uint8Array][] } {
    if (Atomics.load(this.control, READ) !== this.read) throw new RingCorruption('its read counter was changed');
    const write = Atomics.load(this.control, WRITE);
    const pending = this.span(this.read, write, 'the counters claim');
    const records: [RecordTag, Uint8Array][] = [];
    for (let offset = 0; offset < pending;) {
      if (pending - offset < HEADER_BYTES)
        throw new RingCorruption(`a record header is cut off at byte ${offset} of ${pending} waiting`);
      const header = this.copyOut(this.read + offset, HEADER_BYTES);
      const tag = header[0]!;
      const length = new DataView(header.buffer).getUint32(1, true);
      if (tag > MAX_TAG) throw new RingCorruption(`a record has the unknown tag ${tag}`);
      if (length > pending - offset - HEADER_BYTES)
        throw new RingCorruption(
          `a record claims ${length} bytes, more than the ${pending - offset - HEADER_BYTES} waiting after it`,
        );
      const payload = this.copyOut(this.read + offset + HEADER_BYTES, length);
      if (tag === DISPLAY_MARK && length !== 0) throw new RingCorruption('a display mark carries a payload');
      if (tag & DROPPED && !validDroppedCount(payload))
        throw new RingCorruption('a record of dropped bytes holds no count');
      records.push([tag, payload]);
      offset += HEADER_BYTES + length;
    }
    return { write, records };
  }

  // A private copy: the space is reused as soon as the read counter moves, and TextDecoder refuses shared memory.
  private copyOut(at: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    const position = at & this.mask;
    const first = Math.min(length, this.data.length - position);
    out.set(this.data.subarray(position, position + first));
    if (first < length) out.set(this.data.subarray(0, length - first), first);
    return out;
  }
}

function validDroppedCount(payload: Uint8Array): boolean {
  if (payload.length !== DROPPED_PAYLOAD_BYTES) return false;
  const count = new DataView(payload.buffer).getFloat64(0, true);
  return Number.isFinite(count) && count >= 0;
}
