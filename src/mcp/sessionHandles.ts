// Python sessions for clients without MCP sessions (protocol revision 2026-07-28 over HTTP serves each request
// on its own): a result carries a handle the server minted, and a call that passes it back reaches the same
// engine scope. A handle is unguessable, so holding one is what lets a client see that scope's variables, scratch
// files and tasks; a scope nobody has used for `idleMs` ends, as an idle HTTP session does.
import { randomBytes } from 'node:crypto';
import type { Engine } from '../engine/index';

/** 24 random bytes, base64url: what `mint` makes; anything else is refused without a lookup. */
const HANDLE = /^h_[A-Za-z0-9_-]{32}$/;

interface HandleEntry {
  scope: string;
  lastUsed: number;
  busy: number;
  timer?: NodeJS.Timeout;
}

/** A handle in use by one call: `release` when the call is answered (its run may go on as a task until then). */
export interface HeldHandle {
  handle: string;
  scope: string;
  /** True when this call minted it: the result should say so. */
  minted: boolean;
  release(): void;
}

export interface SessionHandlesOptions {
  /** A handle unused this long (no call under way) ends, with its scope. */
  idleMs: number;
  /** At most this many live handles: minting past it ends the least recently used idle one. */
  maxHandles: number;
}

export class SessionHandles {
  private readonly entries = new Map<string, HandleEntry>();
  private closed = false;

  constructor(
    private readonly engine: Engine,
    private readonly options: SessionHandlesOptions,
  ) {}

  /** How many handles are live. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The scope of `handle` for one call, or a new handle when none is given. A handle that was never minted here,
   * has expired or was ended gives `undefined`: its state is gone (or never was), and the caller says so.
   */
  hold(handle: string | undefined): HeldHandle | undefined {
    if (this.closed) return undefined;
    if (handle === undefined) return this.held(this.mint(), true);
    if (!HANDLE.test(handle)) return undefined;
    const entry = this.entries.get(handle);
    return entry ? this.held(handle, false) : undefined;
  }

  /** Ends every handle's scope: the server is closing. */
  async close(): Promise<void> {
    this.closed = true;
    const scopes = [...this.entries.values()].map((entry) => {
      clearTimeout(entry.timer);
      return entry.scope;
    });
    this.entries.clear();
    await Promise.all(scopes.map((scope) => this.engine.endScope(scope).catch(() => undefined)));
  }

  private mint(): string {
    if (this.entries.size >= this.options.maxHandles) this.endLeastRecentIdle();
    const handle = `h_${randomBytes(24).toString('base64url')}`;
    const scope = randomBytes(6).toString('hex');
    const entry: HandleEntry = { scope, lastUsed: Date.now(), busy: 0 };
    this.entries.set(handle, entry);
    // A scope whose handle is held by no call is not there: the engine may evict its interpreters first.
    this.engine.setScopePresence(scope, () => entry.busy > 0);
    return handle;
  }

  private held(handle: string, minted: boolean): HeldHandle {
    const entry = this.entries.get(handle)!;
    entry.busy++;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    let released = false;
    return {
      handle,
      scope: entry.scope,
      minted,
      release: () => {
        if (released) return;
        released = true;
        entry.busy--;
        entry.lastUsed = Date.now();
        if (entry.busy === 0 && this.entries.get(handle) === entry) this.expireLater(handle, entry);
      },
    };
  }

  private expireLater(handle: string, entry: HandleEntry): void {
    entry.timer = setTimeout(() => this.end(handle), this.options.idleMs);
    entry.timer.unref();
  }

  private endLeastRecentIdle(): void {
    let oldest: [string, HandleEntry] | undefined;
    for (const item of this.entries) {
      if (item[1].busy === 0 && (!oldest || item[1].lastUsed < oldest[1].lastUsed)) oldest = item;
    }
    if (oldest) this.end(oldest[0]);
  }

  private end(handle: string): void {
    const entry = this.entries.get(handle);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.entries.delete(handle);
    void this.engine.endScope(entry.scope).catch(() => undefined);
  }
}
