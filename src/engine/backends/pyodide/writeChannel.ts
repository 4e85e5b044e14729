// The Pyodide thread's end of the channel to the server's write proxy (sandbox/writeProxyWire.ts): it writes a
// request and its bytes, then blocks reading the answer. Both pipes are its own, blocking, and reached only here.
import { createRequire } from 'node:module';
import { encodeFrame, FRAME_HEADER_BYTES } from '../../framing';
import type { WriteReply, WriteRequest } from '../../sandbox/writeProxy';
import { MAX_WRITE_REQUEST_BYTES } from '../../sandbox/writeProxyWire';

const fs = createRequire(__filename)('node:fs') as typeof import('node:fs');
const waitOn = new Int32Array(new SharedArrayBuffer(4));

/** Sends `request` (and `bytes` after it) and returns the server's answer. */
export function writeChannel(
  requestFd: number,
  replyFd: number,
): (request: WriteRequest, bytes?: Buffer) => WriteReply {
  const writeSync = fs.writeSync;
  const readSync = fs.readSync;
  const writeAll = (bytes: Buffer): void => {
    for (let sent = 0; sent < bytes.length;) {
      try {
        sent += writeSync(requestFd, bytes, sent, bytes.length - sent);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        Atomics.wait(waitOn, 0, 0, 1);
      }
    }
  };
  const readExactly = (length: number): Buffer => {
    const buffer = Buffer.alloc(length);
    for (let got = 0; got < length;) {
      let n: number;
      try {
        n = readSync(replyFd, buffer, got, length - got, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        Atomics.wait(waitOn, 0, 0, 1);
        continue;
      }
      if (n === 0) throw Object.assign(new Error('the server closed the write channel'), { code: 'EIO' });
      got += n;
    }
    return buffer;
  };
  return (request, bytes) => {
    writeAll(encodeFrame(request, MAX_WRITE_REQUEST_BYTES));
    if (bytes) writeAll(bytes);
    const length = readExactly(FRAME_HEADER_BYTES).readUInt32BE(0);
    return JSON.parse(readExactly(length).toString('utf8')) as WriteReply;
  };
}
