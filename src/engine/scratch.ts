// Each session's scratch folder: a writable folder on disk for its runs' files (CODE_MODE_SCRATCH in Python),
// the one folder besides the workspace whose printed files a run shows (displayFiles.ts). Sessions never
// share one: a Pyodide session's sandbox binds only its own, so a client's files are out of another client's
// reach. A folder lives as long as its session: made when the session starts, kept while the session goes on
// with a fresh interpreter (a reset, a crash, another interpreter selected), removed when the session ends.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from './types';

/** Folders of restarted sessions waiting for the next session of their key; beyond it, the oldest are removed. */
const MAX_PARKED = 64;

export class ScratchFolders {
  /** Folders of sessions that were restarted rather than ended, by session key, for the next session there. */
  private readonly parked = new Map<string, { folder: string; scope?: string }>();
  /** Every folder handed out and not yet removed. */
  private readonly live = new Set<string>();

  constructor(
    /** Where the sessions' folders are made (`<storage>/scratch`); never a session's folder itself. */
    private readonly parent: string,
    private readonly log: Logger,
  ) {}

  /** The folder for a session starting under `key`: the one its predecessor left, else a new one; undefined if none can be made. */
  take(key: string, label: string): string | undefined {
    const parked = this.parked.get(key);
    this.parked.delete(key);
    try {
      if (parked && fs.statSync(parked.folder, { throwIfNoEntry: false })?.isDirectory()) return parked.folder;
      if (parked) this.live.delete(parked.folder);
      fs.mkdirSync(this.parent, { recursive: true, mode: 0o700 });
      // The real path: the Pyodide sandbox binds it, and mounts it in Pyodide, at this path.
      const folder = fs.mkdtempSync(path.join(fs.realpathSync(this.parent), `${safeName(label)}-`));
      this.live.add(folder);
      return folder;
    } catch (error) {
      this.log.warn(`a scratch folder could not be made in ${this.parent}: ${String(error)}`);
      return undefined;
    }
  }

  /** Whether a restarted session left a folder for the next session under `key`. */
  hasParked(key: string): boolean {
    return this.parked.has(key);
  }

  /** The session under `key` goes on with a fresh interpreter: its next session there gets `folder` back. */
  park(key: string, folder: string, scope: string | undefined): void {
    this.parked.delete(key);
    this.parked.set(key, { folder, scope });
    while (this.parked.size > MAX_PARKED) {
      const [oldest, entry] = this.parked.entries().next().value!;
      this.parked.delete(oldest);
      void this.remove(entry.folder);
    }
  }

  /** The session that had `folder` ended: its files go with it. */
  async remove(folder: string): Promise<void> {
    this.live.delete(folder);
    await fs.promises
      .rm(folder, { recursive: true, force: true })
      .catch((error: unknown) => this.log.warn(`the scratch folder ${folder} could not be removed: ${String(error)}`));
  }

  /** Removes the folders parked by sessions of `scope` (its client is gone). */
  async removeScope(scope: string): Promise<void> {
    const folders: string[] = [];
    for (const [key, entry] of this.parked) {
      if (entry.scope !== scope) continue;
      this.parked.delete(key);
      folders.push(entry.folder);
    }
    await Promise.all(folders.map((folder) => this.remove(folder)));
  }

  /** Removes every folder handed out (the engine is disposed). */
  async removeAll(): Promise<void> {
    this.parked.clear();
    await Promise.all([...this.live].map((folder) => this.remove(folder)));
  }
}

/** A session label as part of a folder name: no separators, and not hidden (displayFiles.ts skips dot-folders). */
function safeName(label: string): string {
  return (
    label
      .replace(/[^A-Za-z0-9_.-]/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 80) || 'session'
  );
}
