import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { answered, type EffectContext, type EffectRequest, type Harness } from '../../src/engine/effects.ts';
import { newPlatform, prompt, resultOf, run } from './helpers.ts';

const block = (code: string) => '```lua\n' + code + '\n```\n';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

/** Three tasks that each write a file, log, and write again. */
const threeWriters = prompt(`# Writers

## Main

${block(`local list = {}
for i = 1, 3 do list[i] = tasks.spawn('## Write', i) end
return table.concat(tasks.await_all(list), ',')`)}
## Write

${block(`local n = ...
log('before ' .. n)
store.write('f' .. n .. '.txt', 'x')
log('after ' .. n)
return n`)}`);

describe('the scheduler', () => {
  it('sends the effects parked in one step to the Harness together', async () => {
    // Answers nothing until all three writes have arrived: effects sent one at a time would wait forever.
    const arrived: { request: EffectRequest; context: EffectContext }[] = [];
    let release: () => void = () => {};
    const barrier = new Promise<void>((resolve) => {
      release = resolve;
    });
    const harness: Harness = {
      perform: async (request, context) => {
        arrived.push({ request, context });
        if (arrived.length === 3) release();
        await barrier;
        return answered(null);
      },
    };
    const outcome = await run(platform, threeWriters, { harness });
    expect(resultOf(outcome)).toBe('1,2,3');
    expect(arrived.map(({ context }) => `${context.chain}#${context.seq}`)).toEqual(['0.0#1', '0.1#1', '0.2#1']);
  });

  it('runs the chains of a step one at a time, in the order they were created', async () => {
    const outcome = await run(platform, threeWriters);
    const logs = outcome.events.filter((event) => event.type === 'log').map((event) => `${event.task}:${String(event.message)}`);
    expect(logs).toEqual(['0.0:before 1', '0.1:before 2', '0.2:before 3', '0.0:after 1', '0.1:after 2', '0.2:after 3']);
  });

  it('reports every event of a task with its chain id', async () => {
    const outcome = await run(platform, threeWriters);
    const byTask = outcome.events.filter((event) => event.section === 'Write').map((event) => event.task);
    expect(new Set(byTask)).toEqual(new Set(['0.0', '0.1', '0.2']));
    expect(outcome.events.filter((event) => event.section === 'Main').every((event) => event.task === '0')).toBe(true);
  });
});
