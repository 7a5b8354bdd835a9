/**
 * The event store of a 2025-11-25 session (session-event-store.ts) over a session object's
 * real storage: what a client missed after an event comes back on that event's stream, from a
 * new store over the same storage (the object lost its memory); the store stays within its
 * bounds; and a Last-Event-ID that is forged, malformed, another session's or evicted names
 * nothing, so the transport refuses the reconnection.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { MAX_EVENT_CHARS, MAX_EVENTS, MAX_STORED_CHARS, SessionEventStore } from '../../src/worker/mcp/session-event-store.ts';
import type { DoStorage } from '../../src/worker/platform-types.ts';
import { testEnv } from './app/client.ts';
import { mcpSessions } from '../../src/worker/mcp/mcp-session.ts';

/** Runs `body` on the storage of a fresh session object. */
function onSessionStorage<T>(body: (storage: DoStorage) => Promise<T>, id = mcpSessions(testEnv).newUniqueId()): Promise<T> {
  return runInDurableObject(mcpSessions(testEnv).get(id), async (_instance: unknown, object: { storage: DoStorage }) => body(object.storage));
}

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: n } });
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { content: [] } });

/** What a replay after `lastEventId` sends, as [event id, message] pairs, and the stream it names. */
async function replay(store: SessionEventStore, lastEventId: string) {
  const sent: [string, JSONRPCMessage][] = [];
  const stream = await store.replayEventsAfter(lastEventId, { send: async (id, message) => void sent.push([id, message]) });
  return { stream, sent };
}

describe("a session's event store", () => {
  it("replays what came after an event on that event's stream only, also from a new store over the same storage", async () => {
    await onSessionStorage(async (storage) => {
      const store = new SessionEventStore(storage);
      const priming = await store.storeEvent('call-1', {} as JSONRPCMessage);
      const first = await store.storeEvent('call-1', note(1));
      await store.storeEvent('standalone', note(99));
      const second = await store.storeEvent('call-1', note(2));
      const done = await store.storeEvent('call-1', answer(1));
      expect(await store.getStreamIdForEventId(priming)).toBe('call-1');
      // The object lost its memory: a new store reads the same storage.
      const again = new SessionEventStore(storage);
      expect(await replay(again, priming)).toEqual({
        stream: 'call-1',
        sent: [
          [first, note(1)],
          [second, note(2)],
          [done, answer(1)],
        ],
      });
      expect(await replay(again, second)).toEqual({ stream: 'call-1', sent: [[done, answer(1)]] });
      expect(await replay(again, done)).toEqual({ stream: 'call-1', sent: [] });
    });
  });

  it('keeps at most MAX_EVENTS events, the oldest going first', async () => {
    await onSessionStorage(async (storage) => {
      const store = new SessionEventStore(storage);
      const ids: string[] = [];
      for (let n = 0; n < MAX_EVENTS + 10; n++) ids.push(await store.storeEvent('s', note(n)));
      expect(await store.getStreamIdForEventId(ids[9]!)).toBeUndefined();
      expect(await store.getStreamIdForEventId(ids[10]!)).toBe('s');
      expect((await replay(store, ids[10]!)).sent).toHaveLength(MAX_EVENTS - 1);
    });
  });

  it('keeps at most MAX_STORED_CHARS of messages, and sends on one past MAX_EVENT_CHARS without keeping it', async () => {
    await onSessionStorage(async (storage) => {
      const store = new SessionEventStore(storage);
      const big = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', id: n, result: { text: 'x'.repeat(MAX_EVENT_CHARS - 100) } });
      const ids = [];
      for (let n = 0; n < MAX_STORED_CHARS / MAX_EVENT_CHARS + 1; n++) ids.push(await store.storeEvent('s', big(n)));
      expect(await store.getStreamIdForEventId(ids[0]!)).toBeUndefined();
      expect(await store.getStreamIdForEventId(ids[1]!)).toBe('s');
      const huge = await store.storeEvent('s', { jsonrpc: '2.0', id: 9, result: { text: 'y'.repeat(MAX_EVENT_CHARS) } });
      const after = await store.storeEvent('s', note(1));
      expect(await store.getStreamIdForEventId(huge)).toBe('s');
      expect((await replay(store, ids.at(-1)!)).sent).toEqual([[after, note(1)]]);
    });
  });

  it.each([
    ['a forged id', '123456'],
    ['a negative id', '-1'],
    ['an id with a suffix', '0_standalone'],
    ['a number past the format', '1'.repeat(16)],
    ['an empty id', ''],
    ['a path', '../0'],
    ['an exponent', '1e3'],
  ])('names nothing for %s', async (_, lastEventId) => {
    await onSessionStorage(async (storage) => {
      const store = new SessionEventStore(storage);
      await store.storeEvent('s', note(1));
      expect(await store.getStreamIdForEventId(lastEventId)).toBeUndefined();
      await expect(replay(store, lastEventId)).rejects.toThrow();
    });
  });

  it("names nothing for another session's event id, and forgets its events when cleared", async () => {
    const theirs = await onSessionStorage(async (storage) => {
      const store = new SessionEventStore(storage);
      await store.storeEvent('s', note(1));
      await store.storeEvent('s', note(2));
      return store.storeEvent('s', note(3));
    });
    await onSessionStorage(async (storage) => {
      const store = new SessionEventStore(storage);
      await store.storeEvent('s', note(1));
      expect(await store.getStreamIdForEventId(theirs)).toBeUndefined();
      store.clear();
      expect(await store.getStreamIdForEventId('0')).toBeUndefined();
      expect(await store.storeEvent('s', note(1))).toBe('0');
    });
  });
});
