/**
 * The outbox's fault matrix: a run with a notify target is killed right after each of its
 * outbox writes, and right before each of its deliveries (an index write, a notification,
 * a KV batch), and driven to its end by a client that retries what failed. Every time,
 * every notification arrives (each signed, each event under one webhook-id, a repeat only
 * ever a redelivery of the same webhook-id with the same body), the index rows end as the
 * run ended, and the run's record reaches KV.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NOTIFICATION_TYPES } from '../../src/config/deployment-config.ts';
import type { RunView } from '../../src/worker/run-object/run-view.ts';
import { call, kvRecord, testEnv } from './app/client.ts';
import { killOutbox, notifications, outboxKilled } from './app/test-worker.ts';

vi.setConfig({ testTimeout: 120_000 });

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const lua = (code: string) => '```lua\n' + code + '\n```\n';
const PROMPT = `---
name: fault-note
description: Asks twice.
runvil: 0
uses: [user-input]
---
# Fault note

## Ask
${lua("local who = tools.call('user-input/ask', { question = 'Who?' })\nlocal go = tools.call('user-input/ask', { question = 'Go?', choices = { 'go', 'stop' } })\nreturn who .. ' ' .. go")}`;

const ANSWERS = new Map([
  ['0-1', 'Ada'],
  ['0-2', 'go'],
]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A request sent again while it fails with 500 (the object it reached was killed). */
async function retried(method: string, path: string, options: Parameters<typeof call>[2] = {}): Promise<Response> {
  for (let i = 0; ; i++) {
    const response = await call(method, path, options);
    if (response.status !== 500 || i > 200) return response;
    await sleep(20);
  }
}

/** Starts the run (the same one on a retry: an Idempotency-Key) and answers its asks until it completes. */
async function drive(key: string): Promise<string> {
  const started = await retried('POST', '/prompts/fault-note/runs', { body: {}, headers: { 'idempotency-key': key } });
  expect([200, 202]).toContain(started.status);
  const runId = ((await started.json()) as { run_id: string }).run_id;
  for (let i = 0; i < 3000; i++) {
    const response = await retried('GET', `/runs/${runId}`);
    const view = (await response.json()) as RunView;
    if (view.status === 'completed') return runId;
    if (view.status === 'suspended') {
      const ask = view.pending[0]!;
      if (ask.kind !== 'ask') throw new Error(`run ${runId} waits on something other than an ask`);
      const answered = await retried('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: ANSWERS.get(ask.ask_id) } });
      expect([200, 409]).toContain(answered.status);
    }
    await sleep(10);
  }
  throw new Error(`run ${runId} never completed`);
}

/** Polls until `check` passes (or 30 s pass). */
async function eventually(check: () => void | Promise<void>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (error) {
      if (i > 3000) throw error;
      await sleep(10);
    }
  }
}

/** Checks what the receiver at `url` got for run `runId`: every event, once each but for redeliveries of the same webhook-id. */
function checkNotifications(url: string, runId: string): void {
  const byId = new Map<string, string[]>();
  const order: string[] = [];
  for (const sent of notifications.sent.filter((s) => s.url === url)) {
    new Webhook(SECRET).verify(sent.body, sent.headers);
    const id = sent.headers['webhook-id']!;
    if (!byId.has(id)) order.push(id);
    byId.set(id, [...(byId.get(id) ?? []), sent.body]);
  }
  expect(order).toEqual([1, 2, 3, 4, 5].map((n) => `${runId}.${n}`));
  expect(order.map((id) => JSON.parse(byId.get(id)![0]!).type)).toEqual(['ask.created', 'ask.closed', 'ask.created', 'ask.closed', 'run.completed']);
  // A repeat is a redelivery: the same body under the same webhook-id.
  for (const bodies of byId.values()) expect(new Set(bodies).size).toBe(1);
}

/** Checks that the index holds the run as it ended. */
async function checkIndex(runId: string): Promise<void> {
  const run = await testEnv.RUNVIL_DB.prepare('SELECT status, pending_count FROM runs WHERE run_id = ?1').bind(runId).all();
  expect(run.results).toEqual([{ status: 'completed', pending_count: 0 }]);
  const asks = await testEnv.RUNVIL_DB.prepare('SELECT ask_id, status FROM asks WHERE run_id = ?1 ORDER BY ask_id').bind(runId).all();
  expect(asks.results).toEqual([
    { ask_id: '0-1', status: 'answered' },
    { ask_id: '0-2', status: 'answered' },
  ]);
}

beforeAll(async () => {
  await call('PUT', '/prompts/fault-note', { body: PROMPT });
});

afterAll(() => {
  notifications.targets = [];
});

for (const at of ['write', 'delivery'] as const) {
  describe(`a run killed at each outbox ${at}`, () => {
    it('loses no notification, leaves no index row stale, repeats only as redeliveries, and reaches KV', async () => {
      let killed = 0;
      for (let n = 1; n <= 40; n++) {
        const url = `https://chat.test/fault-${at}-${n}`;
        notifications.targets = [{ url, secret: SECRET, events: new Set(NOTIFICATION_TYPES), prompts: null }];
        killOutbox(at, n);
        const runId = await drive(`fault-${at}-${n}`);
        await eventually(async () => {
          checkNotifications(url, runId);
          await checkIndex(runId);
          expect(await kvRecord(runId)).toMatchObject({ status: 'completed', result: 'Ada go' });
        });
        if (!outboxKilled()) break;
        killed++;
      }
      // Every write (or delivery) of a run was a point of failure once.
      expect(killed).toBeGreaterThanOrEqual(8);
    });
  });
}
