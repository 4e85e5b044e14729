// The Pyodide memory snapshot cache, kept by the backend (outside the sandbox). A host process reads a
// snapshot through a read-only view of the cache and restores it only if its bytes hash to what was recorded
// here when it was cached (host.ts checks the bytes it loads); a new snapshot is written by a freshly started
// host into an outbox of its own, before any user code runs, and copied into the cache here with its hash.
// Python can therefore neither replace the snapshot other sessions start from nor make one of them start
// from a corrupt file. The build ships a snapshot made the same way (scripts/pyodide-snapshot.ts): an empty cache
// takes a copy of it, checked against the hash recorded when it was built, so a fresh install does not pay for
// making one. V8's code cache of Pyodide's Emscripten script (emscriptenScript.ts) is kept the same way, made by
// the first host of a runtime that starts without one (the build ships none: it is V8's, runtime by runtime).
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from '../../types';
import { OUTBOX_CODE_CACHE, OUTBOX_SNAPSHOT, type SnapshotRef } from './protocol';

/** A temp file this old belongs to no live writer (writing takes well under a second). */
const STALE_MS = 10 * 60 * 1000;
/** The folder in dist/ holding the snapshots shipped with the build, under the names a cache gives them. */
export const SHIPPED_SNAPSHOT_DIR = 'pyodide-snapshot';

/** Where the snapshot a host starts from came from: the cache's own, or the build's, copied in for this start. */
export type SnapshotOrigin = 'cached' | 'shipped';

export class SnapshotCache {
  readonly file: string;
  /** V8's code cache of Pyodide's Emscripten script for this build and this runtime; undefined under Deno (none is used). */
  readonly codeCacheFile: string | undefined;
  /** The file names of the snapshots of this Pyodide build and this worker, for every runtime, start with this. */
  private readonly buildPrefix: string;
  /** The build's snapshot for this runtime, if it ships one. */
  private readonly shippedFile: string | undefined;
  /** The shipped snapshot failed its check, or a start from its copy failed: this backend makes its own instead of copying it again. */
  private shippedRefused = false;
  /** Until a host finds this runtime cannot use one (emscriptenScript.ts), hosts without a code cache make one. */
  private codeCaching = true;

  /**
   * `worker`: the worker script, whose harness imports go into a snapshot (a snapshot made by another version
   * of it is not used). `runtime`: the runtime that makes and loads the snapshot when it is not Node (Deno):
   * each keeps its own, as what Pyodide sets up at load differs with the runtime it finds itself in.
   * `shippedDir`: the folder of the snapshots shipped with the build (SHIPPED_SNAPSHOT_DIR), if any.
   */
  constructor(
    readonly cacheDir: string,
    pyodideDir: string,
    worker: string,
    private readonly log: Logger,
    runtime?: 'deno',
    shippedDir?: string,
  ) {
    this.buildPrefix = buildPrefix(pyodideDir, worker);
    const name = runtimeName(this.buildPrefix, runtime);
    this.file = path.join(cacheDir, name);
    this.shippedFile = shippedDir && path.join(shippedDir, name);
    // V8 reads a code cache only in the version that wrote it: each version keeps its own.
    this.codeCacheFile = runtime
      ? undefined
      : path.join(cacheDir, `${this.buildPrefix}v8-${process.versions.v8}.codecache`);
  }

  /** The cached code cache and its recorded hash, if both are there. */
  codeCacheForStart(): SnapshotRef | undefined {
    return this.codeCacheFile ? cachedFile(this.codeCacheFile) : undefined;
  }

  /** Whether a host starting with `codeCache` should make one (this runtime uses them and it has none). */
  wantsCodeCache(codeCache: SnapshotRef | undefined): boolean {
    return this.codeCacheFile !== undefined && this.codeCaching && codeCache === undefined;
  }

  /** A host found that this runtime cannot use a code cache: no host is asked to make one from now on. */
  runtimeTakesNoCodeCache(): void {
    this.codeCaching = false;
  }

  /** A host found `codeCache` unusable: it goes (unless another process has cached a new one since). */
  rejectCodeCache(codeCache: SnapshotRef, reason: string): void {
    if (!this.codeCacheFile || this.codeCacheForStart()?.sha256 !== codeCache.sha256) return;
    this.log.warn(
      `V8's code cache ${this.codeCacheFile} was not used: ${reason}; it was discarded and a new one will be made`,
    );
    removeWithHash(this.codeCacheFile);
  }

  /**
   * The snapshot a new host starts from: the cached one, else the build's, copied into the cache now (so every
   * start loads from the cache, read-only to Python, and the host checks it like any cached one). Undefined when
   * there is neither: the host then makes one.
   */
  forStart(): { snapshot: SnapshotRef; origin: SnapshotOrigin } | undefined {
    const cached = this.cached();
    if (cached) return { snapshot: cached, origin: 'cached' };
    const shipped = this.copyShipped();
    return shipped && { snapshot: shipped, origin: 'shipped' };
  }

  /** The cached snapshot and its recorded hash, if both are there; the host checks the one against the other. */
  cached(): SnapshotRef | undefined {
    return cachedFile(this.file);
  }

  /**
   * A host found `snapshot` unusable: it goes (unless another process has cached a new one since), and the next
   * start makes a new one. One copied from the build's (`origin` shipped) is not copied again by this backend.
   */
  reject(snapshot: SnapshotRef, origin: SnapshotOrigin, reason: string): void {
    if (origin === 'shipped') this.shippedRefused = true;
    if (this.cached()?.sha256 !== snapshot.sha256) return;
    this.log.warn(
      `the Pyodide snapshot ${this.file} was not used: ${reason}; it was discarded and a new one will be made`,
    );
    this.remove();
  }

  /** A new, empty folder a starting host may write its snapshot into. */
  createOutbox(): string {
    const dir = path.join(this.cacheDir, 'outbox', `${process.pid}-${randomBytes(6).toString('hex')}`);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /**
   * Takes what a host wrote into `outbox` before running any user code: the snapshot, if it was to make one
   * (`madeSnapshot`), and a code cache, if it wrote one (a runtime that cannot use one writes none). Their bytes
   * are copied (never the files themselves, which the host could still reach), hashed and written next to the
   * hash. The outbox goes. Returns whether a snapshot was cached.
   */
  adopt(outbox: string, madeSnapshot: boolean): boolean {
    const take = (name: string, file: string, what: string): boolean => {
      try {
        store(file, fs.readFileSync(path.join(outbox, name)));
        return true;
      } catch (error) {
        this.log.warn(`could not cache ${what} in ${file}: ${String(error)}`);
        return false;
      }
    };
    let cached = false;
    try {
      cached = madeSnapshot && take(OUTBOX_SNAPSHOT, this.file, 'the Pyodide snapshot');
      const codeCache = path.join(outbox, OUTBOX_CODE_CACHE);
      if (this.codeCacheFile && fs.existsSync(codeCache))
        take(OUTBOX_CODE_CACHE, this.codeCacheFile, "V8's code cache of Pyodide");
    } finally {
      this.discardOutbox(outbox);
    }
    this.removeLeftovers();
    return cached;
  }

  /**
   * The shipped snapshot, copied into the cache if its bytes hash to what the build recorded. The bytes written
   * are the bytes checked (a copy, not a link: nothing done to the cache's file can reach the extension's folder).
   * The shipped file itself is never changed or removed.
   */
  private copyShipped(): SnapshotRef | undefined {
    if (!this.shippedFile || this.shippedRefused) return undefined;
    let bytes: Buffer;
    let recorded: string;
    try {
      recorded = fs.readFileSync(`${this.shippedFile}.sha256`, 'utf8').trim();
      bytes = fs.readFileSync(this.shippedFile);
    } catch {
      // This build ships none for this runtime (a development build in watch mode, or Deno not there when it was built).
      return undefined;
    }
    if (sha256(bytes) !== recorded) {
      this.shippedRefused = true;
      this.log.warn(
        `the Pyodide snapshot shipped with the build, ${this.shippedFile}, was not used: it does not match the hash recorded when it was built; a new one will be made in the cache`,
      );
      return undefined;
    }
    try {
      store(this.file, bytes, recorded);
    } catch (error) {
      this.log.warn(`could not copy the shipped Pyodide snapshot into ${this.file}: ${String(error)}`);
      return undefined;
    } finally {
      // What an earlier version of the extension cached is no use to this one.
      this.removeLeftovers();
    }
    return { file: this.file, sha256: recorded };
  }

  discardOutbox(outbox: string): void {
    fs.rmSync(outbox, { recursive: true, force: true });
  }

  private remove(): void {
    removeWithHash(this.file);
  }

  /** Snapshots of other Pyodide builds can never be restored, and stale temp files and outboxes were left by killed processes; each is tens of MB. */
  private removeLeftovers(): void {
    try {
      for (const name of fs.readdirSync(this.cacheDir)) {
        const other = path.join(this.cacheDir, name);
        // Another runtime's snapshot of the same build is in use by the other sandbox mechanism: it stays.
        const otherBuild =
          /^pyodide-.+\.(snapshot|codecache)(\.sha256)?$/.test(name) && !name.startsWith(this.buildPrefix);
        // A code cache of another version of V8 (the runtime was updated) can never be read again.
        const otherV8 =
          this.codeCacheFile !== undefined &&
          /^pyodide-.+\.codecache(\.sha256)?$/.test(name) &&
          path.join(this.cacheDir, name.replace(/\.sha256$/, '')) !== this.codeCacheFile;
        const outdated = otherBuild || otherV8;
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

/** `file` and the hash recorded beside it, if both are there. */
function cachedFile(file: string): SnapshotRef | undefined {
  try {
    const sha256 = fs.readFileSync(`${file}.sha256`, 'utf8').trim();
    return fs.existsSync(file) ? { file, sha256 } : undefined;
  } catch {
    return undefined;
  }
}

/** `bytes` and their hash (computed here unless already known), each written to a temp file and renamed into place. */
function store(file: string, bytes: Uint8Array, hash = sha256(bytes)): void {
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(`${file}.sha256.${suffix}`, hash);
  fs.writeFileSync(`${file}.${suffix}`, bytes);
  // The hash goes first: a reader that sees the new file also sees its hash.
  fs.renameSync(`${file}.sha256.${suffix}`, `${file}.sha256`);
  fs.renameSync(`${file}.${suffix}`, file);
}

function removeWithHash(file: string): void {
  fs.rmSync(file, { force: true });
  fs.rmSync(`${file}.sha256`, { force: true });
}

function isStale(file: string): boolean {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat !== undefined && Date.now() - stat.mtimeMs > STALE_MS;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The file name of the snapshot of the Pyodide build in `pyodideDir` made by `worker` under `runtime` (Node when
 * undefined): in the cache, and in the build's SHIPPED_SNAPSHOT_DIR.
 */
export function snapshotFileName(pyodideDir: string, worker: string, runtime?: 'deno'): string {
  return runtimeName(buildPrefix(pyodideDir, worker), runtime);
}

function runtimeName(prefix: string, runtime: 'deno' | undefined): string {
  return `${prefix}${runtime ? `${runtime}.` : ''}snapshot`;
}

/** What the file names of every runtime's snapshot of this Pyodide build and this worker start with. */
function buildPrefix(pyodideDir: string, worker: string): string {
  return `pyodide-${buildId(pyodideDir)}-${sha256(fs.readFileSync(worker)).slice(0, 12)}.`;
}

/** A snapshot restores only into the exact Pyodide build that made it: its version and build id name the file. */
function buildId(pyodideDir: string): string {
  const loader = fs.readFileSync(path.join(pyodideDir, 'pyodide.js'), 'utf8');
  const build = /BUILD_ID:"([0-9a-f]+)"/.exec(loader)?.[1]?.slice(0, 16) ?? 'unknown-build';
  const { version } = JSON.parse(fs.readFileSync(path.join(pyodideDir, 'package.json'), 'utf8')) as {
    version?: string;
  };
  return `${version ?? 'unknown'}-${build}`;
}
