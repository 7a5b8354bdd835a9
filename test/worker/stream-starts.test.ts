/**
 * `?stream=1` on the routes that start runs (`POST /prompts/:name/runs`, `POST /hooks/:name`):
 * the response is the run's event stream from its start to its end, model text as it
 * arrives included; a run that suspends ends the response with its pending asks.
 */
import { Webhook } from 'standardwebhooks';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, getRun, json, settled } from './app/client.ts';
import { GREET } from './app/prompts.ts';
import { end, nextTurn, resetStreamModel, send, streamModel } from './app/stream-model.ts';
import { readSse, STREAMER, type SseMessage } from './stream-support.ts';

/** RUNVIL_WEBHOOK_SECRET_GREET in vitest.workers.config.ts. */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

beforeAll(async () => {
  await call('PUT', '/prompts/streamer', { body: STREAMER });
  await call('PUT', '/prompts/greet', { body: GREET });
});

beforeEach(() => resetStreamModel());

const types = (messages: SseMessage[]) => messages.map((message) => message.data.type);
const storedSeqs = (messages: SseMessage[]) => messages.filter((message) => message.id !== undefined).map((message) => Number(message.id));

describe('POST /prompts/:name/runs?stream=1', () => {
  it("answers with the run's events from its start to its end, each step's text as it arrives among them", async () => {
    streamModel.gated = true;
    const response = await call('POST', '/prompts/streamer/runs?stream=1', { body: { args: { topic: 'rivers' } } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const runId = response.headers.get('location')!.replace('/runs/', '');
    const reader = readSse(response);
    const turn = await nextTurn();
    await send(turn, 'Rivers ');
    // The piece arrives while the run is still running: the response is not held to the end.
    expect((await reader.next((m) => m.data.type === 'model_delta')).data.text).toBe('Rivers ');
    expect((await getRun(runId)).status).toBe('running');
    await send(turn, 'run.');
    end(turn);
    const messages = [...reader.before, ...(await reader.rest())];
    expect(types(messages)[0]).toBe('run_started');
    expect(types(messages).at(-1)).toBe('run_completed');
    expect(storedSeqs(messages)).toEqual(storedSeqs(messages).map((_, i) => i + 1));
    const deltas = messages.filter((m) => m.data.type === 'model_delta');
    expect(deltas.map((m) => m.data.text).join('')).toBe('run.');
    expect((await getRun(runId)).result).toBe('Rivers run.');
  });

  it('ends the response of a run that suspends with its pending asks, which the caller can answer', async () => {
    const response = await call('POST', '/prompts/streamer/runs?stream=1', { body: { args: { topic: 'lakes', ask: true } } });
    const messages = await readSse(response).rest();
    expect(types(messages).slice(-2)).toEqual(['run_suspended', 'run_pending']);
    const pending = messages.at(-1)!.data as unknown as {
      run_id: string;
      status: string;
      pending: { kind: string; ask_id: string; token: string; question: string }[];
    };
    expect(pending.status).toBe('suspended');
    expect(pending.pending).toHaveLength(1);
    expect(pending.pending[0]).toMatchObject({ kind: 'ask', question: 'Keep it?' });
    const ask = pending.pending[0]!;
    await json(await call('POST', `/runs/${pending.run_id}/asks/${ask.ask_id}`, { body: { answer: 'yes' }, token: ask.token }), 200);
    expect(await settled(pending.run_id)).toMatchObject({ status: 'completed', result: 'echo: Write about lakes / yes' });
  });

  it("streams a Workers AI step's text, read from the binding's stream", async () => {
    await call('PUT', '/prompts/streamer-ai', {
      body: STREAMER.replace('name: streamer', 'name: streamer-ai').replace('provider: openai', 'provider: workers-ai'),
    });
    const response = await call('POST', '/prompts/streamer-ai/runs?stream=1', { body: { args: { topic: 'clouds' } } });
    const messages = await readSse(response).rest();
    const deltas = messages.filter((m) => m.data.type === 'model_delta');
    // A client's rule: a restart delta (a catch-up) replaces the step's text, any other adds to it.
    const text = deltas.reduce((so, m) => (m.data.restart ? (m.data.text as string) : so + (m.data.text as string)), '');
    expect(deltas.length).toBeGreaterThan(0);
    expect(text).toBe('echo: Write about clouds');
    expect(messages.find((m) => m.data.type === 'model_turn_completed')!.data.content).toBe(text);
  });

  it('streams the run an Idempotency-Key already started, from its start', async () => {
    const headers = { 'idempotency-key': 'stream-twice' };
    const first = await readSse(await call('POST', '/prompts/greet/runs?stream=1', { body: { args: {} }, headers })).rest();
    const again = await readSse(await call('POST', '/prompts/greet/runs?stream=1', { body: { args: {} }, headers })).rest();
    expect(types(again)).toEqual(types(first));
    expect(types(first).at(-1)).toBe('run_completed');
  });

  it('refuses a stream value that is neither 1 nor 0, and ?stream=1 with ?wait=, starting nothing', async () => {
    for (const query of ['stream=yes', 'stream=2', 'stream=', 'stream=1&wait=5']) {
      const response = await call('POST', `/prompts/greet/runs?${query}`, { body: { args: {} } });
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/stream|wait/);
    }
  });

  it('answers as before with ?stream=0', async () => {
    const started = await json<{ run_id: string; status: string }>(await call('POST', '/prompts/greet/runs?stream=0', { body: { args: {} } }), 202);
    expect(started.run_id).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('POST /hooks/:name?stream=1', () => {
  it("answers a signed delivery with the run's events from its start to its end", async () => {
    const body = JSON.stringify({ name: 'hook' });
    const at = new Date();
    const headers = {
      'webhook-id': 'msg_streamed',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(SECRET).sign('msg_streamed', at, body),
      'content-type': 'application/json',
    };
    const response = await call('POST', '/hooks/greet?stream=1', { body, headers, token: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const messages = await readSse(response).rest();
    expect(types(messages)[0]).toBe('run_started');
    expect(messages.at(-1)!.data).toMatchObject({ type: 'run_completed' });
    const runId = response.headers.get('location')!.replace('/runs/', '');
    expect((await getRun(runId)).result).toBe('hello hook x1');
  });

  it('refuses an unsigned delivery before streaming anything', async () => {
    const response = await call('POST', '/hooks/greet?stream=1', { body: '{}', headers: { 'content-type': 'application/json' }, token: null });
    expect(response.status).toBe(401);
  });
});
