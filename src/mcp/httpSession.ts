// One MCP session over Streamable HTTP: its transport, its own Python sessions, the events it may replay, what
// happens to a run whose response stream the client dropped, when the session ends for being idle, and what the
// server's table of sessions (httpSessionTable.ts) needs to choose one to end: whether it is busy, whether its
// client is still there, and when it was last active.
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  WebStandardStreamableHTTPServerTransport,
  type JSONRPCMessage,
  type RequestId,
  type Server,
} from '@modelcontextprotocol/server';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import type * as http from 'node:http';
import type { Engine, Logger } from '../engine/index';
import { BoundedEventStore, type SharedEventBudget } from './eventStore';
import { idOnlyPrimingEvents } from './primingEvents';
import type { TabledSession } from './httpSessionTable';
import { sendWebResponse } from './httpWebExchange';
import { createMcpServer, runningTasks, type McpServerOptions } from './server';

export interface HttpSessionOptions extends McpServerOptions {
  log: Logger;
  /** Clients use the engine's shared sessions rather than their own. */
  shareSessions: boolean;
  /** Without a request for this long (runs under way count as requests), the session ends. */
  idleMs: number;
  /** A run whose response stream was dropped is cancelled after this long, unless the client resumes the stream. */
  resumeGraceMs: number;
  /** Priming events carry their id only (primingEvents.ts): for VS Code, which parses every event's data. */
  idOnlyPrimingEvents?: boolean;
  /** What the server's sessions keep for replay, together. */
  eventBudget: SharedEventBudget;
}

/** The requests one response stream answers, and the timer that cancels them once the stream is gone. */
interface PendingStream {
  requestIds: RequestId[];
  /** Of those, the ones not answered yet: while any is, a run may be under way for it. */
  unanswered: number;
  streamId?: string;
  cancelTimer?: NodeJS.Timeout;
}

/** The SDK's id of the GET stream that carries messages unrelated to a request; no run is answered on it. */
const STANDALONE_STREAM = '_GET_stream';

/**
 * The POST being handled and its session, so the event store learns which stream answers which requests. One for
 * all sessions: Node never forgets an AsyncLocalStorage that ran once, so one per session would outlive it (and
 * every async operation would copy each one's store).
 */
const posting = new AsyncLocalStorage<{ session: HttpMcpSession; pending: PendingStream }>();

/** Orders sessions by activity without ties (clock readings can be equal). */
let activity = 0;

export class HttpMcpSession implements TabledSession {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  private readonly events: BoundedEventStore;
  /** Whose engine sessions these are; never shown to the client (its session names stay its own). */
  private readonly scope: string | undefined;
  private readonly streams = new Map<string, PendingStream>();
  /** Requests under way (POSTs and resumed streams): while any is, the session is not idle. */
  private busy = 0;
  /** Standalone GET streams open: the client listens for the server's messages, so it is still there. */
  private listening = 0;
  /** Its client opened a standalone GET stream once: its closing every connection then says it left. */
  private everListened = false;
  /** That it left is said once in the log. */
  private toldGone = false;
  private readonly server: Server;
  private idleTimer?: NodeJS.Timeout;
  private closed = false;
  /** Why the server ended it, for a client that comes back with its id. */
  private endReason?: string;
  lastActive = ++activity;

  /** A session for an initialize request; it joins the server's table once the SDK gives it an id. */
  constructor(
    private readonly engine: Engine,
    private readonly options: HttpSessionOptions,
    onInitialized: (session: HttpMcpSession) => void,
    onClosed: (session: HttpMcpSession, why: string | undefined) => void,
  ) {
    this.scope = options.shareSessions ? undefined : randomBytes(6).toString('hex');
    this.events = new BoundedEventStore(undefined, options.eventBudget);
    this.server = createMcpServer(engine, { ...options, sessionScope: this.scope });
    if (this.scope !== undefined) engine.setScopePresence(this.scope, () => this.present);
    const events = this.events;
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: () => onInitialized(this),
      eventStore: {
        storeEvent: (streamId, message) => {
          this.noteStream(streamId, message);
          return events.storeEvent(streamId, message);
        },
        getStreamIdForEventId: (eventId) => events.getStreamIdForEventId(eventId),
        replayEventsAfter: (lastEventId, replay) => events.replayEventsAfter(lastEventId, replay),
      },
    });
    this.transport.onclose = () => {
      this.closed = true;
      clearTimeout(this.idleTimer);
      for (const stream of this.streams.values()) clearTimeout(stream.cancelTimer);
      this.streams.clear();
      options.eventBudget.release(this.events);
      onClosed(this, this.endReason);
      if (this.scope !== undefined) void this.engine.endScope(this.scope);
    };
  }

  /** Connects its MCP server to its transport: then it can handle the initialize. */
  async connect(): Promise<void> {
    await this.server.connect(this.transport);
  }

  get id(): string | undefined {
    return this.transport.sessionId;
  }

  /**
   * Initialized, and nothing under way: no request in flight, no run of a stream the client dropped still
   * waiting for it to come back, no task running.
   */
  get idle(): boolean {
    if (this.id === undefined || this.closed || this.busy > 0) return false;
    for (const stream of this.streams.values()) if (stream.cancelTimer && stream.unanswered > 0) return false;
    return runningTasks(this.server) === 0;
  }

  /** Its client holds a connection to it open: a request in flight, or the stream it listens on. */
  get present(): boolean {
    return this.busy > 0 || this.listening > 0;
  }

  /** Serves one HTTP request of this session, `request` being `res`'s (`body` parsed for POSTs). */
  async handle(request: Request, res: http.ServerResponse, body?: JSONRPCMessage): Promise<void> {
    const pending = this.pendingFor(request, body);
    // The standalone GET stream only listens: a client that keeps it open but asks nothing is idle, yet present.
    if (!pending) {
      if (request.method === 'GET') {
        this.listening++;
        this.everListened = true;
        res.once('close', () => {
          this.listening--;
          this.noteIfGone();
        });
      }
      return sendWebResponse(await this.transport.handleRequest(request, { parsedBody: body }), res);
    }
    if (this.options.idOnlyPrimingEvents) idOnlyPrimingEvents(res);
    this.busy++;
    this.lastActive = ++activity;
    clearTimeout(this.idleTimer);
    clearTimeout(pending.cancelTimer);
    res.once('close', () => {
      this.lastActive = ++activity;
      if (--this.busy === 0) this.armIdleTimer();
      if (res.writableFinished) this.forget(pending);
      else this.cancelUnlessResumed(pending);
      this.noteIfGone();
    });
    const response = await posting.run({ session: this, pending }, () =>
      this.transport.handleRequest(request, { parsedBody: body }),
    );
    await sendWebResponse(response, res);
  }

  /** Ends the session; `why`, if given, is told to a client that comes back with its id. */
  async close(why?: string): Promise<void> {
    this.endReason ??= why;
    await this.transport.close();
  }

  /**
   * A client that listened and now holds no connection open has most likely left without ending its session
   * (no DELETE): said once, since its session and Python sessions stay until they idle out or are evicted.
   */
  private noteIfGone(): void {
    if (this.present || this.toldGone || this.closed || !this.everListened) return;
    this.toldGone = true;
    this.options.log.info(
      `MCP HTTP session ${this.id ?? ''}: its client closed every connection without ending the session; its Python sessions are the first to go when room is needed, and the session ends after ${idleTime(this.options.idleMs)} without a request or when evicted`,
    );
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    // Streams of a session that already ended close after it.
    if (this.closed) return;
    this.idleTimer = setTimeout(() => {
      const why = `it ended after ${idleTime(this.options.idleMs)} without a request`;
      this.options.log.info(`MCP HTTP session ${this.id ?? ''} ended: ${why}`);
      void this.close(why);
    }, this.options.idleMs);
    this.idleTimer.unref();
  }

  /**
   * What a request answers: a POST's JSON-RPC request (one: batches are refused before), or a resumed stream's (Last-Event-ID). Undefined for a
   * request that answers no run: the standalone GET stream, a DELETE.
   */
  private pendingFor(request: Request, body: JSONRPCMessage | undefined): PendingStream | undefined {
    if (request.method === 'POST') {
      const requestIds = body && isJSONRPCRequest(body) ? [body.id] : [];
      return { requestIds, unanswered: requestIds.length };
    }
    const lastEventId = request.headers.get('last-event-id');
    if (request.method !== 'GET' || lastEventId === null) return undefined;
    const streamId = this.events.streamOf(lastEventId);
    return (streamId !== undefined && this.streams.get(streamId)) || { requestIds: [], unanswered: 0 };
  }

  /**
   * The first stream the event store sees during a POST is the one answering that POST's requests; an answer
   * stored for one of them means it no longer runs.
   */
  private noteStream(streamId: string, message: JSONRPCMessage): void {
    const posted = posting.getStore();
    const pending = posted?.session === this ? posted.pending : undefined;
    if (pending && pending.streamId === undefined && streamId !== STANDALONE_STREAM) {
      pending.streamId = streamId;
      this.streams.set(streamId, pending);
    }
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const answered = this.streams.get(streamId);
      if (answered && answered.requestIds.includes(message.id!)) answered.unanswered--;
    }
  }

  private forget(pending: PendingStream): void {
    if (pending.streamId !== undefined) this.streams.delete(pending.streamId);
  }

  /**
   * The client dropped the stream its answers were coming on: unless it comes back for them (Last-Event-ID)
   * within the grace period, its runs are cancelled, as if it had sent notifications/cancelled, so they stop
   * spinning and free their session for the next call. Answers that arrive meanwhile are kept for the replay.
   */
  private cancelUnlessResumed(pending: PendingStream): void {
    if (pending.requestIds.length === 0) return;
    pending.cancelTimer = setTimeout(() => {
      this.forget(pending);
      for (const requestId of pending.requestIds) {
        this.transport.onmessage?.({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId, reason: 'the client dropped the response stream' },
        });
      }
    }, this.options.resumeGraceMs);
    pending.cancelTimer.unref();
  }
}

/** An idle time as the person set it: whole minutes, or seconds. */
function idleTime(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
