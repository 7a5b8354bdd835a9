import { afterEach, describe, expect, it, vi } from 'vitest';
import { abortableSleep, defaultBackoffMs, excerpt, postJson, type JsonPost } from '../../src/models/http-round.ts';
import { fastRounds, modelServer, type Answer, type ModelServer } from './helpers.ts';

let server: ModelServer;
afterEach(() => server?.close());

const post = (url: string, extra: Partial<JsonPost> = {}): JsonPost => ({
  provider: 'acme',
  model: 'm1',
  url,
  headers: { 'content-type': 'application/json' },
  body: { hello: 'world' },
  secrets: ['s3cret'],
  ...extra,
});

async function send(answers: Answer[], rounds = fastRounds(), signal?: AbortSignal) {
  server = await modelServer(answers);
  return postJson(post(`${server.url}/x`), rounds, signal);
}

describe('a round over HTTP', () => {
  it('posts the body as JSON and reads a JSON answer', async () => {
    expect(await send([{ json: { a: 1 } }])).toEqual({ ok: true, status: 200, json: { a: 1 }, text: '{"a":1}' });
    expect(server.requests.map((r) => [r.method, r.path, r.body])).toEqual([['POST', '/x', '{"hello":"world"}']]);
  });

  it('does not retry a 4xx other than 429', async () => {
    const outcome = await send([{ status: 400, json: { error: 'bad' } }, { json: {} }]);
    expect(outcome).toEqual({ ok: false, message: 'acme: the provider refused the request (HTTP 400): {"error":"bad"}' });
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 5xx with the backoff delays, then names the status and the attempts', async () => {
    const rounds = fastRounds({ backoffMs: (retry) => retry * 100 });
    const failing: Answer = { status: 503, body: 'down' };
    const outcome = await send([failing, failing, failing, failing], rounds);
    expect(outcome).toEqual({ ok: false, message: 'acme: the provider failed (HTTP 503, after 4 attempts): down' });
    expect(rounds.waits).toEqual([100, 200, 300]);
  });

  it('tries as many times as it is told', async () => {
    const outcome = await send(
      [
        { status: 500, body: 'x' },
        { status: 500, body: 'y' },
      ],
      fastRounds({ retries: 1 }),
    );
    expect(outcome).toEqual({ ok: false, message: 'acme: the provider failed (HTTP 500, after 2 attempts): y' });
  });

  it('honours retry-after-ms and caps a long retry-after', async () => {
    const rounds = fastRounds({ maxRetryAfterMs: 5_000 });
    const outcome = await send(
      [{ status: 429, headers: { 'retry-after-ms': '1500' } }, { status: 429, headers: { 'retry-after': '600' } }, { json: { ok: true } }],
      rounds,
    );
    expect(outcome).toMatchObject({ ok: true, json: { ok: true } });
    expect(rounds.waits).toEqual([1500, 5000]);
  });

  it('stops an attempt at its time limit and tries again', async () => {
    // A limit long enough for each request to reach the server on a busy machine, so that both arrive.
    const outcome = await send([{ hang: true }, { hang: true }], fastRounds({ timeoutMs: 1_500, retries: 1 }));
    expect(outcome).toEqual({ ok: false, message: 'acme: no answer within 1500 ms (no HTTP status, after 2 attempts)' });
    expect(server.requests).toHaveLength(2);
  });

  it('names an address nothing answers at', async () => {
    server = await modelServer([]);
    const url = `${server.url}/x`;
    await server.close();
    const outcome = await postJson(post(url), fastRounds({ retries: 0 }));
    expect(outcome).toMatchObject({
      ok: false,
      message: expect.stringMatching(new RegExp(`^acme: could not reach ${url.replace(/[.]/g, '\\.')} \\(no HTTP status\\): fetch failed`)),
    });
  });

  it('ends at once, without retrying, when the run is cancelled', async () => {
    // Cancelled once the request has reached the server, however long starting it took.
    const controller = new AbortController();
    server = await modelServer([{ hang: true }, { json: {} }]);
    const sent = postJson(post(`${server.url}/x`), fastRounds(), controller.signal);
    await vi.waitFor(() => expect(server.requests).toHaveLength(1), { timeout: 30_000 });
    controller.abort();
    const outcome = await sent;
    expect(outcome).toEqual({ ok: false, message: 'acme: the round was cancelled' });
    expect(server.requests).toHaveLength(1);
  });

  it('says so when the body is empty', async () => {
    expect(await send([{ body: '' }])).toEqual({ ok: false, message: 'acme: the reply is not JSON (HTTP 200): (empty body)' });
  });

  it('names the hint of a refused key', async () => {
    server = await modelServer([{ status: 403, body: 'forbidden' }]);
    const outcome = await postJson(post(`${server.url}/x`, { authHint: 'the key only goes to the Host' }), fastRounds());
    expect(outcome).toEqual({ ok: false, message: 'acme: the API key was refused (the key only goes to the Host) (HTTP 403): forbidden' });
  });
});

describe('an excerpt of a body', () => {
  it('is one line of at most 200 characters', () => {
    const text = excerpt(`start\n\n${'x'.repeat(500)}`, []);
    expect(text).toHaveLength(200);
    expect(text).toMatch(/^start x+\.\.\.$/);
  });

  it('never shows a secret', () => {
    expect(excerpt('key s3cret and s3cret again', ['s3cret'])).toBe('key [redacted] and [redacted] again');
  });
});

describe('the waits between attempts', () => {
  it('double from half a second, with a fifth of jitter, up to eight seconds', () => {
    for (const [retry, base] of [
      [1, 500],
      [2, 1000],
      [3, 2000],
      [10, 8000],
    ] as const) {
      const wait = defaultBackoffMs(retry);
      expect(wait).toBeGreaterThanOrEqual(base * 0.8);
      expect(wait).toBeLessThanOrEqual(base * 1.2);
    }
  });

  it('end early when the round is cancelled', async () => {
    // A sleep of an hour: only the abort can end it within the test's timeout.
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    await abortableSleep(3_600_000, controller.signal);
  });
});
