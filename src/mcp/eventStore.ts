// What an HTTP session sent on its SSE streams, kept so a client that lost a stream can ask for the rest
// (Last-Event-ID). One store per MCP session, so one client can never replay another's events; all the stores of
// one server share a budget too, so the cap on sessions times each one's bound never has to fit in the heap.
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';
import { approximateBytes, shrinkMessage } from './resultBudget';

/** Per MCP session: a run's result with a few figures fits several times over. */
export const MAX_STORED_EVENT_BYTES = 32 * 1024 * 1024;
/** Per HTTP server, all its MCP sessions together: four sessions' worth, whatever the cap on sessions. */
export const MAX_SERVER_EVENT_BYTES = 128 * 1024 * 1024;
/** Of the budget, what one event may take: a larger one is kept without its displays (resultBudget.ts). */
const EVENT_SHARE = 4;

interface StoredEvent {
  streamId: StreamId;
  message: JSONRPCMessage;
  bytes: number;
  /** When it was stored, across every store of the process: the shared budget drops the oldest of all first. */
  order: number;
}

let storedEvents = 0;

/**
 * What the event stores of one server keep, together: past `maxBytes` the oldest event of any store goes first,
 * so a session whose client left long ago loses its replay before one that is talking now.
 */
export class SharedEventBudget {
  private readonly stores = new Set<BoundedEventStore>();
  private bytes = 0;

  constructor(readonly maxBytes = MAX_SERVER_EVENT_BYTES) {}

  /** `store` holds `change` bytes more (or fewer); past the budget the oldest events of all go, `keep` last of all. */
  held(store: BoundedEventStore, change: number, keep?: EventId): void {
    this.stores.add(store);
    this.bytes += change;
    while (this.bytes > this.maxBytes) {
      let oldest: BoundedEventStore | undefined;
      for (const s of this.stores) if (s.oldestOrder() < (oldest?.oldestOrder() ?? Infinity)) oldest = s;
      if (!oldest) return;
      const freed = oldest.dropOldest(keep);
      if (freed === 0) return;
      this.bytes -= freed;
    }
  }

  /** The store's session ended: what it held is free. */
  release(store: BoundedEventStore): void {
    if (this.stores.delete(store)) this.bytes -= store.heldBytes;
  }
}

/**
 * In memory and bounded: past `maxBytes` the oldest events go, so a client that comes back very late gets less;
 * an event larger than a quarter of it is kept without its displays, so no single one can pass the bound.
 */
export class BoundedEventStore implements EventStore {
  private readonly events = new Map<EventId, StoredEvent>();
  private bytes = 0;
  private counter = 0;

  constructor(
    private readonly maxBytes = MAX_STORED_EVENT_BYTES,
    private readonly shared?: SharedEventBudget,
  ) {}

  get heldBytes(): number {
    return this.bytes;
  }

  /** When its oldest event was stored (Infinity when it holds none). */
  oldestOrder(): number {
    const first = this.events.values().next();
    return first.done ? Infinity : first.value.order;
  }

  /** Drops its oldest event unless that is `keep`; the bytes freed. */
  dropOldest(keep?: EventId): number {
    const first = this.events.entries().next();
    if (first.done || first.value[0] === keep) return 0;
    this.events.delete(first.value[0]);
    this.bytes -= first.value[1].bytes;
    return first.value[1].bytes;
  }

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const eventId = `${streamId}.${++this.counter}`;
    const share = Math.floor(this.maxBytes / EVENT_SHARE);
    let bytes = approximateBytes(message);
    if (bytes > share) {
      message = shrinkMessage(message, share, 'a resumed stream replays results without their displays');
      bytes = approximateBytes(message);
      // Still past the whole budget (not a tool result): sent, never replayed.
      if (bytes > this.maxBytes) return eventId;
    }
    this.events.set(eventId, { streamId, message, bytes, order: ++storedEvents });
    this.bytes += bytes;
    let freed = 0;
    while (this.bytes > this.maxBytes) {
      const dropped = this.dropOldest(eventId);
      if (dropped === 0) break;
      freed += dropped;
    }
    this.shared?.held(this, bytes - freed, eventId);
    return eventId;
  }

  /** Answers synchronously too (streamOf), for the session deciding whether a resume keeps a run alive. */
  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.streamOf(eventId);
  }

  streamOf(eventId: EventId): StreamId | undefined {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const streamId = this.streamOf(lastEventId);
    if (streamId === undefined) return '';
    let after = false;
    // Map order is the order events were stored in.
    for (const [eventId, event] of [...this.events]) {
      if (after && event.streamId === streamId) await send(eventId, event.message);
      if (eventId === lastEventId) after = true;
    }
    return streamId;
  }
}
