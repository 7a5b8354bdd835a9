/**
 * The event store of a 2025-11-25 session's transport (the SDK's `EventStore`), in the
 * session object's storage: each message the transport sends on a stream is kept under an
 * event id, so a client that lost the stream (a dropped connection, a restart of the local
 * server, an eviction) reconnects with `Last-Event-ID` and gets what it missed, and the SDK
 * sends 2025-11-25 clients the priming event that makes a stream resumable. Event ids are
 * this session's own sequence numbers behind a random salt of the session's: an id of another
 * session's names nothing here (its events are in its own object, under another salt), a
 * forged or malformed one names nothing either, and the SDK then refuses the reconnection. Bounded: at most MAX_EVENTS events and MAX_STORED_CHARS
 * characters of messages; past either, the oldest go first (a client that comes back later
 * than that resumes nothing, and reads its run's result as the inbox or `GET /runs/:id` show
 * it); a message past MAX_EVENT_CHARS is sent but not kept (a resumed stream goes on without
 * it). Keys of their own beside session-state.ts's.
 */
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';
import type { DoStorage } from '../platform-types.ts';

/** The most events a session keeps. */
export const MAX_EVENTS = 512;
/** The most characters of messages (their JSON texts) a session keeps. */
export const MAX_STORED_CHARS = 4 * 1024 * 1024;
/** The longest message kept, in characters of JSON (a stored value is at most 2 MB of UTF-8). */
export const MAX_EVENT_CHARS = 512 * 1024;

const EVENT = 'session-event:';
const SALT = 'session-event-salt';
const NEXT = 'session-event-next';
const OLDEST = 'session-event-oldest';
const STORED = 'session-event-chars';

/** One kept event: its stream, the message (null for a priming event, which carries none, or one not kept) and its size. */
interface StoredEvent {
  stream: StreamId;
  message: JSONRPCMessage | null;
  chars: number;
}

/** An event id: the session's salt, then a sequence number of the session (at most 15 digits). */
const EVENT_ID = /^([0-9a-f]{16})-([0-9]{1,15})$/;

const keyOf = (seq: number): string => `${EVENT}${String(seq).padStart(15, '0')}`;

/** The event store of one session, over its object's storage. */
export class SessionEventStore implements EventStore {
  constructor(private readonly storage: DoStorage) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    // A priming event carries no message; one past MAX_EVENT_CHARS is sent on but not kept.
    const text = 'jsonrpc' in message ? JSON.stringify(message) : '';
    const kept = text !== '' && text.length <= MAX_EVENT_CHARS ? message : null;
    const chars = kept === null ? 0 : text.length;
    const kv = this.storage.kv;
    const id = this.storage.transactionSync(() => {
      const salt = this.salt(true)!;
      const next = kv.get<number>(NEXT) ?? 0;
      kv.put<StoredEvent>(keyOf(next), { stream: streamId, message: kept, chars });
      kv.put(NEXT, next + 1);
      let stored = (kv.get<number>(STORED) ?? 0) + chars;
      let oldest = kv.get<number>(OLDEST) ?? 0;
      // The oldest go first, never the event just stored.
      while (oldest < next && (next + 1 - oldest > MAX_EVENTS || stored > MAX_STORED_CHARS)) {
        const gone = kv.get<StoredEvent>(keyOf(oldest));
        if (gone) stored -= gone.chars;
        kv.delete(keyOf(oldest));
        oldest++;
      }
      kv.put(OLDEST, oldest);
      kv.put(STORED, stored);
      return `${salt}-${next}`;
    });
    await this.storage.sync();
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.event(eventId)?.stream;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const last = this.event(lastEventId);
    // The SDK asks getStreamIdForEventId first and refuses an unknown id; this is its second line.
    if (!last) throw new Error('no such event in this session');
    const salt = this.salt(false)!;
    const missed = [...this.storage.kv.list<StoredEvent>({ prefix: EVENT, startAfter: keyOf(last.seq) })];
    for (const [key, event] of missed) {
      if (event.stream === last.stream && event.message !== null) await send(`${salt}-${Number(key.slice(EVENT.length))}`, event.message);
    }
    return last.stream;
  }

  /** Forgets every event (the session ended). */
  clear(): void {
    this.storage.transactionSync(() => {
      for (const [key] of this.storage.kv.list({ prefix: EVENT })) this.storage.kv.delete(key);
      for (const key of [NEXT, OLDEST, STORED, SALT]) this.storage.kv.delete(key);
    });
  }

  /** The kept event `eventId` names, with its sequence number, or undefined. */
  private event(eventId: EventId): (StoredEvent & { seq: number }) | undefined {
    const parts = typeof eventId === 'string' ? EVENT_ID.exec(eventId) : null;
    if (!parts || parts[1] !== this.salt(false)) return undefined;
    const seq = Number(parts[2]);
    const event = this.storage.kv.get<StoredEvent>(keyOf(seq));
    return event && { ...event, seq };
  }

  /** The session's salt of event ids (made with the first event when `make`). */
  private salt(make: boolean): string | undefined {
    let salt = this.storage.kv.get<string>(SALT);
    if (salt === undefined && make) {
      salt = [...crypto.getRandomValues(new Uint8Array(8))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
      this.storage.kv.put(SALT, salt);
    }
    return salt;
  }
}
