// Pyodide's file layer writing to the workspace through the server, where the sandbox mounts the workspace
// read-only (sandbox/writeProxy.ts says why). Emscripten's NODEFS works through node:fs; the calls of it that
// would change something under a routed folder go to the server instead. A file opened for writing there has two
// descriptors: the server's, which takes the writes, and a read-only one here, which NODEFS reads and stats
// (the same file, so it sees every write at once). Code that goes around this layer meets the read-only mount.
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { isInside } from '../../sandbox/fileView';
import type { WriteReply, WriteRequest } from '../../sandbox/writeProxy';
import { MAX_WRITE_CHUNK_BYTES } from '../../sandbox/writeProxyWire';

/** Emscripten's FS.open, through which Python opens files (flags and mode as numbers). */
export interface EmscriptenOpen {
  open(target: unknown, flags?: unknown, mode?: unknown): unknown;
}

/** Sends one request (and the bytes it names) to the server and blocks until it answers. */
export type AskServer = (request: WriteRequest, bytes?: Buffer) => WriteReply;

type NodeFs = typeof import('node:fs');
type Time = string | number | Date;

/** The module object NODEFS itself calls through (a namespace import would be a copy). */
const nodeFs = createRequire(__filename)('node:fs') as NodeFs;
const { O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND } = nodeFs.constants;
/** Node's flag strings that open for writing, as numbers (NODEFS passes numbers; other callers may not). */
const WRITE_MODES: Record<string, number> = {
  w: O_WRONLY | O_CREAT | O_TRUNC,
  wx: O_WRONLY | O_CREAT | O_TRUNC | O_EXCL,
  'w+': O_RDWR | O_CREAT | O_TRUNC,
  'wx+': O_RDWR | O_CREAT | O_TRUNC | O_EXCL,
  a: O_WRONLY | O_CREAT | O_APPEND,
  ax: O_WRONLY | O_CREAT | O_APPEND | O_EXCL,
  'a+': O_RDWR | O_CREAT | O_APPEND,
  'ax+': O_RDWR | O_CREAT | O_APPEND | O_EXCL,
  'r+': O_RDWR,
};

/**
 * From now on, writes under `roots` made through node:fs in this thread are asked of the server. `note` hears why
 * the grants refused one (the error Python sees carries only its errno), and a held write that failed where no
 * call could raise it. The function returned sends what is held: before anything outside this thread could look
 * at the file (a host call, a sleep, the end of a cell).
 */
export function routeWorkspaceWrites(
  roots: readonly string[],
  ask: AskServer,
  note: (text: string) => void,
  emscriptenFs: EmscriptenOpen,
): () => void {
  if (roots.length === 0) return () => undefined;
  const fs = nodeFs;
  const original = {
    openSync: fs.openSync,
    closeSync: fs.closeSync,
    writeSync: fs.writeSync,
    writeFileSync: fs.writeFileSync,
  };
  /** Local read-only descriptor -> the server's handle of the same file. */
  const serverHandles = new Map<number, number>();

  const routed = (target: unknown): target is string =>
    typeof target === 'string' && roots.some((root) => isInside(path.resolve(target), root));

  /**
   * Writes to one file at consecutive positions, held until they fill a request or anything else happens: Python
   * writes in 8 KiB pieces, and a request each would cost a round trip to the server each.
   */
  let held: { handle: number; position: number; chunks: Buffer[]; bytes: number } | undefined;

  /**
   * A new file's creation, held while Emscripten's FS.open makes it (NODEFS makes it empty, then opens it): sent
   * with the open that follows, as one request with O_CREAT, or on its own before anything else.
   */
  let creating: { path: string; mode: number } | undefined;
  /** The same for an existing file FS.open truncates before opening it: sent as O_TRUNC on the open. */
  let truncating: string | undefined;
  /** While FS.open runs: the permission bits it was asked for, and the file it made (which it then chmods to them). */
  let insideOpen: { mode: number; created?: string } | undefined;

  const call = (request: WriteRequest): number | null => {
    flush();
    return send(request);
  };
  const send = (request: WriteRequest, bytes?: Buffer): number | null => {
    const reply = ask(request, bytes);
    if ('value' in reply) return reply.value;
    if (reply.error.code === 'EACCES') note(`[sandbox] ${reply.error.message}`);
    throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
  };
  /** `bytes` written at `at` (null: where the server's descriptor stands), at most MAX_WRITE_CHUNK_BYTES a request. */
  const sendWrites = (handle: number, bytes: Buffer, at: number | null): number => {
    let written = 0;
    while (written < bytes.length) {
      const chunk = bytes.subarray(written, written + MAX_WRITE_CHUNK_BYTES);
      const position = at === null ? null : at + written;
      const n = send({ op: 'write', handle, length: chunk.length, position }, chunk)!;
      written += n;
      if (n < chunk.length) break;
    }
    return written;
  };
  function flush(): void {
    if (truncating) {
      const target = truncating;
      truncating = undefined;
      send({ op: 'truncate', path: target, length: 0 });
    }
    if (creating) {
      const { path: target, mode } = creating;
      creating = undefined;
      send({ op: 'create', path: target, mode });
    }
    if (!held) return;
    const { handle, position, chunks, bytes } = held;
    held = undefined;
    const written = sendWrites(handle, Buffer.concat(chunks, bytes), position);
    if (written < bytes)
      throw Object.assign(new Error(`${bytes - written} of ${bytes} bytes were not written`), { code: 'EIO' });
  }
  const exdev = (): never => {
    throw Object.assign(new Error('cross-device link not permitted'), { code: 'EXDEV' });
  };

  const handleOf = (fd: unknown): number | undefined => (typeof fd === 'number' ? serverHandles.get(fd) : undefined);

  const writeFlags = (flags: unknown): number | undefined => {
    const bits = typeof flags === 'number' ? flags : typeof flags === 'string' ? WRITE_MODES[flags] : undefined;
    return bits !== undefined && (bits & (O_WRONLY | O_RDWR)) !== 0 ? bits : undefined;
  };

  fs.openSync = ((target: unknown, flags?: unknown, mode?: unknown) => {
    const bits = writeFlags(flags);
    // Reads (most opens) are told apart by their flags, before any path is resolved.
    if (bits === undefined || !routed(target))
      return original.openSync(target as string, flags as never, mode as never);
    const absolute = path.resolve(target);
    let request: WriteRequest = {
      op: 'open',
      path: absolute,
      flags: bits,
      mode: typeof mode === 'number' ? mode : 0o666,
    };
    if (creating?.path === absolute) {
      request = { ...request, flags: bits | O_CREAT, mode: creating.mode };
      creating = undefined;
      if (insideOpen) insideOpen.created = absolute;
    } else if (truncating === absolute) {
      request = { ...request, flags: bits | O_TRUNC };
      truncating = undefined;
    }
    const handle = call(request)!;
    let local: number;
    try {
      local = original.openSync(absolute, 'r');
    } catch {
      // A file the server made unreadable (mode 0200): reads fail as they would, writes still go to the server.
      local = original.openSync('/dev/null', 'r');
    }
    serverHandles.set(local, handle);
    return local;
  }) as NodeFs['openSync'];

  fs.closeSync = ((fd: number) => {
    const handle = handleOf(fd);
    if (handle === undefined) return original.closeSync(fd);
    let failure: unknown;
    // The file's own held bytes go with its close: one request, not two.
    let last: { length: number; position: number } | undefined;
    let lastBytes: Buffer | undefined;
    if (held?.handle === handle && held.bytes <= MAX_WRITE_CHUNK_BYTES) {
      lastBytes = Buffer.concat(held.chunks, held.bytes);
      last = { length: lastBytes.length, position: held.position };
      held = undefined;
    } else {
      try {
        flush();
      } catch (error) {
        failure = error;
      }
    }
    serverHandles.delete(fd);
    original.closeSync(fd);
    const written = send({ op: 'close', handle, ...(last ? { write: last } : {}) }, lastBytes);
    if (last && written !== last.length)
      failure ??= Object.assign(new Error(`${last.length - (written ?? 0)} bytes were not written`), { code: 'EIO' });
    if (failure) throw failure;
  }) as NodeFs['closeSync'];

  fs.writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    const handle = handleOf(fd);
    if (handle === undefined) return (original.writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
    let bytes: Buffer;
    let position: unknown;
    if (typeof data === 'string') {
      bytes = Buffer.from(data, typeof rest[1] === 'string' ? (rest[1] as BufferEncoding) : 'utf8');
      position = rest[0];
    } else {
      const view = data as ArrayBufferView;
      const offset = typeof rest[0] === 'number' ? rest[0] : 0;
      const length = typeof rest[1] === 'number' ? rest[1] : view.byteLength - offset;
      bytes = Buffer.from(view.buffer, view.byteOffset + offset, length);
      position = rest[2];
    }
    if (typeof position !== 'number') {
      flush();
      return sendWrites(handle, bytes, null);
    }
    if (held && (held.handle !== handle || held.position + held.bytes !== position)) flush();
    held ??= { handle, position, chunks: [], bytes: 0 };
    // A copy: the bytes are a view of Pyodide's heap, which the next write reuses.
    held.chunks.push(Buffer.from(bytes));
    held.bytes += bytes.length;
    if (held.bytes >= MAX_WRITE_CHUNK_BYTES) flush();
    return bytes.length;
  }) as NodeFs['writeSync'];

  /** Replaces `name`; the replacement reaches the function it replaced as `previous`. */
  const wrap = (
    name: keyof NodeFs,
    make: (previous: (...args: unknown[]) => unknown) => (...args: never[]) => unknown,
  ): void => {
    const previous = fs[name] as unknown as (...args: unknown[]) => unknown;
    (fs as unknown as Record<string, unknown>)[name] = make(previous);
  };

  const seconds = (time: Time): number =>
    time instanceof Date ? time.getTime() / 1000 : typeof time === 'string' ? Number(time) : time;

  wrap(
    'ftruncateSync',
    (previous) => (fd: number, length?: number) =>
      handleOf(fd) === undefined
        ? previous(fd, length)
        : call({ op: 'ftruncate', handle: handleOf(fd)!, length: length ?? 0 }),
  );
  wrap(
    'fchmodSync',
    (previous) => (fd: number, mode: number) =>
      handleOf(fd) === undefined
        ? previous(fd, mode)
        : call({ op: 'fchmod', handle: handleOf(fd)!, mode: Number(mode) }),
  );
  wrap(
    'futimesSync',
    (previous) => (fd: number, atime: Time, mtime: Time) =>
      handleOf(fd) === undefined
        ? previous(fd, atime, mtime)
        : call({ op: 'futimes', handle: handleOf(fd)!, atime: seconds(atime), mtime: seconds(mtime) }),
  );
  fs.writeFileSync = ((target: unknown, data: unknown, options?: unknown) => {
    if (!routed(target)) return (original.writeFileSync as (...args: unknown[]) => void)(target, data, options);
    const mode =
      typeof options === 'object' && options !== null && typeof (options as { mode?: unknown }).mode === 'number'
        ? (options as { mode: number }).mode
        : 0o666;
    const empty = typeof data === 'string' ? data.length === 0 : (data as ArrayBufferView).byteLength === 0;
    // NODEFS makes each new file this way, empty: inside FS.open, held for the open that follows.
    if (empty && insideOpen && !creating && !held)
      return void (creating = { path: path.resolve(target), mode: insideOpen.mode });
    if (empty) return void call({ op: 'create', path: path.resolve(target), mode });
    const fd = fs.openSync(target, 'w', mode);
    try {
      fs.writeSync(fd, data as Buffer);
    } finally {
      fs.closeSync(fd);
    }
  }) as NodeFs['writeFileSync'];

  wrap('mkdirSync', (previous) => (target: unknown, options?: unknown) => {
    const recursive = typeof options === 'object' && options !== null && (options as { recursive?: unknown }).recursive;
    if (!routed(target) || recursive) return previous(target, options);
    const mode =
      typeof options === 'number'
        ? options
        : typeof (options as { mode?: unknown } | undefined)?.mode === 'number'
          ? (options as { mode: number }).mode
          : 0o777;
    call({ op: 'mkdir', path: path.resolve(target), mode });
  });
  wrap('renameSync', (previous) => (from: unknown, to: unknown) => {
    const inside = [routed(from), routed(to)];
    if (!inside[0] && !inside[1]) return previous(from, to);
    if (!inside[0] || !inside[1]) exdev();
    call({ op: 'rename', from: path.resolve(from as string), to: path.resolve(to as string) });
  });
  for (const op of ['unlink', 'rmdir'] as const)
    wrap(
      `${op}Sync`,
      (previous) =>
        (target: unknown, ...rest: unknown[]) =>
          routed(target) ? call({ op, path: path.resolve(target) }) : previous(target, ...rest),
    );
  wrap('truncateSync', (previous) => (target: unknown, length?: number) => {
    if (!routed(target)) return previous(target, length);
    if (insideOpen && !length && !held && !creating && !truncating) return void (truncating = path.resolve(target));
    call({ op: 'truncate', path: path.resolve(target), length: length ?? 0 });
  });
  wrap('chmodSync', (previous) => (target: unknown, mode: number) => {
    if (!routed(target)) return previous(target, mode);
    // FS.open sets the mode it was asked for on the file it made: made with it already, in the same request.
    if (insideOpen?.created === path.resolve(target)) return void (insideOpen.created = undefined);
    call({ op: 'chmod', path: path.resolve(target), mode: Number(mode) });
  });
  wrap(
    'utimesSync',
    (previous) => (target: unknown, atime: Time, mtime: Time) =>
      routed(target)
        ? call({ op: 'utimes', path: path.resolve(target), atime: seconds(atime), mtime: seconds(mtime) })
        : previous(target, atime, mtime),
  );
  wrap('symlinkSync', (previous) => (link: unknown, target: unknown, type?: unknown) => {
    if (!routed(target)) return previous(link, target, type);
    note(
      `[sandbox] Requires write access to "${path.resolve(target as string)}": no link is made in the workspace from this sandbox`,
    );
    throw Object.assign(new Error('links are not made in the workspace'), { code: 'EPERM' });
  });
  // What reads the workspace sees the held writes first, as it would see any write made before it.
  for (const name of [
    'readSync',
    'readFileSync',
    'readdirSync',
    'readlinkSync',
    'fstatSync',
    'statSync',
    'lstatSync',
    'existsSync',
    'accessSync',
    'realpathSync',
    'statfsSync',
    'opendirSync',
    'copyFileSync',
  ] as const)
    wrap(name, (previous) => (...args: unknown[]) => {
      if (held || creating || truncating) flush();
      return previous(...args);
    });

  const emscriptenOpen = emscriptenFs.open.bind(emscriptenFs);
  emscriptenFs.open = (target: unknown, flags?: unknown, mode?: unknown) => {
    insideOpen = { mode: (typeof mode === 'number' ? mode : 0o666) & 0o777 };
    try {
      return emscriptenOpen(target, flags, mode);
    } finally {
      insideOpen = undefined;
      // An open that failed after making or truncating the file leaves it so, as the file system would.
      if (creating || truncating) {
        try {
          flush();
        } catch {
          // The open's own error is the one Python sees.
        }
      }
    }
  };

  return () => {
    try {
      flush();
    } catch (error) {
      note(`[sandbox] a write to the workspace failed: ${(error as Error).message}`);
    }
  };
}
