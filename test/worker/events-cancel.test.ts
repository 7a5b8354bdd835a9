/**
 * A run's events as server-sent events (history, then live), cancelling a run, the alarm
 * that ends a run past its time limit, and reading a run's files.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/worker/run-object/run-view.ts';
import { call, getRun, json, kvRecord, settled, testEnv } from './app/client.ts';
import { DESK, WAITER } from './app/prompts.ts';
import { dropObjects, openVms } from './app/test-worker.ts';

beforeAll(async () => {
  await call('PUT', '/prompts/desk', { body: DESK });
  await call('PUT', '/prompts/waiter', { body: WAITER });
});

const stubOf = (runId: string) => testEnv.RUNS.get(testEnv.RUNS.idFromString(runId)) as unknown as object;
const startRun = async (prompt: string) =>
  (await json<{ run_id: string }>(await call('POST', `/prompts/${prompt}/runs`, { body: { seed: 'sse' } }), 202)).run_id;

/** Reads server-sent events from a response until `stop` says so or the stream ends. */
async function readEvents(
  response: Response,
  stop: (event: StreamEvent) => boolean = () => false,
): Promise<{ events: StreamEvent[]; ids: string[]; ended: boolean }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: StreamEvent[] = [];
  const ids: string[] = [];
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { events, ids, ended: true };
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (id === undefined || data === undefined) continue;
      ids.push(id);
      const event = JSON.parse(data) as StreamEvent;
      events.push(event);
      if (stop(event)) {
        await reader.cancel();
        return { events, ids, ended: false };
      }
    }
  }
}

describe('GET /runs/:id/events', () => {
  it('sends the events so far, then live ones as the run goes on, and ends with the run', async () => {
    const runId = await startRun('desk');
    const waiting = await settled(runId);
    const response = await call('GET', `/runs/${runId}/events`);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reading = readEvents(response);
    await json(await call('POST', `/runs/${runId}/asks/0-3`, { body: { answer: 'Ada' }, token: waiting.pending[0]!.token }), 200);
    const second = await settled(runId);
    await json(await call('POST', `/runs/${runId}/asks/0-5`, { body: { answer: 'Friday' }, token: second.pending[0]!.token }), 200);
    const { events, ids, ended } = await reading;
    expect(ended).toBe(true);
    const record = (await kvRecord(runId)) as { events: StreamEvent[] };
    expect(events).toEqual(record.events);
    expect(ids).toEqual(events.map((e) => String(e.seq)));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // Each event carries when the run object took it, in the stream's order.
    const times = events.map((e) => Date.parse(String(e.at)));
    expect(events.every((e) => typeof e.at === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(e.at))).toBe(true);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(['run_started', 'section_entered']);
    expect(types.filter((t) => ['ask_pending', 'run_suspended', 'run_resumed'].includes(t))).toEqual([
      'ask_pending',
      'run_suspended',
      'run_resumed',
      'ask_pending',
      'run_suspended',
      'run_resumed',
    ]);
    expect(types.at(-1)).toBe('run_completed');
    expect(events.find((e) => e.type === 'ask_pending')).toMatchObject({ ask_id: '0-3', question: 'Who owns the launch?' });

    const resumed = await readEvents(await call('GET', `/runs/${runId}/events`, { headers: { 'last-event-id': String(events.length - 2) } }));
    expect(resumed.events).toEqual(events.slice(-2));
    expect((await call('GET', `/runs/${runId}/events?after=${events.length}`)).status).toBe(204);
  });

  it('answers 404 for an unknown run, and 401 without the API token', async () => {
    expect((await call('GET', `/runs/${'a'.repeat(64)}/events`)).status).toBe(404);
    expect((await call('GET', `/runs/${'a'.repeat(64)}/events`, { token: null })).status).toBe(401);
  });
});

describe('POST /runs/:id/cancel', () => {
  it('ends a waiting run as cancelled with the reason, closing its ask', async () => {
    const runId = await startRun('waiter');
    const waiting = await settled(runId);
    const view = await json(await call('POST', `/runs/${runId}/cancel`, { body: { reason: 'no longer needed' } }), 200);
    expect(view).toMatchObject({
      status: 'cancelled',
      pending: [],
      result: null,
      error: { kind: 'Cancelled', message: 'the run was cancelled: no longer needed' },
    });
    expect((await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'late' }, token: waiting.pending[0]!.token })).status).toBe(409);
    const again = await call('POST', `/runs/${runId}/cancel`);
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: { message: 'the run has already ended (cancelled); there is nothing to cancel' } });
    const { events } = await readEvents(await call('GET', `/runs/${runId}/events`));
    expect(events.at(-1)).toMatchObject({ type: 'run_failed', error: { kind: 'Cancelled', message: 'the run was cancelled: no longer needed' } });
  });

  it('ends a run whose object was evicted the same way, without replaying it', async () => {
    const runId = await startRun('waiter');
    await settled(runId);
    await dropObjects();
    const view = await json(await call('POST', `/runs/${runId}/cancel`), 200);
    expect(view).toMatchObject({ status: 'cancelled', error: { kind: 'Cancelled', message: 'the run was cancelled: cancelled through the API' } });
    expect(await kvRecord(runId)).toMatchObject({ status: 'cancelled' });
    // The VM the dropped object left waiting is closed, though the run never ran again.
    expect(await openVms()).toBe(0);
  });

  it('answers 404 for an unknown run', async () => {
    expect((await call('POST', `/runs/${'b'.repeat(64)}/cancel`)).status).toBe(404);
  });
});

/**
 * The run's alarm once its outbox has delivered what the ask owed (the index rows): set to
 * the run's deadline. (While the alarm runs, the object has none set.)
 */
async function alarmAtDeadline(runId: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [alarm, deadline] = await runInDurableObject(
      stubOf(runId),
      async (_instance: unknown, state: { storage: { kv: { get(k: string): any }; getAlarm(): Promise<number | null> } }) => [
        await state.storage.getAlarm(),
        state.storage.kv.get('meta').deadline_at,
      ],
    );
    if (alarm === deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the alarm of run ${runId} is never set to its deadline`);
}

describe('the run alarm', () => {
  it('ends a run past its time limit as Cancelled, saying why', async () => {
    const runId = await startRun('waiter');
    await settled(runId);
    await alarmAtDeadline(runId);
    await runInDurableObject(
      stubOf(runId),
      (_instance: unknown, state: { storage: { kv: { get(k: string): any; put(k: string, v: unknown): void }; getAlarm(): Promise<number | null> } }) => {
        const meta = state.storage.kv.get('meta');
        state.storage.kv.put('meta', { ...meta, deadline_at: Date.now() - 1 });
      },
    );
    await dropObjects();
    expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
    const view = await getRun(runId);
    expect(view).toMatchObject({
      status: 'cancelled',
      pending: [],
      error: { kind: 'Cancelled', message: 'the run was cancelled: the run took longer than its limit of 3600 s (RUNVIL_RUN_TIMEOUT_SECONDS)' },
    });
  });

  it('is set to the deadline while the run waits on an ask', async () => {
    const runId = await startRun('waiter');
    await settled(runId);
    await alarmAtDeadline(runId);
    await call('POST', `/runs/${runId}/cancel`);
  });
});

describe('GET /runs/:id/files/*', () => {
  it("reads a run's file, lists its files, and answers 404 for a missing file or run", async () => {
    const runId = await startRun('desk');
    await settled(runId);
    expect(await (await call('GET', `/runs/${runId}/files/log.txt`)).text()).toBe('start\n');
    expect(await json(await call('GET', `/runs/${runId}/files/`), 200)).toEqual({ files: ['log.txt'] });
    expect((await call('GET', `/runs/${runId}/files/nope.txt`)).status).toBe(404);
    expect((await call('GET', `/runs/${'c'.repeat(64)}/files/log.txt`)).status).toBe(404);
    await call('POST', `/runs/${runId}/cancel`);
  });
});
