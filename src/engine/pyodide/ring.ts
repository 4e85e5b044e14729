// Stdout/stderr travel from the worker to the host through shared memory instead of postMessage: code that
// prints and then computes for a minute keeps the worker's thread busy the whole time, and only memory the
// host can read on its own lets that output reach the user while Python is still running. Writing to it is
// a copy and an atomic store, so a print loop pays nothing per line for the hop.
//
// Layout: Int32 [write counter, read counter] then a power-of-two byte area. Counters grow by bytes written
// and wrap as int32; records are [tag byte, u32 little-endian length, payload].

export const STDOUT = 0;
export const STDERR = 1;
export type StreamId = typeof STDOUT | typeof STDERR;
/** A record's tag: the stream, plus DROPPED when the payload is a count (float64) of bytes dropped from it. */
export const DROPPED = 2;
export type RecordTag = number;

const WRITE = 0;
const READ = 1;
const CONTROL_BYTES = 8;
const HEADER_BYTES = 5;
const DEFAULT_DATA_BYTES = 1 << 18;

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
}

/** The worker's end. Only one thread may write. */
export class RingWriter extends RingView {
  private readonly header = new Uint8Array(HEADER_BYTES);

  /** Appends a record, splitting large payloads; blocks while the ring is full until the host drains it. */
  write(tag: RecordTag, bytes: Uint8Array): void {
    const maxPayload = this.data.length - HEADER_BYTES;
    for (let offset = 0; offset < bytes.length; offset += maxPayload) {
      const chunk = bytes.subarray(offset, offset + maxPayload);
      const size = HEADER_BYTES + chunk.length;
      const write = Atomics.load(this.control, WRITE);
      for (;;) {
        const read = Atomics.load(this.control, READ);
        if (this.data.length - ((write - read) | 0) >= size) break;
        Atomics.wait(this.control, READ, read);
      }
      this.header[0] = tag;
      new DataView(this.header.buffer).setUint32(1, chunk.length, true);
      this.copyIn(write, this.header);
      this.copyIn(write + HEADER_BYTES, chunk);
      Atomics.store(this.control, WRITE, (write + size) | 0);
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
  /** Hands every complete record written so far to `emit`, in order, and frees its space. */
  drain(emit: (tag: RecordTag, bytes: Uint8Array) => void): void {
    let read = Atomics.load(this.control, READ);
    const write = Atomics.load(this.control, WRITE);
    if (read === write) return;
    while (read !== write) {
      const header = this.copyOut(read, HEADER_BYTES);
      const length = new DataView(header.buffer).getUint32(1, true);
      emit(header[0], this.copyOut(read + HEADER_BYTES, length));
      read = (read + HEADER_BYTES + length) | 0;
    }
    Atomics.store(this.control, READ, read);
    Atomics.notify(this.control, READ);
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
