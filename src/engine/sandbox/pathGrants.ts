// What a sandboxed process may read and write, decided path by path from where each path leads now. Two
// mechanisms ask: Deno's permission broker (denoBroker.ts), before Deno opens a path itself, and the server's
// write proxy (writeProxy.ts), before it makes a write for a bubblewrap sandbox whose workspace is read-only.
//
// Writes never touch what git or the workspace-Python backend would run (a `.git` at any depth, a pyvenv.cfg),
// whether it exists yet or not: each name is seen here, where a mount can only cover what exists.
//
// A write is refused on a link and on a folder holding one, so no link can be moved to where a checked path
// passes between this answer and the write.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, writableIn, type Mount } from './fileView';

/** A folder with more entries than this is not walked for links before it is renamed or removed: refused. */
export const MAX_FOLDER_WALK = 10_000;

export interface Grants {
  mounts: readonly Mount[];
  network: 'off' | 'on';
}

export type GrantAnswer = { allow: true } | { allow: false; reason: string };

/** Whether `permission` may be used on `value` (a path, for read and write; Deno also asks for net and others). */
export function decide(permission: string, value: string | null, grants: Grants): GrantAnswer {
  if (permission === 'net')
    return grants.network === 'on'
      ? { allow: true }
      : refuse('Requires net access: the network is off in this sandbox');
  if (permission !== 'read' && permission !== 'write')
    return refuse(`Requires ${permission} access, which this sandbox never grants`);
  if (value === null)
    return refuse(`Requires ${permission} access to the whole file system, which this sandbox never grants`);
  if (!path.isAbsolute(value))
    return refuse(`Requires ${permission} access to "${value}": a relative path is not granted`);
  const asked = path.resolve(value);
  const real = realPathOf(asked);
  if (real === undefined) return refuse(`Requires ${permission} access to "${asked}": where it leads cannot be read`);
  const allowed = (target: string): boolean =>
    permission === 'read'
      ? grants.mounts.some((mount) => isInside(target, mount.path))
      : writableIn(target, grants.mounts);
  if (!allowed(asked)) return refuse(`Requires ${permission} access to "${asked}"`);
  if (permission === 'write' && (runsOnHost(asked) || runsOnHost(real)))
    return refuse(
      `Requires write access to "${asked}": repository metadata (.git) and virtual environments (pyvenv.cfg) are never written from this sandbox, whether they exist yet or not`,
    );
  if (!allowed(real))
    return refuse(
      `Requires ${permission} access to "${asked}": it leads to "${real}", outside what this sandbox may ${permission}`,
    );
  return permission === 'write' ? movable(asked) : { allow: true };
}

/** A path inside a `.git` (git runs its hooks and config) or a virtual environment's marker (its interpreter runs). */
function runsOnHost(target: string): boolean {
  const parts = target.split(path.sep);
  return parts.includes('.git') || parts.at(-1) === 'pyvenv.cfg';
}

/**
 * A write to a link or a folder also renames or removes it: refused for a link, and for a folder that holds one
 * (or more entries than can be walked now), so no link ever moves to where a checked path would pass through it.
 */
function movable(target: string): GrantAnswer {
  const entry = fs.lstatSync(target, { throwIfNoEntry: false });
  if (entry?.isSymbolicLink())
    return refuse(
      `Requires write access to "${target}": a symbolic link is not written through, moved or removed here`,
    );
  if (!entry?.isDirectory()) return { allow: true };
  const found = linkInside(target);
  if (found === 'too many')
    return refuse(
      `Requires write access to "${target}": a folder of more than ${MAX_FOLDER_WALK} entries is not moved or removed whole here`,
    );
  return found
    ? refuse(
        `Requires write access to "${target}": it holds a symbolic link ("${found}"), so it is not moved or removed here`,
      )
    : { allow: true };
}

/** The first link under `dir`, 'too many' past the walk's bound, or undefined. */
function linkInside(dir: string): string | 'too many' | undefined {
  const pending = [dir];
  let walked = 0;
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      return current;
    }
    for (const entry of entries) {
      if (++walked > MAX_FOLDER_WALK) return 'too many';
      const full = path.join(current, entry.name);
      if (entry.isSymbolicLink()) return full;
      if (entry.isDirectory()) pending.push(full);
    }
  }
  return undefined;
}

/**
 * Where `target` leads now, links resolved, for a path whose last parts may not exist yet; undefined if unknowable,
 * as for a part that exists only as a link leading nowhere (what a write through it would create is not known).
 */
function realPathOf(target: string): string | undefined {
  const missing: string[] = [];
  let existing = target;
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(existing), ...missing.reverse());
    } catch (error) {
      const parent = path.dirname(existing);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === existing) return undefined;
      if (fs.lstatSync(existing, { throwIfNoEntry: false })) return undefined;
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

function refuse(reason: string): GrantAnswer {
  return { allow: false, reason };
}
