/**
 * Notifications in workerd: each notify target whose events and prompts match gets the
 * run's events, signed as Standard Webhooks says (checked here with the `standardwebhooks`
 * package), `webhook-id` `<run_id>.<seq>` the same on every redelivery, in order per run and
 * target; a failed delivery is retried on the schedule (scaled down for tests by
 * RUNVIL_NOTIFY_RETRY_SCALE) and given up after the last retry, without blocking the run or
 * the target's later events; `GET /runs/:id/notifications` says how each went.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { NOTIFICATION_TYPES, type NotifyTarget } from '../../src/config/deployment-config.ts';
import { NOTIFY_RETRY_MS } from '../../src/worker/outbox/outbox.ts';
import { call, json, settled } from './app/client.ts';
import { notifications } from './app/test-worker.ts';
import { performedBy } from './app/test-host.ts';

vi.setConfig({ testTimeout: 60_000 });

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const lua = (code: string) => '```lua\n' + code + '\n```\n';

/** Asks twice (the second with choices), then ends with both answers. */
const NOTE = `---
name: note
description: Asks twice.
runvil: 0
uses: [user-input]
---
# Note

## Ask
${lua("local who = tools.call('user-input/ask', { question = 'Who?' })\nlocal go = tools.call('user-input/ask', { question = 'Go?', choices = { 'go', 'stop' } })\nreturn who .. ' ' .. go")}`;

const target = (url: string, secret: string, options: { events?: string[]; prompts?: string[] } = {}): NotifyTarget => ({
  url,
  secret,
  events: new Set((options.events ?? NOTIFICATION_TYPES) as (typeof NOTIFICATION_TYPES)[number][]),
  prompts: options.prompts ? new Set(options.prompts) : null,
});

interface Received {
  id: string;
  type: string;
  timestamp: string;
  data: any;
}

/** The deliveries to `url`, each verified with the target's secret (a bad signature fails the test). */
function received(url: string, secret: string): Received[] {
  return notifications.sent
    .filter((sent) => sent.url === url)
    .map((sent) => {
      const body = new Webhook(secret).verify(sent.body, sent.headers) as { type: string; timestamp: string; data: unknown };
      expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);
      return { id: sent.headers['webhook-id']!, ...body } as Received;
    });
}

/** Polls until `check` passes. */
async function eventually(check: () => void | Promise<void>, tries = 2000): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (error) {
      if (i > tries) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

const start = async (): Promise<string> => {
  const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/note/runs', { body: {} }), 202);
  await settled(run_id);
  return run_id;
};

/** Answers the run's asks with their own tokens, to its end. */
async function finish(runId: string, answers: string[], by = 'ada'): Promise<void> {
  for (const answer of answers) {
    const view = await settled(runId);
    const ask = view.pending[0]!;
    await json(await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer, answered_by: by }, token: ask.token }), 200);
  }
  await eventually(async () => expect((await settled(runId)).status).toBe('completed'));
}

const deliveries = async (runId: string) => (await json<{ notifications: any[] }>(await call('GET', `/runs/${runId}/notifications`), 200)).notifications;

beforeAll(async () => {
  await json(await call('PUT', '/prompts/note', { body: NOTE }), 201);
});

afterEach(() => {
  notifications.targets = [];
  notifications.respond = () => 204;
});

describe('a run with a notify target', () => {
  it("sends ask.created, ask.closed and run.completed, signed, in order, with the pending ask's token and answer URL", async () => {
    const url = 'https://chat.test/a';
    notifications.targets = [target(url, SECRET)];
    const runId = await start();
    await eventually(() => expect(received(url, SECRET).length).toBe(1));
    const [created] = received(url, SECRET);
    const view = await settled(runId);
    expect(created).toEqual({ id: `${runId}.1`, type: 'ask.created', timestamp: expect.stringMatching(/^\d{4}-/), data: view.pending[0] });
    expect(created!.data.token).toMatch(/^[0-9a-f]{64}$/);
    expect(created!.data.answer_url).toBe(`https://runvil.test/runs/${runId}/asks/0-1`);
    // The ask was in GET /asks before it was announced.
    const listed = await json<{ asks: { run_id: string }[] }>(await call('GET', '/asks?status=pending&prompt=note'), 200);
    expect(listed.asks.map((ask) => ask.run_id)).toContain(runId);
    await finish(runId, ['Ada', 'go']);
    await eventually(() => expect(received(url, SECRET).length).toBe(5));
    const events = received(url, SECRET);
    expect(events.map((event) => [event.id, event.type])).toEqual([
      [`${runId}.1`, 'ask.created'],
      [`${runId}.2`, 'ask.closed'],
      [`${runId}.3`, 'ask.created'],
      [`${runId}.4`, 'ask.closed'],
      [`${runId}.5`, 'run.completed'],
    ]);
    expect(events[1]!.data).toEqual({ run_id: runId, ask_id: '0-1', reason: 'answered', answered_by: 'ada' });
    expect(events[2]!.data).toMatchObject({ ask_id: '0-2', question: 'Go?', choices: ['go', 'stop'] });
    expect(events[4]!.data).toEqual({ run_id: runId, prompt: 'note', status: 'completed', result: 'Ada go', error: null });
    expect(await deliveries(runId)).toEqual(
      events.map((event) => ({ webhook_id: event.id, event: event.type, url, state: 'delivered', attempts: 1, last_status: 204 })),
    );
  });

  it('sends only the events and prompts a target takes, each target under its own secret', async () => {
    const all = 'https://chat.test/all';
    const asksOnly = 'https://chat.test/asks-only';
    const elsewhere = 'https://chat.test/other-prompt';
    notifications.targets = [
      target(all, SECRET),
      target(asksOnly, OTHER_SECRET, { events: ['ask.created'] }),
      target(elsewhere, SECRET, { prompts: ['intake'] }),
    ];
    const runId = await start();
    await finish(runId, ['Bo', 'stop']);
    await eventually(() => expect(received(all, SECRET).filter((event) => event.data.run_id === runId).length).toBe(5));
    expect(
      received(asksOnly, OTHER_SECRET)
        .filter((event) => event.data.run_id === runId)
        .map((event) => event.type),
    ).toEqual(['ask.created', 'ask.created']);
    // One event has one webhook-id, whichever target it goes to.
    expect(received(asksOnly, OTHER_SECRET).map((event) => event.id)).toEqual(
      received(all, SECRET)
        .filter((event) => event.type === 'ask.created')
        .map((event) => event.id),
    );
    expect(notifications.sent.filter((sent) => sent.url === elsewhere)).toEqual([]);
    // A signature under another secret does not verify.
    expect(() => received(asksOnly, SECRET)).toThrow();
  });
});

describe('a receiver that fails', () => {
  it('gets every event once it answers, in order, each redelivery under the same webhook-id and body', async () => {
    const url = 'https://chat.test/flaky';
    notifications.targets = [target(url, SECRET)];
    let calls = 0;
    // The first three attempts fail (a 500, a network error, a 503); then it answers.
    const failures = [500, null, 503];
    notifications.respond = () => (calls < failures.length ? failures[calls++]! : 200);
    const runId = await start();
    await finish(runId, ['Cy', 'go']);
    await eventually(() => expect(new Set(received(url, SECRET).map((event) => event.id)).size).toBe(5));
    const events = received(url, SECRET);
    expect(events.slice(0, 4).map((event) => event.id)).toEqual([`${runId}.1`, `${runId}.1`, `${runId}.1`, `${runId}.1`]);
    expect(
      new Set(
        notifications.sent
          .filter((sent) => sent.url === url)
          .slice(0, 4)
          .map((sent) => sent.body),
      ).size,
    ).toBe(1);
    expect(events.slice(3).map((event) => event.type)).toEqual(['ask.created', 'ask.closed', 'ask.created', 'ask.closed', 'run.completed']);
    const listed = await deliveries(runId);
    expect(listed[0]).toEqual({ webhook_id: `${runId}.1`, event: 'ask.created', url, state: 'delivered', attempts: 4, last_status: 200 });
    expect(listed.slice(1).every((delivery) => delivery.state === 'delivered' && delivery.attempts === 1)).toBe(true);
  });

  it("is given up after the last retry of the schedule; the run and the target's later events go on", async () => {
    const url = 'https://chat.test/down';
    notifications.targets = [target(url, SECRET)];
    // The run's first event (`<run_id>.1`) fails at every attempt; the rest are delivered.
    notifications.respond = (sent) => (sent.headers['webhook-id']!.endsWith('.1') ? 502 : 204);
    const runId = await start();
    await finish(runId, ['Di', 'go']);
    await eventually(async () =>
      expect((await deliveries(runId)).map((delivery) => delivery.state)).toEqual(['failed', 'delivered', 'delivered', 'delivered', 'delivered']),
    );
    const listed = await deliveries(runId);
    expect(listed[0]).toEqual({ webhook_id: `${runId}.1`, event: 'ask.created', url, state: 'failed', attempts: NOTIFY_RETRY_MS.length + 1, last_status: 502 });
    expect(received(url, SECRET).filter((event) => event.id === `${runId}.1`).length).toBe(NOTIFY_RETRY_MS.length + 1);
  });
});

/** Asks, then works for a while (a tool that takes two seconds), then ticks once more and ends. */
const BUSY = `---
name: busy-note
description: Asks, then works a while.
runvil: 0
uses: [user-input, acme/counter]
---
# Busy note

## Work
${lua("local who = tools.call('user-input/ask', { question = 'Who?' })\ntools.call('counter/tick', { label = 'slow', wait_ms = 2000 })\ntools.call('counter/tick', { label = 'after' })\nreturn who")}`;

describe('notifications beside the run', () => {
  it("sends an answered ask's ask.closed while the run it resumed is still at work, not once it settles", async () => {
    await json(await call('PUT', '/prompts/busy-note', { body: BUSY }), 201);
    const url = 'https://chat.test/busy';
    notifications.targets = [target(url, SECRET)];
    // What the run had done when each notification left.
    const doneWhenSent = new Map<string, string[]>();
    notifications.respond = (sent) => {
      const event = JSON.parse(sent.body) as { type: string; data: { run_id: string } };
      doneWhenSent.set(event.type, performedBy(event.data.run_id));
      return 204;
    };
    const { run_id: runId } = await json<{ run_id: string }>(await call('POST', '/prompts/busy-note/runs', { body: {} }), 202);
    const ask = (await settled(runId)).pending[0]!;
    await json(await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: 'Ada' } }), 200);
    await eventually(async () => expect((await settled(runId)).status).toBe('completed'));
    await eventually(() => expect(received(url, SECRET).map((event) => event.type)).toEqual(['ask.created', 'ask.closed', 'run.completed']));
    // The answer resumed the run into its slow tool; ask.closed left during it, not after.
    expect(doneWhenSent.get('ask.closed')).toEqual(['user-input/ask Who?', 'counter/tick slow']);
    expect(doneWhenSent.get('run.completed')).toEqual(['user-input/ask Who?', 'counter/tick slow', 'counter/tick after']);
  });

  it('lets the run resume and end while a receiver keeps every delivery waiting, then sends the rest in order', async () => {
    const url = 'https://chat.test/slow';
    notifications.targets = [target(url, SECRET)];
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    notifications.respond = async () => {
      await gate;
      return 204;
    };
    const runId = await start();
    // The first delivery (ask.created) is held by the receiver; the run goes on all the same.
    await finish(runId, ['Ed', 'go']);
    expect(received(url, SECRET).map((event) => event.type)).toEqual(['ask.created']);
    release();
    await eventually(() =>
      expect(received(url, SECRET).map((event) => event.type)).toEqual(['ask.created', 'ask.closed', 'ask.created', 'ask.closed', 'run.completed']),
    );
    await eventually(async () => expect((await deliveries(runId)).every((delivery) => delivery.state === 'delivered' && delivery.attempts === 1)).toBe(true));
  });
});

describe('GET /runs/:id/notifications', () => {
  it('is 404 for an unknown run and 401 without the API token', async () => {
    expect((await call('GET', `/runs/${'f'.repeat(64)}/notifications`)).status).toBe(404);
    expect((await call('GET', `/runs/${'f'.repeat(64)}/notifications`, { token: null })).status).toBe(401);
  });
});
