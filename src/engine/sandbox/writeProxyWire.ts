// The channel between the sandbox's file layer and the server's write proxy (writeProxy.ts), apart from the
// request schema, which stays out of the sandbox's bundle. The Pyodide thread writes a request and its bytes to one
// pipe and reads the answer from another, blocking: no other thread or process hands anything on between them.
// A request is a frame (a 4-byte big-endian length, then that much UTF-8 JSON); the bytes a `write` (or a `close`
// that carries the file's last bytes) names follow it raw, never as JSON. An answer is a frame.

/** Bytes of one write request's data; the sandbox splits larger writes. */
export const MAX_WRITE_CHUNK_BYTES = 4 * 1024 * 1024;
/** A request's JSON: two paths and a few numbers. */
export const MAX_WRITE_REQUEST_BYTES = 64 * 1024;

/** How many raw bytes follow a request, by its own word; undefined when it names a count that cannot be. */
export function bytesFollowing(request: unknown): number | undefined {
  const fields = request as { op?: unknown; length?: unknown; write?: { length?: unknown } } | null;
  const count =
    fields?.op === 'write' ? fields.length : fields?.op === 'close' && fields.write ? fields.write.length : 0;
  return typeof count === 'number' && Number.isInteger(count) && count >= 0 && count <= MAX_WRITE_CHUNK_BYTES
    ? count
    : undefined;
}
