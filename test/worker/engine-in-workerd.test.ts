/**
 * The Runvil Engine inside workerd: runPrompt on a LuaPlatform over the workerd factory,
 * giving what Node gives (engine-expected.ts) for the scenarios of engine-scenario.ts.
 * lua-in-bundle.test.ts runs the same scenarios in the Worker bundle as deployed.
 */
import { createWorkerdLuaFactory } from '../../src/worker/workerd-lua/lua-factory.ts'; // first: src/worker/workerd-lua/README.md
import glue from 'wasmoon/dist/glue.wasm';
import { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLoop, runTour, runTrios } from './engine-scenario.ts';
import { EXPECTED, type TourSummary } from './engine-expected.ts';

let platform: LuaPlatform;

beforeAll(async () => {
  platform = await LuaPlatform.create(() => createWorkerdLuaFactory(glue));
});

describe('the Engine in workerd', () => {
  let tour: TourSummary;

  beforeAll(async () => {
    tour = await runTour(platform);
  });

  it('runs the multi-section tour to the result Node gives', () => {
    expect(tour.error).toBeUndefined();
    expect(tour.status).toBe('completed');
    expect(tour.result).toBe(EXPECTED.tourResult);
  });

  it('emits the events Node emits, byte for byte', () => {
    expect(tour.eventTypes).toEqual(EXPECTED.eventTypes);
    expect(tour.eventsDigest).toBe(EXPECTED.eventsDigest);
  });

  it('journals the effects, fills the store and asks the scripted model as Node does', () => {
    expect(tour.journalOps).toEqual(EXPECTED.journalOps);
    expect(tour.store).toEqual(EXPECTED.store);
    expect(tour.modelMessages).toEqual(EXPECTED.modelMessages);
  });

  it('replays the journal to the same result and events without calling the Harness', () => {
    expect(tour.replay).toEqual({ status: 'completed', sameResult: true, sameEvents: true, harnessCalls: 0 });
  });

  it('stops `while true do end` with a Limit error under a small instruction budget', async () => {
    const loop = await runLoop(platform);
    expect(loop.status).toBe('failed');
    expect(loop.error).toEqual(EXPECTED.loopError);
  });

  it('runs a 3-section prompt 200 times in a row, then the tour again, on one wasm heap', async () => {
    const trios = await runTrios(platform, 200);
    expect(trios.wrong).toEqual([]);
    expect(trios.heapAfter).toBe(trios.heapBefore);
    const again = await runTour(platform);
    expect(again).toEqual(tour);
  });
});
