// Reading, inside the host, a file the backend cached (snapshotCache.ts): only bytes that hash to what the backend
// recorded when it cached them are used, so a file changed since (torn, or written by anyone else) is refused with
// a reason the backend logs.
import { createHash } from 'node:crypto';
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
