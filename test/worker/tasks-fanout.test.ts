/**
 * tasks.fanout over ITEMS items inside workerd: in the Worker bundle as deployed (the
 * measurement of bench/worker-fanout.ts, through LUA_BUNDLE), with a bounded number of live
 * VMs and within an isolate's memory; and as a run of the run object, journaled and stored,
 * and resumed by replay when its object's memory is dropped halfway. ITEMS is enough for
 * many rounds of the arms' bound; the figures over 1,000 items (time per arm, peak VMs and
 * heaps) are `npm run bench:worker`'s (BENCH_PARTS=fanout), measured, not timed here.
 */
// @ts-ignore -- the module's types come with @cloudflare/workers-types, not in tsconfig's types
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { expectedResult, fanoutPrompt, ISOLATE_BYTES, VM_BOUND, type FanoutMeasure } from '../../bench/worker-fanout.ts';
import type { RunView, StreamEvent } from '../../src/worker/run-object/run-view.ts';
import { call, json, kvRecord, untilServed } from './app/client.ts';
import { armFault, dropObjects } from './app/test-worker.ts';

/** Items of the fanout: arms pass through the bound of live VMs many times over. */
const ITEMS = 120;

const bundle = (env as { LUA_BUNDLE: { fetch(url: string, init?: RequestInit): Promise<Response> } }).LUA_BUNDLE;

async function measured(name: 'fanout' | 'calls', items: number): Promise<FanoutMeasure> {
  const response = await bundle.fetch(`https://bundle.test/engine/fanout?name=${name}&items=${items}`);
  if (!response.ok) throw new Error(`/engine/fanout answered ${response.status}:\n${await response.text()}`);
  return (await response.json()) as FanoutMeasure;
}

describe(`tasks.fanout over ${ITEMS} items in the Worker bundle`, () => {
  it("completes with every arm's result, at most 8 arms and the main chain alive at once, within 128 MB", async () => {
    const baseline = await measured('calls', ITEMS);
    const fanout = await measured('fanout', ITEMS);
    expect(baseline).toMatchObject({ status: 'completed', result: expectedResult(ITEMS) });
    expect(fanout).toMatchObject({ status: 'completed', result: expectedResult(ITEMS), vmsLeft: 0 });
    expect(fanout.peakVms).toBe(VM_BOUND);
    expect(fanout.wasmBytes).toBeLessThan(ISOLATE_BYTES / 4);
    expect(fanout.peakLuaBytes).toBeLessThan(ISOLATE_BYTES / 16);
  }, 60_000);
});

describe(`tasks.fanout over ${ITEMS} items as a run of the run object`, () => {
  let undisturbed: { view: RunView; events: StreamEvent[] };

  /** Each chain's events in order, without their place in the stream or the time they were taken. */
  const byChain = (events: StreamEvent[]) => {
    const chains: Record<string, object[]> = {};
    for (const { seq: _seq, at: _at, ...event } of events) (chains[String(event.task ?? 'run')] ??= []).push(event);
    return chains;
  };

  const filesOf = async (runId: string) => (await json<{ files: string[] }>(await call('GET', `/runs/${runId}/files/arms/`), 200)).files;

  it("completes with the right result, every arm's file stored", async () => {
    await json(await call('PUT', '/prompts/fanout-big', { body: fanoutPrompt('fanout', ITEMS, 'fanout-big') }), 201);
    const view = await json<RunView>(await call('POST', '/prompts/fanout-big/runs?wait=60', { body: { seed: 'f' } }), 200);
    expect(view).toMatchObject({ status: 'completed', result: expectedResult(ITEMS), error: null });
    expect(await filesOf(view.run_id)).toHaveLength(ITEMS);
    expect(await (await call('GET', `/runs/${view.run_id}/files/arms/${ITEMS}.txt`)).text()).toMatch(/^item1 item2 .* item50$/);
    undisturbed = { view, events: (await kvRecord<{ events: StreamEvent[] }>(view.run_id)).events };
  }, 90_000);

  it(`dropped from memory halfway (after journal entry ${ITEMS}), resumes by replay to the same result, files and events per chain`, async () => {
    const fault = armFault(ITEMS);
    const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/fanout-big/runs', { body: { seed: 'f' } }), 202);
    await fault;
    await dropObjects();
    const view = await untilServed(run_id);
    expect(view).toMatchObject({ status: 'completed', result: expectedResult(ITEMS) });
    expect(await filesOf(run_id)).toHaveLength(ITEMS);
    // The replay regenerates the events the journal recorded as they were; after that the
    // arms run live, and how their events interleave depends on when their answers land, as
    // in any run. So each chain's events are the same, in the same order.
    const events = (await kvRecord<{ events: StreamEvent[] }>(run_id)).events;
    expect(events).toHaveLength(undisturbed.events.length);
    expect(byChain(events)).toEqual(byChain(undisturbed.events));
  }, 90_000);
});
