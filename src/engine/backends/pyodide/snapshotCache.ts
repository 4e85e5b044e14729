// The Pyodide memory snapshot cache, kept by the backend (outside the sandbox). A host process reads a
// snapshot through a read-only view of the cache and restores it only if its bytes hash to what was recorded
// here when it was cached (host.ts checks the bytes it loads); a new snapshot is written by a freshly started
// host into an outbox of its own, before any user code runs, and copied into the cache here with its hash.
// Python can therefore neither replace the snapshot other sessions start from nor make one of them start
// from a corrupt file.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from '../../types';
import { OUTBOX_SNAPSHOT, type SnapshotRef } from './protocol';

/** A temp file this old belongs to no live writer (writing takes well under a second). */
const STALE_MS = 10 * 60 * 1000;

export class SnapshotCache {
  readonly file: string;
  /** The file names of the snapshots of this Pyodide build and this worker, for every runtime, start with this. */
  private readonly buildPrefix: string;

  /**
   * `worker`: the worker script, whose harness imports go into a snapshot (a snapshot made by another version
   * of it is not used). `runtime`: the runtime that makes and loads the snapshot when it is not Node (Deno):
   * each keeps its own, as what Pyodide sets up at load differs with the runtime it finds itself in.
   */
  constructor(
    readonly cacheDir: string,
    pyodideDir: string,
    worker: string,
    private readonly log: Logger,
    runtime?: 'deno',
  ) {
    this.buildPrefix = `pyodide-${buildId(pyodideDir)}-${sha256(fs.readFileSync(worker)).slice(0, 12)}.`;
    this.file = path.join(cacheDir, `${this.buildPrefix}${runtime ? `${runtime}.` : ''}snapshot`);
  }

  /** The cached snapshot and its recorded hash, if both are there; the host checks the one against the other. */
  cached(): SnapshotRef | undefined {
    try {
      const sha256 = fs.readFileSync(`${this.file}.sha256`, 'utf8').trim();
      return fs.existsSync(this.file) ? { file: this.file, sha256 } : undefined;
    } catch {
      return undefined;
    }
  }

  /** A host found `snapshot` unusable: it goes (unless another process has cached a new one since), and the next start makes a new one. */
  reject(snapshot: SnapshotRef, reason: string): void {
    if (this.cached()?.sha256 !== snapshot.sha256) return;
    this.log.warn(`the Pyodide snapshot ${this.file} was not used: ${reason}; it was discarded and a new one will be made`);
    this.remove();
  }

  /** A new, empty folder a starting host may write its snapshot into. */
  createOutbox(): string {
    const dir = path.join(this.cacheDir, 'outbox', `${process.pid}-${randomBytes(6).toString('hex')}`);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /**
   * Takes the snapshot a host wrote into `outbox` before running any user code: its bytes are copied (never
   * the file itself, which the host could still reach), hashed and written next to the hash. The outbox goes.
   * Returns whether a snapshot was cached.
   */
  adopt(outbox: string): boolean {
    let cached = false;
    try {
      const bytes = fs.readFileSync(path.join(outbox, OUTBOX_SNAPSHOT));
      const suffix = `${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
      fs.writeFileSync(`${this.file}.sha256.${suffix}`, sha256(bytes));
      fs.writeFileSync(`${this.file}.${suffix}`, bytes);
      // The hash goes first: a reader that sees the new snapshot also sees its hash.
      fs.renameSync(`${this.file}.sha256.${suffix}`, `${this.file}.sha256`);
      fs.renameSync(`${this.file}.${suffix}`, this.file);
      cached = true;
    } catch (error) {
      this.log.warn(`could not cache the Pyodide snapshot in ${this.file}: ${String(error)}`);
    } finally {
      this.discardOutbox(outbox);
    }
    this.removeLeftovers();
    return cached;
  }

  discardOutbox(outbox: string): void {
    fs.rmSync(outbox, { recursive: true, force: true });
  }

  private remove(): void {
    fs.rmSync(this.file, { force: true });
    fs.rmSync(`${this.file}.sha256`, { force: true });
  }

  /** Snapshots of other Pyodide builds can never be restored, and stale temp files and outboxes were left by killed processes; each is tens of MB. */
  private removeLeftovers(): void {
    try {
      for (const name of fs.readdirSync(this.cacheDir)) {
        const other = path.join(this.cacheDir, name);
        // Another runtime's snapshot of the same build is in use by the other sandbox mechanism: it stays.
        const outdated = /^pyodide-.+\.snapshot(\.sha256)?$/.test(name) && !name.startsWith(this.buildPrefix);
        const abandoned = /^pyodide-.+\.tmp$/.test(name) && isStale(other);
        if (outdated || abandoned) fs.rmSync(other, { force: true });
      }
      const outboxes = path.join(this.cacheDir, 'outbox');
      for (const name of fs.existsSync(outboxes) ? fs.readdirSync(outboxes) : []) {
        if (isStale(path.join(outboxes, name))) fs.rmSync(path.join(outboxes, name), { recursive: true, force: true });
      }
    } catch (error) {
      this.log.warn(`could not remove outdated Pyodide snapshots: ${String(error)}`);
    }
  }
}

function isStale(file: string): boolean {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat !== undefined && Date.now() - stat.mtimeMs > STALE_MS;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A snapshot restores only into the exact Pyodide build that made it: its version and build id name the file. */
function buildId(pyodideDir: string): string {
  const loader = fs.readFileSync(path.join(pyodideDir, 'pyodide.js'), 'utf8');
  const build = /BUILD_ID:"([0-9a-f]+)"/.exec(loader)?.[1]?.slice(0, 16) ?? 'unknown-build';
  const { version } = JSON.parse(fs.readFileSync(path.join(pyodideDir, 'package.json'), 'utf8')) as { version?: string };
  return `${version ?? 'unknown'}-${build}`;
}
