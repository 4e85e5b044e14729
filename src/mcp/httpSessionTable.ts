// The HTTP server's MCP sessions: how many may live at once, which one ends to make room for a new one, and why an
// id that ended is no longer known, for the client that comes back with it. Every session holds memory until it
// ends, and many clients never end theirs (no DELETE: they close their connections and leave the session to idle
// out), so without a cap anyone with the token could fill the heap with initializes. Our own module, not the SDK's:
// it carries over to a stateless transport.
import type { Logger } from '../engine/index';

/** MCP sessions an HTTP server keeps at once; the CLI's --max-http-sessions, and what VS Code's endpoint uses. */
export const DEFAULT_MAX_HTTP_SESSIONS = 64;
/** How many ended session ids remember why, for a client that comes back with one; beyond it the oldest are forgotten. */
const REMEMBERED_ENDINGS = 1000;

/** What the table needs to know of a session. */
export interface TabledSession {
  /** Undefined until its initialize is answered. */
  readonly id: string | undefined;
  /** Initialized, with no request in flight and no run under way: ending it interrupts nothing. */
  readonly idle: boolean;
  /** Its client holds a connection open to it (a request, or the stream it listens on). */
  readonly present: boolean;
  /** When it last began or finished a request, as a count across sessions (the lowest is the least recently active). */
  readonly lastActive: number;
  close(why: string): Promise<void>;
}

export class HttpSessionTable<S extends TabledSession> {
  /** Every session, those still initializing too: they count toward the cap from their first request. */
  private readonly sessions = new Set<S>();
  private readonly byId = new Map<string, S>();
  /** Why recently ended sessions ended, by id. */
  private readonly endings = new Map<string, string>();

  constructor(
    readonly max: number,
    private readonly log: Logger,
  ) {
    if (!(Number.isInteger(max) && max >= 1)) throw new Error('maxHttpSessions must be a whole number of at least 1');
  }

  get(id: string): S | undefined {
    return this.byId.get(id);
  }

  /** Why the session `id` ended, if it was evicted or idled out not long ago. */
  whyEnded(id: string): string | undefined {
    return this.endings.get(id);
  }

  all(): S[] {
    return [...this.sessions];
  }

  /**
   * Room for one more session. When full, the least recently active idle session ends, one whose client holds no
   * connection open before one whose client does (a client still listening is likely still there); false when
   * every session is busy, and none is ended.
   */
  makeRoom(): boolean {
    if (this.sessions.size < this.max) return true;
    let evicted: S | undefined;
    for (const s of this.sessions) {
      if (!s.idle) continue;
      const before = evicted && (Number(s.present) - Number(evicted.present) || s.lastActive - evicted.lastActive);
      if (before === undefined || before < 0) evicted = s;
    }
    if (!evicted) return false;
    const why = `it was evicted to make room for a new session (at most ${this.max} MCP sessions live at once; it was the least recently active idle one${evicted.present ? '' : ', and its client held no connection open'})`;
    this.log.info(`MCP HTTP session ${evicted.id!} ended: ${why}`);
    this.ended(evicted, why);
    void evicted.close(why);
    return true;
  }

  /** A session being started: it counts from now. */
  add(session: S): void {
    this.sessions.add(session);
  }

  /** The session has its id. */
  named(session: S): void {
    if (session.id !== undefined && this.sessions.has(session)) this.byId.set(session.id, session);
  }

  /** The session ended (or never started); `why` is told to a client that comes back with its id. */
  ended(session: S, why?: string): void {
    this.sessions.delete(session);
    const id = session.id;
    if (id === undefined || this.byId.get(id) !== session) return;
    this.byId.delete(id);
    if (why === undefined) return;
    this.endings.set(id, why);
    if (this.endings.size > REMEMBERED_ENDINGS) this.endings.delete(this.endings.keys().next().value!);
  }
}
