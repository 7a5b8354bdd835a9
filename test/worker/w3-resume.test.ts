/**
 * Workload W3 of ../shared/bench-peers/ inside workerd, without the HTTP of the local
 * server: N grab steps by a scripted model, then an ask, answered "blue"; the run resumes
 * from the live VM, or by replay after an eviction. Both paths give the same result and
 * events. (bench/worker.ts times these resumes, inside the Worker and over HTTP, for N up to
 * 1,000: `npm run bench:worker`, BENCH_PARTS=w3. A replay of 1,000 steps is a figure there,
 * not a test here: the replay of 100 takes the same paths.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from './app/client.ts';
import { call, json, kvRecord } from './app/client.ts';
import { W3 } from '../../bench/workloads.ts';
import { dropObjects } from './app/test-worker.ts';

beforeAll(async () => {
  await json(await call('PUT', '/prompts/w3', { body: W3 }), 201);
});

async function resume(n: number, evict: boolean): Promise<{ view: RunView; runId: string }> {
  const waiting = await json<RunView>(await call('POST', '/prompts/w3/runs?wait=60', { body: { args: { n }, seed: 'w3' } }), 200);
  expect(waiting.status).toBe('suspended');
  if (evict) await dropObjects();
  const view = await json<RunView>(await call('POST', `/runs/${waiting.run_id}/asks/${waiting.pending[0]!.ask_id}?wait=60`, { body: { answer: 'blue' } }), 200);
  return { view, runId: waiting.run_id };
}

describe('W3: resume after N steps', () => {
  for (const n of [0, 10, 100]) {
    it(`N=${n}: from the live VM and by replay, to the same result and events`, async () => {
      const live = await resume(n, false);
      const replayed = await resume(n, true);
      expect(live.view).toMatchObject({ status: 'completed', result: 'blue' });
      expect(replayed.view).toMatchObject({ status: 'completed', result: 'blue' });
      const [a, b] = [await kvRecord(live.runId), await kvRecord(replayed.runId)];
      expect(b.events.map(({ seq, type }: { seq: number; type: string }) => [seq, type])).toEqual(
        a.events.map(({ seq, type }: { seq: number; type: string }) => [seq, type]),
      );
    }, 120_000);
  }
});
