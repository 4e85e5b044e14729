// What an HTTP session sent on its SSE streams, kept so a client that lost a stream can ask for the rest
// (Last-Event-ID). One store per MCP session, so one client can never replay another's events.
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { approximateBytes, shrinkMessage } from './resultBudget';

/** Per MCP session: a run's result with a few figures fits several times over. */
export const MAX_STORED_EVENT_BYTES = 32 * 1024 * 1024;
/** Of the budget, what one event may take: a larger one is kept without its displays (resultBudget.ts). */
const EVENT_SHARE = 4;

interface StoredEvent {
  streamId: StreamId;
  message: JSONRPCMessage;
  bytes: number;
}

/**
 * In memory and bounded: past `maxBytes` the oldest events go, so a client that comes back very late gets less;
 * an event larger than a quarter of it is kept without its displays, so no single one can pass the bound.
 */
export class BoundedEventStore implements EventStore {
  private readonly events = new Map<EventId, StoredEvent>();
  private bytes = 0;
  private counter = 0;

  constructor(private readonly maxBytes = MAX_STORED_EVENT_BYTES) {}

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
    this.events.set(eventId, { streamId, message, bytes });
    this.bytes += bytes;
    for (const [oldest, event] of this.events) {
      if (this.bytes <= this.maxBytes || oldest === eventId) break;
      this.events.delete(oldest);
      this.bytes -= event.bytes;
    }
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
