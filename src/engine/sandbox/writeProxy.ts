// Workspace writes the server makes for a bubblewrap sandbox. A mount can only cover a name that exists, so with
// workspace write on, a `.git` or a virtual environment made below the top level mid-session would be out of any
// mount's reach. Instead the workspace is mounted read-only, and Pyodide's file layer sends each write here: the
// path is checked as Deno's broker checks it (pathGrants.ts: names at any depth, real paths), and the server makes
// the write. Code that skips the file layer meets the read-only mount. The sandbox cannot change the workspace
// but through here, and the server checks and acts in one step of its event loop, so nothing moves between a
// check and its write. Requests and their bytes come on a channel of their own (writeProxyWire.ts).
import * as fs from 'node:fs';
import { z } from 'zod';
import { decide, type Grants } from './pathGrants';
import { MAX_WRITE_CHUNK_BYTES } from './writeProxyWire';

/** Files one sandbox may hold open for writing at once. */
export const MAX_OPEN_WRITES = 256;

const { O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_NOCTTY, O_SYNC, O_NOFOLLOW } = fs.constants;
const OPEN_FLAGS = O_WRONLY | O_RDWR | O_CREAT | O_EXCL | O_TRUNC | O_APPEND | O_NOCTTY | O_SYNC | O_NOFOLLOW;
/** Permission bits only: no set-user-id, set-group-id or sticky bit is made from the sandbox. */
const PERMISSION_BITS = 0o777;

const target = z.string().min(1).max(4096);
const handle = z.number().int().positive();
const mode = z.number().int().nonnegative();
const size = z.number().int().nonnegative();
const seconds = z.number().finite();
const request = z.discriminatedUnion('op', [
  z.object({ op: z.literal('open'), path: target, flags: z.number().int(), mode }).strict(),
  // `length` bytes from the data pipe.
  z
    .object({
      op: z.literal('write'),
      handle,
      length: z.number().int().positive().max(MAX_WRITE_CHUNK_BYTES),
      position: size.nullable(),
    })
    .strict(),
  // With `write`: the file's last bytes, written before it is closed (one request instead of two).
  z
    .object({
      op: z.literal('close'),
      handle,
      write: z
        .object({ length: z.number().int().positive().max(MAX_WRITE_CHUNK_BYTES), position: size.nullable() })
        .strict()
        .optional(),
    })
    .strict(),
  z.object({ op: z.literal('ftruncate'), handle, length: size }).strict(),
  z.object({ op: z.literal('fchmod'), handle, mode }).strict(),
  z.object({ op: z.literal('futimes'), handle, atime: seconds, mtime: seconds }).strict(),
  z.object({ op: z.literal('create'), path: target, mode }).strict(),
  z.object({ op: z.literal('mkdir'), path: target, mode }).strict(),
  z.object({ op: z.literal('rename'), from: target, to: target }).strict(),
  z.object({ op: z.literal('unlink'), path: target }).strict(),
  z.object({ op: z.literal('rmdir'), path: target }).strict(),
  z.object({ op: z.literal('truncate'), path: target, length: size }).strict(),
  z.object({ op: z.literal('chmod'), path: target, mode }).strict(),
  z.object({ op: z.literal('utimes'), path: target, atime: seconds, mtime: seconds }).strict(),
]);

export type WriteRequest = z.infer<typeof request>;
/** `code` is a Node error code ('EACCES' when the grants refuse), which the sandbox's file layer turns into errno. */
export type WriteReply = { value: number | null } | { error: { code: string; message: string } };

class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class WriteProxy {
  private readonly open = new Map<number, number>();
  private lastHandle = 0;

  constructor(private readonly grants: Grants) {}

  /**
   * The reply to one request from the sandbox, with the bytes that followed it (as many as it named: see
   * writeRequests.ts); anything malformed is refused, never thrown.
   */
  answer(params: unknown, bytes?: Buffer): WriteReply {
    const parsed = request.safeParse(params);
    if (!parsed.success) return { error: { code: 'EINVAL', message: 'not a workspace write request' } };
    try {
      const call = parsed.data;
      if (call.op === 'write')
        return { value: fs.writeSync(this.fd(call.handle), bytes!, 0, call.length, call.position) };
      if (call.op === 'close' && call.write) {
        try {
          return { value: fs.writeSync(this.fd(call.handle), bytes!, 0, call.write.length, call.write.position) };
        } finally {
          this.make({ op: 'close', handle: call.handle });
        }
      }
      return { value: this.make(call) };
    } catch (error) {
      if (error instanceof Refusal) return { error: { code: error.code, message: error.message } };
      const code = (error as NodeJS.ErrnoException).code;
      return { error: { code: typeof code === 'string' ? code : 'EIO', message: String(error) } };
    }
  }

  /** Closes what the sandbox left open: when it ends, whatever way. */
  dispose(): void {
    for (const fd of this.open.values()) fs.closeSync(fd);
    this.open.clear();
  }

  private make(call: Exclude<WriteRequest, { op: 'write' }>): number | null {
    switch (call.op) {
      case 'open': {
        if ((call.flags & ~OPEN_FLAGS) !== 0 || (call.flags & (O_WRONLY | O_RDWR)) === 0)
          throw new Refusal('EINVAL', 'only opening for writing comes here');
        if (this.open.size >= MAX_OPEN_WRITES)
          throw new Refusal('EMFILE', `at most ${MAX_OPEN_WRITES} workspace files are open for writing at once`);
        this.check(call.path);
        const fd = fs.openSync(call.path, call.flags | O_NOFOLLOW, call.mode & PERMISSION_BITS);
        this.open.set(++this.lastHandle, fd);
        return this.lastHandle;
      }
      case 'close': {
        const fd = this.fd(call.handle);
        this.open.delete(call.handle);
        fs.closeSync(fd);
        return null;
      }
      case 'ftruncate':
        fs.ftruncateSync(this.fd(call.handle), call.length);
        return null;
      case 'fchmod':
        fs.fchmodSync(this.fd(call.handle), call.mode & PERMISSION_BITS);
        return null;
      case 'futimes':
        fs.futimesSync(this.fd(call.handle), call.atime, call.mtime);
        return null;
      case 'create':
        this.check(call.path);
        fs.closeSync(fs.openSync(call.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, call.mode & PERMISSION_BITS));
        return null;
      case 'mkdir':
        this.check(call.path);
        fs.mkdirSync(call.path, call.mode & PERMISSION_BITS);
        return null;
      case 'rename':
        this.check(call.from);
        this.check(call.to);
        fs.renameSync(call.from, call.to);
        return null;
      case 'unlink':
        this.check(call.path);
        fs.unlinkSync(call.path);
        return null;
      case 'rmdir':
        this.check(call.path);
        fs.rmdirSync(call.path);
        return null;
      case 'truncate':
        this.check(call.path);
        fs.truncateSync(call.path, call.length);
        return null;
      case 'chmod':
        this.check(call.path);
        fs.chmodSync(call.path, call.mode & PERMISSION_BITS);
        return null;
      case 'utimes':
        this.check(call.path);
        fs.utimesSync(call.path, call.atime, call.mtime);
        return null;
    }
  }

  private check(path: string): void {
    const answer = decide('write', path, this.grants);
    if (!answer.allow) throw new Refusal('EACCES', answer.reason);
  }

  private fd(handle: number): number {
    const fd = this.open.get(handle);
    if (fd === undefined) throw new Refusal('EBADF', `no workspace file is open as ${handle}`);
    return fd;
  }
}
