// What a confined process may read and write, as an ordered list of mounts. Writable folders come with a
// mandatory deny list: files the host later reads as configuration or runs (this extension's MCP server
// list, VS Code's settings and tasks, git's hooks and config, the virtual environment the Python extension
// picks) are never writable from the sandbox, whether they exist yet or not and whatever the workspace-write
// setting says. A name that does not exist cannot be covered by a mount (the mount point would have to be
// created on the host), so a workspace folder's top level is mounted read-only and its existing entries
// writable one by one: new entries can only appear inside existing folders. Repositories and virtual
// environments deeper down are found by a walk that fails closed: a workspace folder too large to look through
// is not writable at all.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Mount {
  path: string;
  writable: boolean;
}

/**
 * Names at the top of a workspace folder that stay read-only to sandboxed code. Anything else that does not
 * exist yet cannot be created at the top level either (see above).
 */
export const PROTECTED_WORKSPACE_NAMES: readonly string[] = [
  // This extension and other MCP hosts: servers listed there are started on the host.
  'mcp_servers.json',
  '.mcp.json',
  // VS Code (settings, tasks, launch configurations, mcp.json), dev containers and JetBrains IDEs.
  '.vscode',
  '.devcontainer',
  '.idea',
  // git: hooks and config (core.fsmonitor, core.hooksPath) run commands.
  '.git',
  '.gitmodules',
  // What the Python extension and direnv load into terminals and interpreters.
  '.env',
  '.envrc',
  '.venv',
  'venv',
];

/** A protected name, or a VS Code workspace file (its settings and tasks apply when it is opened). */
export function isProtectedName(name: string): boolean {
  return PROTECTED_WORKSPACE_NAMES.includes(name) || name.endsWith('.code-workspace');
}

/** More entries at the top level than this are left read-only: a mount each costs start time. */
const MAX_TOP_LEVEL_MOUNTS = 1000;
/** A writable workspace folder with more entries than this is not looked through: it stays read-only. */
export const MAX_METADATA_WALK = 200_000;

export interface FileViewRequest {
  readOnly: string[];
  /** Folders the process may change, minus the protected paths. */
  readWrite: string[];
  /** Writable folders that are workspace folders: their top level gets the protected names above. */
  workspaceRoots: string[];
  /** Absolute files or folders the host reads as configuration wherever they are (a --servers file). */
  protectedPaths: string[];
  /** The bound of the walk for repositories and virtual environments (MAX_METADATA_WALK unless a test says). */
  maxMetadataWalk?: number;
}

export interface FileView {
  /** Parents before children: a later mount covers part of an earlier one. */
  mounts: Mount[];
  /** Top-level entries left read-only because there were too many to mount one by one. */
  skipped: number;
  /** Workspace folders left read-only because they were too large to look through for repositories. */
  closed: string[];
}

/** The mounts for `request`; every path must be a real path (no symlinks), as they are bound at their own paths. */
export function fileView(request: FileViewRequest): FileView {
  const mounts = new Map<string, boolean>();
  let skipped = 0;
  const closed: string[] = [];
  const workspaceRoots = new Set(request.workspaceRoots);
  for (const root of request.readWrite) {
    if (!workspaceRoots.has(root)) {
      mounts.set(root, true);
      continue;
    }
    mounts.set(root, false);
    const metadata = hostRunMetadata(root, request.maxMetadataWalk ?? MAX_METADATA_WALK);
    if (metadata === 'too many') {
      closed.push(root);
      continue;
    }
    const entries = topLevelEntries(root).filter((entry) => !isProtectedName(entry.name));
    // Folders first: losing a file's writability beyond the cap costs less than a folder's.
    entries.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()));
    skipped += Math.max(0, entries.length - MAX_TOP_LEVEL_MOUNTS);
    for (const entry of entries.slice(0, MAX_TOP_LEVEL_MOUNTS)) mounts.set(path.join(root, entry.name), true);
    for (const found of metadata) if (deepestMount(found, mounts.keys()) !== root) mounts.set(found, false);
  }
  for (const target of request.protectedPaths) protect(target, mounts);
  // Asked for read-only stays read-only, also where it is an entry of a writable workspace folder (the
  // extension's own bundle when the workspace is its source tree).
  for (const dir of request.readOnly) mounts.set(dir, false);
  const ordered = [...mounts].map(([dir, writable]) => ({ path: dir, writable }));
  ordered.sort((a, b) => depth(a.path) - depth(b.path));
  return { mounts: ordered, skipped, closed };
}

/**
 * What git and the workspace-Python backend run from below a workspace folder's top level, at any depth: a
 * repository's `.git` (a folder, or a file naming one elsewhere: hooks and config run commands) and a virtual
 * environment (a folder holding pyvenv.cfg: its interpreter and site-packages run on the host). 'too many'
 * when the folder holds more than `maxEntries` entries: not all of it was seen. Links are not followed (one
 * resolves inside the sandbox's own view) and what is found is not walked into (it is read-only whole).
 */
export function hostRunMetadata(root: string, maxEntries: number): string[] | 'too many' {
  const found: string[] = [];
  const pending = [root];
  let walked = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    walked += entries.length;
    if (walked > maxEntries) return 'too many';
    if (dir !== root && entries.some((entry) => entry.name === 'pyvenv.cfg' && entry.isFile())) {
      found.push(dir);
      continue;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.name === '.git' && (entry.isDirectory() || entry.isFile())) {
        if (dir !== root) found.push(full);
      } else if (entry.isDirectory()) pending.push(full);
    }
  }
  return found;
}

/**
 * Makes `target` read-only where a writable mount holds it: the file itself when it exists, else the nearest
 * folder above it that exists (so it cannot be created), with that folder's other entries kept writable.
 */
function protect(target: string, mounts: Map<string, boolean>): void {
  const holder = deepestMount(target, mounts.keys());
  if (!holder || !mounts.get(holder)) return;
  if (exists(target)) {
    mounts.set(target, false);
    return;
  }
  let folder = path.dirname(target);
  while (!exists(folder) && folder !== holder) folder = path.dirname(folder);
  mounts.set(folder, false);
  for (const entry of topLevelEntries(folder)) {
    const child = path.join(folder, entry.name);
    if (!mounts.has(child)) mounts.set(child, true);
  }
}

/** The mount that decides for `target`: the deepest one holding it. */
function deepestMount(target: string, dirs: Iterable<string>): string | undefined {
  let found: string | undefined;
  for (const dir of dirs) if (isInside(target, dir) && (!found || dir.length > found.length)) found = dir;
  return found;
}

/** Real folders and files only: a symlink stays a link inside the read-only folder, resolved in the sandbox's own view. */
function topLevelEntries(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory() || entry.isFile());
  } catch {
    return [];
  }
}

function exists(target: string): boolean {
  return fs.lstatSync(target, { throwIfNoEntry: false }) !== undefined;
}

function depth(dir: string): number {
  return dir.split(path.sep).filter(Boolean).length;
}

export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** Whether `target` is writable in `mounts`: the deepest mount holding it decides. */
export function writableIn(target: string, mounts: readonly Mount[]): boolean {
  const decides = deepestMount(
    target,
    mounts.map((mount) => mount.path),
  );
  return mounts.find((mount) => mount.path === decides)?.writable ?? false;
}
