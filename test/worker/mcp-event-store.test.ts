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
import { API_TOKEN, call, json, testEnv } from './app/client.ts';
import { appFetch } from './mcp/mcp-client.ts';
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
    ['a forged id', '0123456789abcdef-0'],
    ['a bare sequence number', '0'],
    ['a negative id', '-1'],
    ['an id with a suffix', '0_standalone'],
    ['a number past the format', '1'.repeat(16)],
    ['an empty id', ''],
    ['a path', '../0'],
    ['a salt of upper-case digits', 'ABCDEF0123456789-0'],
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
      const mine = await store.storeEvent('s', note(1));
      await store.storeEvent('s', note(2));
      await store.storeEvent('s', note(3));
      // The same sequence number, another session's salt.
      expect(theirs.slice(17)).toBe('2');
      expect(await store.getStreamIdForEventId(theirs)).toBeUndefined();
      expect(await store.getStreamIdForEventId(`${mine.slice(0, 16)}-2`)).toBe('s');
      store.clear();
      expect(await store.getStreamIdForEventId(mine)).toBeUndefined();
      const fresh = await store.storeEvent('s', note(1));
      expect(fresh).toMatch(/^[0-9a-f]{16}-0$/);
      expect(fresh.slice(0, 16)).not.toBe(theirs.slice(0, 16));
    });
  });
});

describe('a client resuming a stream over HTTP', () => {
  const base = { authorization: `Bearer ${API_TOKEN}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

  /** Opens a 2025-11-25 session with raw requests; its id. */
  async function openSession(): Promise<string> {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const opened = await appFetch('https://runvil.test/mcp', { method: 'POST', headers: base, body: JSON.stringify(initialize) });
    const session = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const headers = { ...base, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    await (
      await appFetch('https://runvil.test/mcp', { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
    ).text();
    return session;
  }

  const headersOf = (session: string, lastEventId?: string) => ({
    ...base,
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-11-25',
    ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}),
  });

  /** The `id:` and `data:` of each event of an SSE text. */
  const eventsOf = (text: string) =>
    text
      .split('\n\n')
      .filter((frame) => frame.includes('id: '))
      .map((frame) => ({ id: /^id: (.*)$/m.exec(frame)![1]!, data: /^data: ?(.*)$/m.exec(frame)?.[1] ?? '' }));

  it('gets a priming event with an id and a retry, and what followed it when it reconnects with that id', async () => {
    const session = await openSession();
    const pinged = await appFetch('https://runvil.test/mcp', {
      method: 'POST',
      headers: headersOf(session),
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }),
    });
    const text = await pinged.text();
    expect(text).toMatch(/^id: [0-9a-f]{16}-\d+\nretry: 1000\ndata: ?\n/);
    const [priming, answer] = eventsOf(text);
    expect(JSON.parse(answer!.data)).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    const resumed = await appFetch('https://runvil.test/mcp', { method: 'GET', headers: headersOf(session, priming!.id) });
    expect(resumed.status).toBe(200);
    expect(eventsOf(await resumed.text())).toEqual([answer]);
  });

  it.each([
    ['forged', () => '0123456789abcdef-1'],
    ['malformed', () => 'not-an-event-id'],
    ['huge', () => '9'.repeat(10_000)],
  ])('is refused with a Last-Event-ID that is %s', async (_, lastEventId) => {
    const session = await openSession();
    const resumed = await appFetch('https://runvil.test/mcp', { method: 'GET', headers: headersOf(session, lastEventId()) });
    expect(resumed.status).toBe(400);
    await resumed.text();
  });

  it("is refused with another session's event id, and another principal cannot use the session at all", async () => {
    const theirs = await openSession();
    const text = await (
      await appFetch('https://runvil.test/mcp', { method: 'POST', headers: headersOf(theirs), body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) })
    ).text();
    const [priming] = eventsOf(text);
    const mine = await openSession();
    const resumed = await appFetch('https://runvil.test/mcp', { method: 'GET', headers: headersOf(mine, priming!.id) });
    expect(resumed.status).toBe(400);
    await resumed.text();
    const created = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'other', scopes: ['runs:read'] } }), 201);
    const stranger = await appFetch('https://runvil.test/mcp', {
      method: 'GET',
      headers: { ...headersOf(theirs, priming!.id), authorization: `Bearer ${created.key}` },
    });
    expect(stranger.status).toBe(404);
    await stranger.text();
  });
});
