import { afterEach, describe, expect, it } from 'vitest';
import { fastRounds } from './helpers.ts';
import { recorded, streamServer, type StreamPlan, type StreamServer } from './stream-server.ts';
import { providerFor, streamedRound, WIRES, type Wire } from './stream-providers.ts';

let server: StreamServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The status part of a failure message: HTTP rounds name theirs, the binding has none. */
const status = (wire: Wire) => (wire === 'workers-ai' ? 'no HTTP status' : 'HTTP 200');

/** The events that open a stream, before its text. */
const OPENING: Record<Wire, string> = {
  openai: 'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n',
  anthropic:
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  'workers-ai': '',
};

/** One event of text `text` on each wire. */
const textEvent: Record<Wire, (text: string) => string> = {
  openai: (text) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`,
  anthropic: (text) =>
    `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })}\n\n`,
  'workers-ai': (text) => `data: ${JSON.stringify({ response: text })}\n\n`,
};

/** Runs one streamed round against `plan`; answers its outcome, after the server has seen the connection end. */
async function attack(wire: Wire, plan: StreamPlan, rounds = fastRounds({ retries: 0 })) {
  server = await streamServer(() => plan);
  const { outcome, deltas } = await streamedRound(providerFor(wire, server.url, rounds));
  await server.served[0]?.closed;
  return { outcome, deltas, served: server.served[0]!, requests: server.requests.length };
}

describe('a provider stream that never ends', () => {
  it.each(WIRES)('%s: silent after its first text, it fails at the idle limit and the connection is closed', async (wire) => {
    const { outcome, deltas, served } = await attack(
      wire,
      { pieces: [OPENING[wire], textEvent[wire]('Hel')], after: 'open' },
      fastRounds({ retries: 0, idleMs: 150 }),
    );
    expect(outcome).toEqual({ ok: false, message: `${wire}: the stream sent nothing for 150 ms (${status(wire)})` });
    expect(deltas).toEqual([{ text: 'Hel' }]);
    expect(served.closedByClient).toBe(true);
  });

  it.each(WIRES)('%s: silent from its start, it fails at the idle limit', async (wire) => {
    const { outcome } = await attack(wire, { pieces: [], after: 'open' }, fastRounds({ retries: 0, idleMs: 150 }));
    expect(outcome).toEqual({ ok: false, message: `${wire}: the stream sent nothing for 150 ms (${status(wire)})` });
  });

  const CHATTER: [string, string][] = [
    ['comments', ': keep-alive\n\n'],
    ['pings', 'event: ping\ndata: {"type": "ping"}\n\n'],
    ['blank lines', '\n'],
  ];
  it.each(WIRES.flatMap((wire) => CHATTER.map(([name, text]) => [wire, name, text] as const)))(
    '%s: never silent but never ending (%s), it fails at the round time limit',
    async (wire, _name, text) => {
      // Only anthropic's parser takes a ping; the others read its data as a chunk without text, which is no end either.
      const chatter = wire !== 'anthropic' && text.startsWith('event: ping') ? ': ping\n\n' : text;
      const { outcome, served } = await attack(
        wire,
        { pieces: [OPENING[wire]], after: { repeat: chatter, upTo: Number.MAX_SAFE_INTEGER }, pace: 2 },
        fastRounds({ retries: 0, timeoutMs: 400, idleMs: 10_000 }),
      );
      const limit = wire === 'workers-ai' ? 'the stream of model "m-test" did not end within 400 ms' : 'the stream did not end within 400 ms';
      expect(outcome).toEqual({ ok: false, message: `${wire}: ${limit} (${status(wire)})` });
      expect(served.closedByClient).toBe(true);
    },
  );
});

describe('a provider stream that sends too much', () => {
  const HUNDRED_MB = 100 * 1024 * 1024;
  const FLOODS: [string, (wire: Wire) => string][] = [
    ['text events', (wire) => textEvent[wire]('x'.repeat(64 * 1024))],
    ['one line without end', () => 'x'.repeat(64 * 1024)],
    ['comments', () => `: ${'x'.repeat(64 * 1024)}\n`],
  ];
  it.each(WIRES.flatMap((wire) => FLOODS.map(([name, flood]) => [wire, name, flood] as const)))(
    '%s: 100 MB of %s fail at the 8 MiB cap, and the connection is closed long before the 100 MB are sent',
    async (wire, _name, flood) => {
      const { outcome, served } = await attack(wire, { pieces: [OPENING[wire]], after: { repeat: flood(wire), upTo: HUNDRED_MB } });
      expect(outcome).toEqual({ ok: false, message: `${wire}: the stream sent more than 8 MiB, the most a reply may send (${status(wire)})` });
      expect(served.closedByClient).toBe(true);
      expect(served.written).toBeLessThan(HUNDRED_MB);
    },
  );

  it.each(WIRES.filter((wire) => wire !== 'workers-ai'))('%s: a whole JSON answer of 100 MB instead of a stream fails at the cap too', async (wire) => {
    const { outcome, served } = await attack(wire, {
      contentType: 'application/json',
      pieces: ['{"choices":[{"message":{"content":"'],
      after: { repeat: 'x'.repeat(64 * 1024), upTo: HUNDRED_MB },
    });
    expect(outcome).toEqual({ ok: false, message: `${wire}: the reply sent more than 8 MiB, the most a reply may send (HTTP 200)` });
    expect(served.closedByClient).toBe(true);
    expect(served.written).toBeLessThan(HUNDRED_MB);
  });

  it('a cap the Host sets smaller holds too', async () => {
    const { outcome } = await attack(
      'openai',
      { pieces: [OPENING.openai], after: { repeat: textEvent.openai('y'.repeat(1000)), upTo: 1024 * 1024 } },
      fastRounds({ retries: 0, maxStreamBytes: 64 * 1024 }),
    );
    expect(outcome).toEqual({ ok: false, message: 'openai: the stream sent more than 64 KiB, the most a reply may send (HTTP 200)' });
  });
});

describe('a provider stream that sends malformed chunks', () => {
  const MALFORMED: [Wire, string, string][] = [
    ['openai', 'data: {"choices": [{"delta": {"content": "hi"}\n\n', 'the stream sent a chunk that is not JSON'],
    ['openai', 'data: not json at all\n\n', 'the stream sent a chunk that is not JSON'],
    ['openai', 'data: [1, 2, 3]\n\n', 'the stream sent a chunk that is not a JSON object'],
    ['openai', 'data: "text"\n\n', 'the stream sent a chunk that is not a JSON object'],
    ['openai', 'data: {"choices": "many"}\n\n', 'the stream sent a chunk whose choices are not a list'],
    ['openai', 'data: {"choices": [{"index": 0, "delta": "hi"}]}\n\n', 'the stream sent a chunk whose delta is not an object'],
    ['openai', 'data: {"choices": [{"index": 0, "delta": {"tool_calls": {"index": 0}}}]}\n\n', 'the stream sent tool calls that are not a list'],
    [
      'anthropic',
      'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "te\n\n',
      'the stream sent a chunk that is not JSON',
    ],
    [
      'anthropic',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"x"}}\n\n',
      'the stream sent a delta of block 7, which never started',
    ],
    [
      'anthropic',
      'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}\n\n',
      'the stream sent a delta without an index or a delta',
    ],
    [
      'anthropic',
      'event: content_block_start\ndata: {"type":"content_block_start","index":-1,"content_block":{"type":"text","text":""}}\n\n',
      'the stream sent a content block without an index or a block',
    ],
    ['anthropic', 'data: null\n\n', 'the stream sent a chunk that is not a JSON object'],
    ['workers-ai', 'data: {"response": "hi\n\n', 'the stream sent a chunk that is not JSON'],
    ['workers-ai', 'data: 42\n\n', 'the stream sent a chunk that is not a JSON object'],
  ];
  it.each(MALFORMED)('%s: %j fails the round at once, naming the provider, without retrying', async (wire, chunk, failure) => {
    const { outcome, requests, served } = await attack(
      wire,
      { pieces: [OPENING[wire], textEvent[wire]('Hi'), chunk], after: 'open' },
      fastRounds({ retries: 3 }),
    );
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.message.startsWith(`${wire}: ${failure} (${status(wire)}): `)).toBe(true);
    expect(requests).toBe(1);
    expect(served.closedByClient).toBe(true);
  });

  it('a message quotes at most 200 characters of the chunk, with the API key blanked out', async () => {
    server = await streamServer(() => ({ pieces: [`data: {"key": "sk-secret-1", "pad": "${'z'.repeat(500)}\n\n`] }));
    const { outcome } = await streamedRound(providerFor('openai', server.url, fastRounds({ retries: 0 })));
    expect(!outcome.ok && outcome.message).toMatch(/^openai: the stream sent a chunk that is not JSON \(HTTP 200\): \{"key": "sk-secret-1"/);
    expect(!outcome.ok && outcome.message.length).toBeLessThan(300);
  });
});

describe('a provider stream whose tool-call arguments never close', () => {
  const UNCLOSED: [Wire, string][] = [
    [
      'openai',
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"stats_count","arguments":"{\\"text\\": \\"héllo"}}]}}]}\n\n' +
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n',
    ],
    [
      'anthropic',
      'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"stats_count","input":{}}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"text\\": \\"héllo"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n' +
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ],
    [
      'workers-ai',
      'data: {"response":"","tool_calls":[{"index":0,"id":"c1","function":{"name":"stats_count","arguments":"{\\"text\\": \\"héllo"}}]}\n\ndata: [DONE]\n\n',
    ],
  ];
  it.each(UNCLOSED)('%s: arguments still open when the stream ends fail the round, naming the call', async (wire, rest) => {
    const { outcome } = await attack(wire, { pieces: [OPENING[wire], rest] });
    expect(outcome).toEqual({
      ok: false,
      message: `${wire}: the arguments of tool call "stats_count" are not JSON at the end of the stream (${status(wire)}): {"text": "héllo`,
    });
  });

  it.each(UNCLOSED)('%s: arguments still open when the stream stops sending fail at the idle limit', async (wire, rest) => {
    const open = rest.slice(0, rest.indexOf('\n\n') + 2);
    const { outcome } = await attack(wire, { pieces: [OPENING[wire], open], after: 'open' }, fastRounds({ retries: 0, idleMs: 150 }));
    expect(outcome).toEqual({ ok: false, message: `${wire}: the stream sent nothing for 150 ms (${status(wire)})` });
  });
});

describe('a provider stream that reports an error mid-stream', () => {
  const ERRORS: [Wire, string, string][] = [
    [
      'anthropic',
      'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n',
      '{"type":"overloaded_error","message":"Overloaded"}',
    ],
    ['anthropic', 'data: {"type": "error", "error": {"type": "api_error", "message": "Internal"}}\n\n', '{"type":"api_error","message":"Internal"}'],
    [
      'openai',
      'data: {"error": {"message": "The server had an error", "type": "server_error"}}\n\n',
      '{"message":"The server had an error","type":"server_error"}',
    ],
    ['workers-ai', 'data: {"errors": [{"message": "AiError: capacity", "code": 3040}]}\n\n', '{"errors": [{"message": "AiError: capacity", "code": 3040}]}'],
  ];
  it.each(ERRORS)('%s: the round fails with the error it reported', async (wire, chunk, detail) => {
    const { outcome, deltas } = await attack(wire, { pieces: [OPENING[wire], textEvent[wire]('Par'), chunk], after: 'open' });
    expect(outcome).toEqual({ ok: false, message: `${wire}: the stream reported an error (${status(wire)}): ${detail}` });
    expect(deltas).toEqual([{ text: 'Par' }]);
  });

  it('an anthropic error answered before the stream (HTTP 529) is retried as the whole round is', async () => {
    server = await streamServer((_body, index) =>
      index === 0
        ? { status: 529, contentType: 'application/json', pieces: ['{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'] }
        : { pieces: [recorded('anthropic-text.sse')] },
    );
    const { outcome } = await streamedRound(providerFor('anthropic', server.url));
    expect(outcome).toMatchObject({ ok: true, reply: { content: 'Hello, wörld — ☃ "quoted"\nand 🎉 done.' } });
    expect(server.requests).toHaveLength(2);
  });
});
