import { afterEach, describe, expect, it } from 'vitest';
import { bytePieces, recorded, streamServer, type StreamServer } from './stream-server.ts';
import { providerFor, streamedRound, signal, textSinceRestart, WIRES, type Wire } from './stream-providers.ts';
import { fastRounds } from './helpers.ts';

let server: StreamServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CASES = WIRES.flatMap((wire) => (['text', 'tools'] as const).map((kind) => [wire, kind] as const));

/** Serves `${wire}-${kind}.sse` to a streamed round (in pieces of `size` bytes) and the `.json` to a whole one. */
async function serveRecorded(wire: Wire, kind: string, size = 7, hold?: Promise<unknown>) {
  const sse = recorded(`${wire}-${kind}.sse`);
  const pieces = bytePieces(sse, size);
  server = await streamServer((body) =>
    body.stream === true ? { pieces, ...(hold ? { hold: { at: pieces.length - 1, until: hold } } : {}) } : recorded(`${wire}-${kind}.json`),
  );
  return server;
}

describe('a streamed round, for each wire', () => {
  it.each(CASES)("%s (%s): the deltas arrive before the stream ends, make the content, and the reply is the whole answer's", async (wire, kind) => {
    const first = signal();
    const served = await serveRecorded(wire, kind, 7, first.promise);
    const provider = providerFor(wire, served.url);
    // The server holds the stream's last piece until a delta has arrived: a round that waited for the end would hang.
    const { outcome, deltas } = await streamedRound(provider, { onDelta: () => first.resolve() });
    const whole = await provider.round({ role: 'writer', config: { model: 'm-test' }, messages: [{ role: 'user', content: 'Go.' }], tools: null });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    expect(outcome).toEqual(whole);
    if (!outcome.ok) return;
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((delta) => delta.text !== '' && delta.restart === undefined)).toBe(true);
    expect(deltas.map((delta) => delta.text).join('')).toBe(outcome.reply.content);
  });

  it.each(WIRES)('%s: asks for a stream only when the round has a delta listener', async (wire) => {
    const served = await serveRecorded(wire, 'text');
    const provider = providerFor(wire, served.url);
    await streamedRound(provider);
    await provider.round({ role: 'writer', config: { model: 'm-test' }, messages: [{ role: 'user', content: 'Go.' }], tools: null });
    const [streamed, whole] = served.bodies();
    expect(streamed!.stream).toBe(true);
    expect(whole!.stream).toBeUndefined();
    if (wire === 'openai') expect(streamed!.stream_options).toEqual({ include_usage: true });
    if (wire !== 'workers-ai') expect(served.requests[0]!.headers.accept).toBe('text/event-stream');
  });

  it('reads the tool calls of an interleaved stream by index, with their arguments parsed', async () => {
    const served = await serveRecorded('openai', 'tools', 1);
    const { outcome } = await streamedRound(providerFor('openai', served.url));
    expect(outcome).toEqual({
      ok: true,
      reply: {
        content: 'Let me count.',
        tool_calls: [
          { id: 'call_a', name: 'stats_count', arguments: { text: 'héllo ☃' } },
          { id: 'call_b', name: 'grab', arguments: { value: 'x' } },
        ],
        usage: { input_tokens: 30, output_tokens: 24 },
      },
    });
  });
});

describe('the bytes of a stream as they fall', () => {
  const LINE_ENDS = [
    ['LF', (text: string) => text],
    ['CRLF', (text: string) => text.replace(/\n/g, '\r\n')],
    ['CR', (text: string) => text.replace(/\n/g, '\r')],
  ] as const;

  it.each(WIRES.flatMap((wire) => LINE_ENDS.map(([name, ends]) => [wire, name, ends] as const)))(
    '%s with %s line ends reads the same reply',
    async (wire, _name, ends) => {
      // The recorded text's own "\n" escapes are JSON text (backslash, n), not line ends, so only real line ends change.
      const sse = ends(recorded(`${wire}-text.sse`));
      server = await streamServer((body) => (body.stream === true ? { pieces: bytePieces(sse, 5) } : recorded(`${wire}-text.json`)));
      const provider = providerFor(wire, server.url);
      const { outcome, deltas } = await streamedRound(provider);
      expect(outcome).toEqual(await provider.round({ role: 'writer', config: { model: 'm-test' }, messages: [{ role: 'user', content: 'Go.' }], tools: null }));
      expect(outcome.ok && deltas.map((delta) => delta.text).join('')).toBe('Hello, wörld — ☃ "quoted"\nand 🎉 done.');
    },
  );

  /** The recorded OpenAI text stream cut in two at the first place `at` finds. */
  const SPLITS = [
    ['inside a UTF-8 character', (bytes: Buffer) => bytes.indexOf(Buffer.from('☃')) + 1],
    ['inside a four-byte character', (bytes: Buffer) => bytes.indexOf(Buffer.from('🎉')) + 2],
    ['inside "data:"', (bytes: Buffer) => bytes.indexOf('data:', 10) + 2],
    ['between "data:" and its value', (bytes: Buffer) => bytes.indexOf('data:', 10) + 5],
    ['inside a JSON string', (bytes: Buffer) => bytes.indexOf('Hello') + 3],
    ['inside an escape of a JSON string', (bytes: Buffer) => bytes.indexOf('\\"quoted') + 1],
    ['between the two line ends of an event', (bytes: Buffer) => bytes.indexOf('\n\n') + 1],
    ['inside [DONE]', (bytes: Buffer) => bytes.indexOf('[DONE]') + 3],
  ] as const;

  it.each(SPLITS)('a chunk split %s reads the same reply', async (_name, at) => {
    const bytes = Buffer.from(recorded('openai-text.sse'), 'utf8');
    const cut = at(bytes);
    expect(cut).toBeGreaterThan(0);
    server = await streamServer(() => ({ pieces: [bytes.subarray(0, cut), bytes.subarray(cut)] }));
    const { outcome, deltas } = await streamedRound(providerFor('openai', server.url));
    expect(outcome).toMatchObject({ ok: true, reply: { content: 'Hello, wörld — ☃ "quoted"\nand 🎉 done.' } });
    // The pieces of one chunk come as one delta: however the bytes fall, the text is the same, with no empty delta.
    expect(deltas.map((delta) => delta.text).join('')).toBe('Hello, wörld — ☃ "quoted"\nand 🎉 done.');
    expect(deltas.every((delta) => delta.text !== '')).toBe(true);
  });

  it('tells the pieces that arrive in one chunk as one delta', async () => {
    server = await streamServer(() => ({ pieces: [recorded('openai-text.sse')] }));
    const { deltas } = await streamedRound(providerFor('openai', server.url));
    expect(deltas.map((delta) => delta.text)).toEqual(['Hello, wörld — ☃ "quoted"\nand 🎉 done.']);
  });

  it('a CRLF split between its CR and its LF reads the same reply', async () => {
    const bytes = Buffer.from(recorded('anthropic-text.sse').replace(/\n/g, '\r\n'), 'utf8');
    const cut = bytes.indexOf('\r\n') + 1;
    server = await streamServer(() => ({ pieces: [bytes.subarray(0, cut), bytes.subarray(cut)] }));
    const { outcome } = await streamedRound(providerFor('anthropic', server.url));
    expect(outcome).toMatchObject({ ok: true, reply: { content: 'Hello, wörld — ☃ "quoted"\nand 🎉 done.' } });
  });
});

describe('a stream cut in the middle', () => {
  it.each(WIRES.filter((wire) => wire !== 'workers-ai'))('%s: the round is sent again, and says so before the new text', async (wire) => {
    const sse = recorded(`${wire}-text.sse`);
    const half = Buffer.from(sse).subarray(0, Buffer.from(sse).indexOf('☃') + 3);
    server = await streamServer((_body, index) => (index === 0 ? { pieces: [half], after: 'cut' } : { pieces: bytePieces(sse, 11) }));
    const { outcome, deltas } = await streamedRound(providerFor(wire, server.url));
    expect(outcome).toMatchObject({ ok: true, reply: { content: 'Hello, wörld — ☃ "quoted"\nand 🎉 done.' } });
    expect(server.requests).toHaveLength(2);
    const restarts = deltas.flatMap((delta, index) => (delta.restart ? [index] : []));
    expect(restarts).toHaveLength(1);
    expect(deltas[restarts[0]!]).toEqual({ text: '', restart: true });
    // The cut fell inside the second text's event: only the first had arrived.
    expect(deltas.slice(0, restarts[0]).map((delta) => delta.text)).toEqual(['Hello']);
    expect(outcome.ok && textSinceRestart(deltas)).toBe(outcome.ok && outcome.reply.content);
  });

  it.each(WIRES.filter((wire) => wire !== 'workers-ai'))('%s: cut on every attempt, the round fails naming the provider and the attempts', async (wire) => {
    const sse = Buffer.from(recorded(`${wire}-text.sse`));
    server = await streamServer(() => ({ pieces: [sse.subarray(0, sse.length / 2)], after: 'cut' }));
    const { outcome } = await streamedRound(providerFor(wire, server.url, fastRounds({ retries: 2 })));
    expect(outcome).toEqual({ ok: false, message: `${wire}: the stream was cut off before its end (HTTP 200, after 3 attempts)` });
  });

  it('workers-ai: the binding is not sent again; the round fails naming the provider', async () => {
    const sse = Buffer.from(recorded('workers-ai-text.sse'));
    server = await streamServer(() => ({ pieces: [sse.subarray(0, sse.length / 2)], after: 'cut' }));
    const { outcome } = await streamedRound(providerFor('workers-ai', server.url));
    expect(outcome).toEqual({ ok: false, message: 'workers-ai: the stream was cut off before its end (no HTTP status)' });
    expect(server.requests).toHaveLength(1);
  });

  it.each(WIRES.filter((wire) => wire !== 'workers-ai'))('%s: a stream that ends without its end mark was cut', async (wire) => {
    const sse = recorded(`${wire}-text.sse`);
    const withoutEnd = wire === 'openai' ? sse.replace('data: [DONE]\n\n', '') : sse.replace(/event: message_stop\ndata: .*\n\n/, '');
    expect(withoutEnd).not.toBe(sse);
    server = await streamServer(() => ({ pieces: [withoutEnd] }));
    const { outcome } = await streamedRound(providerFor(wire, server.url, fastRounds({ retries: 0 })));
    expect(outcome).toEqual({ ok: false, message: `${wire}: the stream was cut off before its end (HTTP 200)` });
  });
});

describe('cancelling a streamed round', () => {
  it.each(WIRES)('%s: closes the request at once rather than reading it to its end', async (wire) => {
    // The stream up to its first text, then silence: the round is cancelled on its first delta.
    const sse = Buffer.from(recorded(`${wire}-text.sse`));
    server = await streamServer(() => ({ pieces: [sse.subarray(0, sse.indexOf('\n\n', sse.indexOf('Hello')) + 2)], after: 'open' }));
    const controller = new AbortController();
    const { outcome, deltas } = await streamedRound(providerFor(wire, server.url, fastRounds({ timeoutMs: 30_000, idleMs: 30_000 })), {
      signal: controller.signal,
      onDelta: () => controller.abort(),
    });
    expect(outcome).toEqual({ ok: false, message: `${wire}: the round was cancelled${wire === 'workers-ai' ? ' (no HTTP status)' : ''}` });
    expect(deltas).toEqual([{ text: 'Hello' }]);
    await server.served[0]!.closed;
    expect(server.served[0]!.closedByClient).toBe(true);
  });
});

describe('a server that answers the whole reply at once', () => {
  it.each(WIRES.filter((wire) => wire !== 'workers-ai'))('%s: reads it as the non-streaming round does, its text as one delta', async (wire) => {
    server = await streamServer(() => recorded(`${wire}-tools.json`));
    const provider = providerFor(wire, server.url);
    const { outcome, deltas } = await streamedRound(provider);
    expect(outcome).toEqual(await provider.round({ role: 'writer', config: { model: 'm-test' }, messages: [{ role: 'user', content: 'Go.' }], tools: null }));
    expect(deltas).toEqual([{ text: 'Let me count.' }]);
  });
});
