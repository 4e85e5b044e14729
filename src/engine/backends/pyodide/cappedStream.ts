// A run's stdout or stderr in the Pyodide worker, capped where Python writes it.
import { DROPPED, type RecordTag, type StreamId } from './ring';

/**
 * Between runs, Python still writes when asyncio tasks it started keep going. Nobody drains the ring then,
 * and a full ring would block the worker's thread for good, so such output is bounded well below the ring's size;
 * it reaches the user with the next run.
 */
const BETWEEN_RUNS_BYTES = 16 * 1024;

/**
 * One stream of one run, capped at the source so a flood never crosses IPC: the first `budget` bytes go out
 * live, later bytes only update a tail of `budget` bytes that is sent, after a marker, when the run ends.
 */
export class CappedStream {
  private liveLeft = BETWEEN_RUNS_BYTES;
  private tailSize = 0;
  private tail = new Uint8Array(0);
  private tailEnd = 0;
  private tailFill = 0;
  private overflow = 0;

  constructor(
    private readonly stream: StreamId,
    /** Where records go: the worker's output ring. */
    private readonly toRing: (tag: RecordTag, bytes: Uint8Array) => void,
  ) {}

  begin(budget: number): void {
    this.liveLeft = budget;
    this.tailSize = budget;
    this.tailEnd = this.tailFill = this.overflow = 0;
  }

  /** Ends a run (sending the kept tail) and bounds what may be written until the next one begins. */
  end(): void {
    if (this.overflow > 0) this.sendTail();
    this.liveLeft = BETWEEN_RUNS_BYTES;
    this.tailSize = 0;
    this.overflow = 0;
  }

  write(bytes: Uint8Array): void {
    if (bytes.length <= this.liveLeft) {
      this.liveLeft -= bytes.length;
      this.toRing(this.stream, bytes);
      return;
    }
    let cut = this.liveLeft;
    while (cut > 0 && isContinuationByte(bytes[cut])) cut--;
    this.liveLeft = 0;
    if (cut > 0) this.toRing(this.stream, bytes.subarray(0, cut));
    this.keep(bytes.subarray(cut));
  }

  private sendTail(): void {
    let kept = this.orderedTail();
    let start = 0;
    while (start < kept.length && isContinuationByte(kept[start])) start++;
    kept = kept.subarray(start);
    const dropped = new Uint8Array(8);
    new DataView(dropped.buffer).setFloat64(0, this.overflow - kept.length, true);
    this.toRing(this.stream | DROPPED, dropped);
    this.toRing(this.stream, kept);
  }

  private keep(bytes: Uint8Array): void {
    this.overflow += bytes.length;
    const size = this.tailSize;
    if (size === 0) return;
    if (this.tail.length !== size) this.tail = new Uint8Array(size);
    if (bytes.length >= size) {
      this.tail.set(bytes.subarray(bytes.length - size));
      this.tailEnd = 0;
      this.tailFill = size;
      return;
    }
    const first = Math.min(bytes.length, size - this.tailEnd);
    this.tail.set(bytes.subarray(0, first), this.tailEnd);
    this.tail.set(bytes.subarray(first), 0);
    this.tailEnd = (this.tailEnd + bytes.length) % size;
    this.tailFill = Math.min(size, this.tailFill + bytes.length);
  }

  private orderedTail(): Uint8Array {
    if (this.tailFill < this.tailSize) return this.tail.subarray(0, this.tailFill);
    const ordered = new Uint8Array(this.tailSize);
    ordered.set(this.tail.subarray(this.tailEnd));
    ordered.set(this.tail.subarray(0, this.tailEnd), this.tailSize - this.tailEnd);
    return ordered;
  }
}

function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}
