// The server's end of the write channel (writeProxyWire.ts): requests and their bytes read from the sandbox's
// pipe, in order, each answered on the other pipe before the next is read. Code in the sandbox can write to the
// request pipe too: a request is checked like any other, and a frame that is not one ends the sandbox.
import type { Readable, Writable } from 'node:stream';
import { encodeFrame, FRAME_HEADER_BYTES } from '../framing';
import { bytesFollowing, MAX_WRITE_REQUEST_BYTES } from './writeProxyWire';
import type { WriteReply } from './writeProxy';

export interface WriteRequestHandlers {
  /** The answer to one request and the bytes that came with it. */
  answer(request: unknown, bytes: Buffer | undefined): WriteReply;
  /** What came is not a request: the sandbox must end. */
  malformed(reason: string): void;
}

/** Reads requests from `requests` and writes each answer to `replies`, until the pipe ends or breaks its form. */
export function serveWriteRequests(requests: Readable, replies: Writable, handlers: WriteRequestHandlers): void {
  let chunks: Buffer[] = [];
  let buffered = 0;
  /** The request read, waiting for its bytes. */
  let waiting: { request: unknown; length: number } | undefined;
  let broken = false;

  const take = (length: number): Buffer => {
    const joined = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, buffered);
    const taken = joined.subarray(0, length);
    const rest = joined.subarray(length);
    chunks = rest.length > 0 ? [rest] : [];
    buffered = rest.length;
    return taken;
  };
  const fail = (reason: string): void => {
    broken = true;
    chunks = [];
    buffered = 0;
    handlers.malformed(reason);
  };

  /** Answers every whole request buffered; stops when the reader of the answers falls behind (see below). */
  const serve = (): void => {
    while (!broken && !replies.writableNeedDrain) {
      if (!waiting) {
        if (buffered < FRAME_HEADER_BYTES) return;
        if (chunks[0]!.length < FRAME_HEADER_BYTES) chunks = [Buffer.concat(chunks, buffered)];
        const length = chunks[0]!.readUInt32BE(0);
        if (length > MAX_WRITE_REQUEST_BYTES)
          return fail(`a workspace write request of ${length} bytes, over the limit of ${MAX_WRITE_REQUEST_BYTES}`);
        if (buffered < FRAME_HEADER_BYTES + length) return;
        take(FRAME_HEADER_BYTES);
        let request: unknown;
        try {
          request = JSON.parse(take(length).toString('utf8'));
        } catch {
          return fail('a workspace write request that is not JSON');
        }
        const count = bytesFollowing(request);
        if (count === undefined) return fail('a workspace write request naming a byte count that cannot be');
        waiting = { request, length: count };
      }
      if (buffered < waiting.length) return;
      const { request, length } = waiting;
      waiting = undefined;
      replies.write(encodeFrame(handlers.answer(request, length > 0 ? take(length) : undefined)));
    }
  };

  requests.on('data', (chunk: Buffer) => {
    if (broken) return;
    chunks.push(chunk);
    buffered += chunk.length;
    serve();
    // Code that sends requests without reading the answers is not read from until it does: the answers never
    // pile up here, nor do the requests (the sandbox's writes to its pipe wait instead).
    if (replies.writableNeedDrain) requests.pause();
  });
  replies.on('drain', () => {
    serve();
    if (!broken) requests.resume();
  });
  requests.on('error', () => undefined);
  replies.on('error', () => undefined);
}
