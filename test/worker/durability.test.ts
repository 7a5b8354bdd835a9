/**
 * What a crash can repeat: the answer of a tool call or a model round is durable before Lua
 * sees it, so a run whose process dies while Lua computes (in C, with no turn of the event
 * loop that would flush a write) resumes past that effect rather than performing it again.
 * A store effect or clock read is only committed then: a crash loses it, and the replay
 * performs it again on the files as they were.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call, json, testEnv, untilServed } from './app/client.ts';
import { performedBy } from './app/test-host.ts';
import { armCrash, releaseCrash } from './app/test-worker.ts';

vi.setConfig({ testTimeout: 20_000 });

/** Effects in journal order: 1 store.write, 2 tool call, 3 sys.now, 4 model round, 5 tool call, 6 store.append. */
const CRUNCH = `---
name: crunch
description: Calls a tool and a model, computing in C after each answer.
runvil: 0
uses: [acme/counter]
---
# Crunch

## Work
\`\`\`lua
store.write('log.txt', 'start\\n')
local first = tools.call('counter/tick', { label = 'first' })
-- Seconds of C with no effect: a long string built and searched.
local big = string.rep('ab', 1000000)
local found = select(2, big:gsub('ab', 'ba'))
local now = sys.now()
local reply = models.infer('Note: ' .. first)
local second = tools.call('counter/tick', { label = 'second' })
store.append('log.txt', first .. ' ' .. second .. ' ' .. found .. '\\n')
return first .. ',' .. second
\`\`\`
`;

const stubOf = (runId: string) => testEnv.RUNS.get(testEnv.RUNS.idFromString(runId));

/** The journal entries the run's storage holds (what survived), by op. */
async function journalOps(runId: string): Promise<string[]> {
  return runInDurableObject(stubOf(runId), async (_instance: unknown, state: { storage: { kv: { list(o: object): Iterable<[string, string]> } } }) => {
    const ops: string[] = [];
    for (const [, text] of state.storage.kv.list({ prefix: 'journal:' })) {
      const entries = JSON.parse(text);
      for (const entry of Array.isArray(entries) ? entries : [entries]) ops.push(entry.request.op);
    }
    return ops;
  });
}

async function startCrunch(): Promise<string> {
  return (await json<{ run_id: string }>(await call('POST', '/prompts/crunch/runs', { body: {} }), 202)).run_id;
}

beforeAll(async () => {
  await json(await call('PUT', '/prompts/crunch', { body: CRUNCH }), 201);
});

const OPS = ['store.write', 'tool.call', 'sys.now', 'model.round', 'tool.call', 'store.append'];
const PERFORMED = ['counter/tick first', 'model.round Note: tick-first', 'counter/tick second'];

describe('a crash at the moment Lua gets an answer', () => {
  // From effect 2: a crash at the first would fail the request that starts the run.
  for (const [at, op] of [...OPS.entries()].map(([i, op]) => [i + 1, op] as const).filter(([at]) => at > 1)) {
    const outside = op === 'tool.call' || op === 'model.round';
    it(`at effect ${at} (${op}) ${outside ? 'keeps its answer' : 'loses it, and everything before it was durable'}; the resumed run performs no tool call or model round twice`, async () => {
      const crashed = armCrash(at);
      const runId = await startCrunch();
      await crashed;
      expect(await journalOps(runId)).toEqual(OPS.slice(0, outside ? at : at - 1));
      releaseCrash();
      const done = await untilServed(runId);
      expect(done).toMatchObject({ status: 'completed', result: 'tick-first,tick-second' });
      expect(performedBy(runId)).toEqual(PERFORMED);
      expect(await (await call('GET', `/runs/${runId}/files/log.txt`)).text()).toBe('start\ntick-first tick-second 1000000\n');
    });
  }

  it('twice in a row, at the first tool call and then at the model round, still performs each once', async () => {
    const first = armCrash(2);
    const runId = await startCrunch();
    await first;
    const second = armCrash(4);
    await call('GET', `/runs/${runId}`);
    await second;
    expect(await journalOps(runId)).toEqual(OPS.slice(0, 4));
    releaseCrash();
    expect(await untilServed(runId)).toMatchObject({ status: 'completed', result: 'tick-first,tick-second' });
    expect(performedBy(runId)).toEqual(PERFORMED);
  });
});
