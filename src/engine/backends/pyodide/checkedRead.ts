// Reading, inside the host, a file the backend cached (snapshotCache.ts): only bytes that hash to what the backend
// recorded when it cached them are used, so a file changed since (torn, or written by anyone else) is refused with
// a reason the backend logs.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { SnapshotRef } from './protocol';

export function readChecked<T extends ArrayBuffer | Uint8Array>(
  ref: SnapshotRef,
  read: (file: string) => T,
): { bytes: T } | { rejected: string } {
  let bytes: T;
  try {
    bytes = read(ref.file);
  } catch (error) {
    return { rejected: `it cannot be read (${String(error)})` };
  }
  const digest = createHash('sha256')
    .update(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))
    .digest('hex');
  return digest === ref.sha256 ? { bytes } : { rejected: 'it does not match the hash recorded when it was cached' };
}

/** A plain ArrayBuffer, not a view: Deno copies a typed array posted to a worker element by element, slowly. */
export function readWhole(file: string): ArrayBuffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = new ArrayBuffer(fs.fstatSync(fd).size);
    const bytes = new Uint8Array(buffer);
    for (let offset = 0; offset < bytes.length;) {
      const read = fs.readSync(fd, bytes, offset, bytes.length - offset, offset);
      if (read === 0) throw new Error('the file ended early');
      offset += read;
    }
    return buffer;
  } finally {
    fs.closeSync(fd);
  }
}
