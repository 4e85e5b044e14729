/**
 * The framed protocol between the engine and an interpreter process: each message is a 4-byte big-endian
 * length followed by that many bytes of UTF-8 JSON. Length-prefixing (rather than newline-delimited JSON)
 * lets a frame carry any text and lets the reader allocate once per frame.
 */

export const FRAME_HEADER_BYTES = 4;

/** Large enough for any legitimate message (code, a capped chunk of output, a tool result), small enough to stop a corrupt length from exhausting memory. */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

/**
 * Frames an interpreter process sends the server (a Pyodide host, a workspace-Python driver): the process runs the
 * code it is given, so what it sends is bounded here, from each frame's header, before its body is buffered.
 * A display (at most 5 MiB of data, see displayLimits.ts) fits with room to spare; the senders split output and
 * cut what else could be larger (backends/pyodide/hostFrames.ts, backends/python/driver.py), so no legitimate message is refused.
 */
export const MAX_FRAME_FROM_INTERPRETER_BYTES = 8 * 1024 * 1024;

export class FrameError extends Error {
  override name = 'FrameError';
}

/** Encodes one message as a frame. */
export function encodeFrame(message: unknown, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Buffer {
  const json = JSON.stringify(message);
  if (json === undefined) throw new FrameError('a frame must carry a JSON value');
  const length = Buffer.byteLength(json, 'utf8');
  if (length > maxFrameBytes)
    throw new FrameError(`frame of ${length} bytes exceeds the limit of ${maxFrameBytes} bytes`);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame.write(json, FRAME_HEADER_BYTES, 'utf8');
  return frame;
}

/**
 * Turns a byte stream back into messages, whatever the chunking: a frame split over many chunks, several
 * frames in one chunk, or both. After it throws, the stream is out of step and the decoder must be dropped.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Body length of the frame being read, or -1 while its header is still incomplete. */
  private bodyLength = -1;
  private failed = false;

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Bytes received but not yet returned as messages. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Adds a chunk and returns every message it completes, in order. */
  push(chunk: Buffer): unknown[] {
    if (this.failed) throw new FrameError('the frame stream is corrupt; no further frames can be read');
    const messages: unknown[] = [];
    if (chunk.length === 0) return messages;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    try {
      for (;;) {
        if (this.bodyLength < 0) {
          if (this.buffered < FRAME_HEADER_BYTES) break;
          const length = this.take(FRAME_HEADER_BYTES).readUInt32BE(0);
          if (length > this.maxFrameBytes) {
            throw new FrameError(`incoming frame of ${length} bytes exceeds the limit of ${this.maxFrameBytes} bytes`);
          }
          this.bodyLength = length;
        }
        if (this.buffered < this.bodyLength) break;
        const body = this.take(this.bodyLength);
        this.bodyLength = -1;
        messages.push(parseBody(body));
      }
    } catch (error) {
      this.failed = true;
      this.chunks = [];
      this.buffered = 0;
      throw error;
    }
    return messages;
  }

  /** Removes and returns the next `count` bytes; callers check `buffered` first. */
  private take(count: number): Buffer {
    const first = this.chunks[0];
    let out: Buffer;
    if (first.length >= count) {
      // The common case (whole frames inside one chunk) slices without copying.
      out = first.subarray(0, count);
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
    } else {
      // A frame spread over several chunks is joined once, when it is complete, so big frames stay linear.
      const joined = Buffer.concat(this.chunks, this.buffered);
      out = joined.subarray(0, count);
      this.chunks = joined.length > count ? [joined.subarray(count)] : [];
    }
    this.buffered -= count;
    return out;
  }
}

function parseBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new FrameError(`frame of ${body.length} bytes is not valid JSON: ${(error as Error).message}`);
  }
}
