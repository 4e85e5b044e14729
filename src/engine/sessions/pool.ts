// The engine's sessions and the backends they come from: which backends there are and which are turned off, the
// live sessions by key (capped per backend, the least recently used idle one evicted), the spare interpreter
// kept for the next new session (spare.ts), each session's scratch folder (scratch.ts), and why a dropped
// session's name lost its state, for the next run under that name.
import * as path from 'node:path';
import { isBackendKind, SESSION_NAME, settingNote, type EngineConfig } from '../config';
import { errorText } from '../errorText';
import { ScratchFolders } from '../scratch';
import { SpareSlot, type Spare } from '../spare';
import type { BackendInfo, BackendKind, Logger } from '../types';
import type { BackendFactory, BackendSessionOptions } from '../backends/contract';
import { Session, SessionLimitError, sessionKey, type DropKind } from './session';

/** Where a session's host calls go: the engine answers its runs' questions and passes the rest to the bridge. */
export type SessionHostCall = (session: Session | undefined, method: string, params: unknown) => Promise<unknown>;

export interface SessionPoolOptions {
  backends: BackendFactory[];
  config: () => EngineConfig;
  log: Logger;
  hostCall: SessionHostCall;
  workspaceRoots: string[];
  scratchDir?: string;
}

/** How many dropped session names remember why, for their next run; beyond it the oldest are forgotten. */
const REMEMBERED_LOSSES = 1000;
/** The scratch key the spare's folder is made under: no session's key looks like it. */
const SPARE_SCRATCH_KEY = '(spare)';

export class SessionPool {
  private readonly factories = new Map<BackendKind, BackendFactory>();
  private readonly disabled = new Map<BackendKind, string>();
  private readonly sessions = new Map<string, Session>();
  /** Session keys the engine dropped, and why: the next run under that name is told. */
  private readonly losses = new Map<string, string>();
  private readonly scratch: ScratchFolders | undefined;
  private readonly spares = new SpareSlot<Session>();
  /** Whether each scope's client is still there, as its front door tells (setPresence); unknown counts as there. */
  private readonly presence = new Map<string, () => boolean>();
  private disposed = false;

  constructor(private readonly options: SessionPoolOptions) {
    for (const factory of options.backends) this.factories.set(factory.kind, factory);
    this.scratch = options.scratchDir ? new ScratchFolders(path.resolve(options.scratchDir), options.log) : undefined;
  }

  get backendKinds(): BackendKind[] {
    return [...this.factories.keys()];
  }

  factory(kind: BackendKind): BackendFactory | undefined {
    return this.factories.get(kind);
  }

  /** Every live session. */
  all(): Session[] {
    return [...this.sessions.values()];
  }

  /** The live session of `kind` under `name` in the shared scope, if there is one; never starts one. */
  existing(kind: BackendKind, name: string): Session | undefined {
    return this.sessions.get(sessionKey(kind, name));
  }

  disabledReason(kind: BackendKind): string | undefined {
    return this.disabled.get(kind);
  }

  /** Why `backend` and `session` name no session that can be used, or undefined when they do. */
  invalidTarget(backend: unknown, session: unknown): string | undefined {
    if (!isBackendKind(backend)) return `backend must be one of: ${[...this.factories.keys()].join(', ')}`;
    if (!this.factories.has(backend)) {
      const how =
        backend === 'jupyter'
          ? `: it needs a Jupyter Server${settingNote(this.options.config().settingNames.jupyterUrl)}`
          : '';
      return `the ${backend} backend is not available here${how}`;
    }
    if (typeof session !== 'string' || !SESSION_NAME.test(session)) {
      return 'session must be 1-64 characters of letters, digits, "_", "-" or "."';
    }
    return undefined;
  }

  /** The session of `backend` under `name` in `scope`, started now (or taken from the spare) if it is not live. */
  get(backend: BackendKind, name: string, scope?: string): Session {
    const key = sessionKey(backend, name, scope);
    let session = this.sessions.get(key);
    if (!session) {
      const factory = this.factories.get(backend);
      if (!factory) throw new Error(`no ${backend} backend`);
      this.makeRoomFor(backend, name, scope);
      // A session restarted under this key has its folder waiting; the spare's sandbox binds another one.
      const spare = this.scratch?.hasParked(key) ? undefined : this.takeSpare(backend, factory);
      const owner: { session?: Session } = spare?.owner ?? {};
      const scratchDir = spare ? spare.scratchDir : this.scratch?.take(key, `${backend}-${name}`);
      const instance = spare?.instance ?? factory.create(this.sessionOptions(name, scratchDir, owner));
      session = owner.session = new Session(name, instance, scope, scratchDir);
      session.inheritedLoss = this.losses.get(key);
      this.losses.delete(key);
      this.sessions.set(key, session);
      if (spare) this.refillAfterFirstRun(session, spare);
    }
    return session;
  }

  /** Swaps a backend's factory; its sessions restart on next use, and say `reason`. */
  async setFactory(factory: BackendFactory, reason: string): Promise<void> {
    const previous = this.factories.get(factory.kind);
    this.factories.set(factory.kind, factory);
    // The sessions go on, on the new backend: they keep their scratch folders.
    await this.retire(factory.kind, previous === factory ? undefined : previous, reason, 'restart');
  }

  /** Takes a backend away: its sessions end, and their next run is told `reason`. */
  async removeBackend(kind: BackendKind, reason: string): Promise<void> {
    const factory = this.factories.get(kind);
    if (!factory) return;
    this.factories.delete(kind);
    await this.retire(kind, factory, reason, 'end');
  }

  async setEnabled(kind: BackendKind, enabled: boolean, reason: string): Promise<void> {
    if (enabled) {
      this.disabled.delete(kind);
      this.refillSpare();
      return;
    }
    this.disabled.set(kind, reason || `the ${kind} backend is disabled`);
    await Promise.all(
      this.all()
        .filter((s) => s.backend.kind === kind)
        .map((s) => this.drop(s, this.disabled.get(kind)!, 'end')),
    );
    await this.replaceSpare(kind);
  }

  /** Fresh interpreters for the sessions under `name` (of `backend`, or of every backend); their next runs say `reason`. */
  async reset(name: string, backend: BackendKind | undefined, reason: string): Promise<void> {
    const matching = this.all().filter((s) => s.name === name && (!backend || s.backend.kind === backend));
    await Promise.all(matching.map((s) => this.drop(s, reason, 'restart')));
  }

  /**
   * How to tell whether `scope`'s client is still there (e.g. holds a connection open): when the pool is full, idle
   * sessions of clients that are gone are ended before any of a client that is there. Forgotten by endScope.
   */
  setPresence(scope: string, isPresent: () => boolean): void {
    this.presence.set(scope, isPresent);
  }

  /** Ends every session of a scope, and forgets their names, which nobody will use again. */
  async endScope(scope: string): Promise<void> {
    this.presence.delete(scope);
    const matching = this.all().filter((s) => s.scope === scope);
    await Promise.all([
      ...matching.map((s) => this.drop(s, 'its client is gone', 'end')),
      this.scratch?.removeScope(scope),
    ]);
    for (const s of matching) this.losses.delete(sessionKey(s.backend.kind, s.name, scope));
  }

  /**
   * Ends a session's interpreter; a later run under its name starts afresh and is told `reason`. A session that
   * `end`s takes its scratch folder along; one that only `restart`s leaves it to the next session of its name.
   */
  async drop(session: Session, reason: string, how: DropKind): Promise<void> {
    const key = sessionKey(session.backend.kind, session.name, session.scope);
    if (this.sessions.get(key) === session) this.sessions.delete(key);
    // Parked at once, so a run right after the reset finds it.
    if (session.scratchDir && how === 'restart') this.scratch?.park(key, session.scratchDir, session.scope);
    if (session.active) {
      session.active.interruptedBy ??= 'user';
      session.active.restarted = true;
      // A run still waiting for this interpreter stops waiting: it will not start now.
      session.active.stopStart?.();
    } else {
      this.losses.delete(key);
      this.losses.set(key, reason);
      if (this.losses.size > REMEMBERED_LOSSES) this.losses.delete(this.losses.keys().next().value!);
    }
    await session.backend
      .dispose()
      .catch((error: unknown) => this.options.log.warn(`dispose failed: ${String(error)}`));
    if (session.scratchDir && how === 'end') await this.scratch?.remove(session.scratchDir);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const all = this.all();
    this.sessions.clear();
    const spare = this.spares.release();
    await Promise.all([
      ...all.map((s) => s.backend.dispose().catch(() => undefined)),
      spare?.instance.dispose().catch(() => undefined),
    ]);
    // Once no interpreter is left to write in them.
    await this.scratch?.removeAll();
    await Promise.all([...this.factories.values()].map((f) => f.dispose?.().catch(() => undefined)));
  }

  /** Ends `kind`'s sessions (their next runs are told `reason`), then closes the factory they came from, if it went. */
  private async retire(
    kind: BackendKind,
    gone: BackendFactory | undefined,
    reason: string,
    how: DropKind,
  ): Promise<void> {
    await Promise.all(
      this.all()
        .filter((s) => s.backend.kind === kind)
        .map((s) => this.drop(s, reason, how)),
    );
    await this.replaceSpare(kind);
    await gone
      ?.dispose?.()
      .catch((error: unknown) => this.options.log.warn(`the replaced ${kind} backend did not close: ${String(error)}`));
  }

  /** What a backend session is made with; `owner` is the engine's session it serves, known once it is taken. */
  private sessionOptions(
    name: string,
    scratchDir: string | undefined,
    owner: { session?: Session },
  ): BackendSessionOptions {
    return {
      session: name,
      log: this.options.log,
      hostCall: (method, params) => this.options.hostCall(owner.session, method, params),
      scratchDir,
      workspaceRoots: this.options.workspaceRoots,
      settingNames: this.options.config().settingNames,
    };
  }

  /**
   * Each live session holds an interpreter (a Pyodide one holds much memory): past the cap, one idle session of the
   * backend is ended, and its next run is told; with every one busy, the new one is refused. The one ended is
   * chosen so that one client's leftovers never cost a client that is still there its state: first one of a client
   * that is gone (it left without ending its MCP session); then, among clients that are there, one of whoever holds
   * the most (nobody gives one up while another holds more), the asking client's own on a tie; the least recently
   * used first within each. Without scopes (one client, or shared sessions) that is the least recently used.
   */
  private makeRoomFor(backend: BackendKind, name: string, scope: string | undefined): void {
    const { maxSessions, settingNames } = this.options.config();
    const live = this.all().filter((s) => s.backend.kind === backend);
    if (live.length < maxSessions) return;
    const held = new Map<string | undefined, number>();
    for (const s of live) held.set(s.scope, (held.get(s.scope) ?? 0) + 1);
    const gone = (s: Session) => s.scope !== undefined && this.presence.get(s.scope)?.() === false;
    const idle = live
      .filter((s) => s.idle)
      .sort(
        (a, b) =>
          Number(gone(b)) - Number(gone(a)) ||
          held.get(b.scope)! - held.get(a.scope)! ||
          Number(b.scope === scope) - Number(a.scope === scope) ||
          a.lastUsed - b.lastUsed,
      );
    if (idle.length === 0) {
      const limit = settingNames.maxSessions ? `${maxSessions}: ${settingNames.maxSessions}` : `${maxSessions}`;
      throw new SessionLimitError(
        `all ${live.length} ${backend} sessions are busy, so session "${name}" cannot start (the limit is ${limit}); wait for one to finish or use an existing session`,
      );
    }
    const evicted = idle[0]!;
    const which = gone(evicted)
      ? 'the least recently used of a client that is gone without ending its MCP session'
      : held.size > 1
        ? `the least recently used of the client that holds the most (${held.get(evicted.scope)!})`
        : 'the least recently used';
    const reason = `the session was ended to make room for session "${name}" (at most ${maxSessions} ${backend} sessions live at once; it was ${which})`;
    this.options.log.info(`evicting the ${backend} session "${evicted.name}": ${reason}`);
    void this.drop(evicted, reason, 'end');
  }

  // ---- the spare interpreter (spare.ts) -----------------------------------------------------------------

  /**
   * Keeps a started interpreter of `kind` ready for the next new session, and starts another each time one is
   * taken; undefined keeps none. It costs the memory of one more idle session of that backend.
   */
  keepSpare(kind: BackendKind | undefined): void {
    const other = this.spares.want(kind);
    if (other) void this.discardSpare(other);
    this.refillSpare();
  }

  /** The spare interpreter, if one is kept now (its state and pid). */
  spareInfo(): BackendInfo | undefined {
    return this.spares.current?.instance.info();
  }

  private refillSpare(): void {
    const kind = this.spares.kind;
    const factory = kind && this.factories.get(kind);
    if (this.disposed || !kind || !factory || this.disabled.has(kind) || this.spares.current) return;
    const owner: { session?: Session } = {};
    const scratchDir = this.scratch?.take(SPARE_SCRATCH_KEY, `${kind}-session`);
    const spare: Spare<Session> = {
      kind,
      factory,
      instance: factory.create(this.sessionOptions('(spare)', scratchDir, owner)),
      scratchDir,
      owner,
    };
    this.spares.hold(spare);
    spare.instance.start().catch((error: unknown) => {
      // Taken meanwhile, its session reports the failure; discarded, it was ended on purpose.
      if (this.spares.current !== spare) return;
      // Not started again until a session takes a spare: a start that fails here would fail in a loop.
      this.options.log.warn(`the spare ${kind} interpreter did not start: ${errorText(error)}`);
      void this.discardSpare(this.spares.release()!);
    });
  }

  /** The spare for a new session, if one fits and is alive. */
  private takeSpare(kind: BackendKind, factory: BackendFactory): Spare<Session> | undefined {
    const spare = this.spares.take(kind, factory);
    if (!spare) return undefined;
    if (spare.instance.state === 'loading' || spare.instance.state === 'ready') return spare;
    // Its interpreter ended while it waited: a fresh session must not start with news of a lost state.
    void this.discardSpare(spare).then(() => this.refillSpare());
    return undefined;
  }

  /** The next spare starts once the session that took this one has had its first run: not beside it. */
  private refillAfterFirstRun(session: Session, spare: Spare<Session>): void {
    this.options.log.info(`session "${session.name}" (${spare.kind}) takes the spare interpreter started ahead of it`);
    const refill = () => void session.enqueue(async () => undefined).finally(() => this.refillSpare());
    spare.instance.start().then(refill, refill);
  }

  /** A spare of `kind` made by a factory that went, or of a backend turned off: disposed of, and replaced if still wanted. */
  private async replaceSpare(kind: BackendKind): Promise<void> {
    if (this.spares.current?.kind !== kind) return;
    await this.discardSpare(this.spares.release()!);
    this.refillSpare();
  }

  private async discardSpare(spare: Spare<Session>): Promise<void> {
    await spare.instance.dispose().catch(() => undefined);
    if (spare.scratchDir) await this.scratch?.remove(spare.scratchDir);
  }
}
