// Pyodide's file system refusing writes under the sandbox's read-only mounts with the plain error.
import * as path from 'node:path';
import type { PyodideInterface } from 'pyodide';
import { isInside, writableIn, type Mount } from '../../sandbox/fileView';

/** Emscripten's numbering (not Linux's): Python shows it as "[Errno 69] Read-only file system". */
const EROFS = 69;
const WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000; // O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND

/**
 * The sandbox mounts what Python may not change read-only (the workspace when it is not writable, the top
 * level of a writable one and its protected names), so a write could never reach it; but through Pyodide's
 * file system layer it would fail late and obscurely (open succeeds, close says "Bad file descriptor").
 * Refusing up front gives Python the plain error. Paths outside every mount are Pyodide's own memory.
 */
export function refuseWritesWhereReadOnly(py: PyodideInterface, mounts: Mount[]): void {
  if (!mounts.some((mount) => !mount.writable)) return;
  const fsApi = py.FS as unknown as Record<string, (...args: unknown[]) => unknown> & {
    cwd(): string;
    ErrnoError: new (errno: number) => Error;
    modeStringToFlags(mode: string): number;
  };
  const readOnly = (target: unknown): boolean => {
    if (typeof target !== 'string') return false;
    const absolute = path.posix.resolve(fsApi.cwd(), target);
    return mounts.some((mount) => isInside(absolute, mount.path)) && !writableIn(absolute, mounts);
  };
  const guard = (name: string, writes: (args: unknown[]) => boolean) => {
    const original = fsApi[name]!.bind(py.FS);
    fsApi[name] = (...args: unknown[]) => {
      if (writes(args)) throw new fsApi.ErrnoError(EROFS);
      return original(...args);
    };
  };
  guard('open', ([target, flags]) => {
    const bits = typeof flags === 'string' ? fsApi.modeStringToFlags(flags) : Number(flags ?? 0);
    return (bits & WRITE_FLAGS) !== 0 && readOnly(target);
  });
  for (const name of ['mkdir', 'unlink', 'rmdir', 'symlink', 'truncate', 'chmod', 'utime'])
    guard(name, ([target]) => readOnly(target));
  guard('rename', ([from, to]) => readOnly(from) || readOnly(to));
}
