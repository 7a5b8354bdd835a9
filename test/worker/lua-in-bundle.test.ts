/**
 * wasmoon in the Worker bundle as deployed (test/worker/bundle/entry.ts, built by wrangler
 * with wrangler.toml's rules and alias), reached through the LUA_BUNDLE service binding.
 */
// @ts-ignore -- the module's types come with @cloudflare/workers-types, not in tsconfig's types
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { BundleAnswer } from './bundle/entry.ts';
import { EXPECTED, type LoopSummary, type TourSummary, type TrioSummary } from './engine-expected.ts';

const bundle = (env as { LUA_BUNDLE: { fetch(url: string, init: RequestInit): Promise<Response> } }).LUA_BUNDLE;

async function run(source: string): Promise<BundleAnswer> {
  const response = await bundle.fetch('https://bundle.test/', { method: 'POST', body: source });
  return (await response.json()) as BundleAnswer;
}

/** An Engine scenario's summary from the bundle; a failure shows the bundle's error and stack. */
async function scenario<T>(path: string): Promise<T> {
  const response = await bundle.fetch(`https://bundle.test${path}`, { method: 'GET' });
  if (!response.ok) throw new Error(`${path} answered ${response.status}:\n${await response.text()}`);
  return (await response.json()) as T;
}

describe('the deployed Worker bundle', () => {
  it('creates the factory on the first request, without nodejs_compat', async () => {
    const answer = await run('return 1 + 2 * 3, ("lua"):upper()');
    expect(answer).toMatchObject({ values: [7, 'LUA'], hasProcess: false });
  });

  it('gives the run objects a LuaPlatform that calls the wasm exports directly, even over a factory made first', async () => {
    // The first test made the isolate's factory without a platform; the platform still
    // finds the exports of its wasm instance, rather than going through wasmoon's checked
    // wrappers (several times slower per call).
    expect(await scenario<{ direct: boolean }>('/engine/platform')).toEqual({ direct: true });
  });

  it('gives the same math.random values as Node after math.randomseed', async () => {
    // Measured in Node 20 with wasmoon 1.16.0, as in lua-in-workerd.test.ts.
    const answer = await run('math.randomseed(42); return math.random(1, 1000), math.random(1, 1000)');
    expect(answer.values).toEqual([742, 50]);
  });

  it('stops an endless loop with a count hook that raises', async () => {
    const answer = await run("debug.sethook(function() error('budget exceeded') end, '', 1000); while true do end");
    expect(answer.error).toMatch(/budget exceeded$/);
  });

  it('answers concurrent requests from the one factory of the isolate', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => run(`return ${i}`)));
    expect(answers.map((answer) => [answer.values, answer.sameFactory])).toEqual(answers.map((_, i) => [[i], true]));
  });
});

describe('the Engine in the deployed Worker bundle', () => {
  let tour: TourSummary;

  it('runs the multi-section tour to the result and events Node gives', async () => {
    tour = await scenario<TourSummary>('/engine/tour');
    expect(tour.error).toBeUndefined();
    expect(tour).toMatchObject({
      status: 'completed',
      result: EXPECTED.tourResult,
      eventTypes: EXPECTED.eventTypes,
      eventsDigest: EXPECTED.eventsDigest,
      journalOps: EXPECTED.journalOps,
      store: EXPECTED.store,
      modelMessages: EXPECTED.modelMessages,
    });
  });

  it("replays the tour's journal to the same result and events without calling the Harness", () => {
    expect(tour.replay).toEqual({ status: 'completed', sameResult: true, sameEvents: true, harnessCalls: 0 });
  });

  it('stops `while true do end` with a Limit error under a small instruction budget', async () => {
    const loop = await scenario<LoopSummary>('/engine/loop');
    expect(loop.status).toBe('failed');
    expect(loop.error).toEqual(EXPECTED.loopError);
  });

  it('runs a 3-section prompt 200 times in a row in one isolate, then the tour again', async () => {
    const trios = await scenario<TrioSummary>('/engine/trios?count=200');
    expect(trios.wrong).toEqual([]);
    expect(trios.heapAfter).toBe(trios.heapBefore);
    expect(await scenario<TourSummary>('/engine/tour')).toEqual(tour);
  });
});
