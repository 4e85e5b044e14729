// The bytes of the sandbox's workspace writes (writeProxy.ts), which come on a pipe of their own so that they are
// never JSON: the sandbox writes a request's bytes there, then sends the request, which says how many to take.
// Code in the sandbox can write to that pipe too, which changes nothing but what its own writes carry; what is
// buffered is bounded, past it the pipe is not read (the writer waits) until a request takes bytes.
import type { Readable } from 'node:stream';

export class WriteData {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private waiting: { length: number; resolve: (bytes: Buffer) => void; reject: (error: Error) => void } | undefined;
  private ended: Error | undefined;

  constructor(
    private readonly source: Readable,
    private readonly maxBuffered: number,
  ) {
    source.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      if (this.buffered >= this.maxBuffered) source.pause();
      this.settle();
    });
    const end = () => this.end(new Error('the sandbox closed its data pipe'));
    source.once('end', end);
    source.once('close', end);
    source.on('error', () => end());
  }

  /** The next `length` bytes, once they have come; one request at a time (the sandbox waits for each answer). */
  take(length: number): Promise<Buffer> {
    if (this.ended) return Promise.reject(this.ended);
    if (this.waiting) return Promise.reject(new Error('a second write is waiting for its bytes'));
    return new Promise((resolve, reject) => {
      this.waiting = { length, resolve, reject };
      this.settle();
      if (this.waiting) this.source.resume();
    });
  }

  /** Nothing more is taken: a request waiting for bytes fails. */
  end(reason: Error): void {
    this.ended ??= reason;
    this.waiting?.reject(this.ended);
    this.waiting = undefined;
    this.chunks = [];
    this.buffered = 0;
  }

  private settle(): void {
    const waiting = this.waiting;
    if (!waiting || this.buffered < waiting.length) return;
    const joined = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    const bytes = joined.subarray(0, waiting.length);
    const rest = joined.subarray(waiting.length);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    this.waiting = undefined;
    if (this.buffered < this.maxBuffered) this.source.resume();
    waiting.resolve(bytes);
  }
}
