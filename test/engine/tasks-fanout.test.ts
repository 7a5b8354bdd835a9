import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform, LuaVm, VmOptions } from '../../src/engine/lua/vm.ts';
import { ARMS_AT_ONCE } from '../../src/engine/tasks.ts';
import { answered, type Harness } from '../../src/engine/effects.ts';
import { newPlatform, prompt, resultOf, run } from './helpers.ts';

const block = (code: string) => '```lua\n' + code + '\n```\n';

let platform: LuaPlatform;
let live = 0;
let peak = 0;
beforeAll(async () => {
  platform = await newPlatform();
  // Counts the VMs open at once.
  const newVm = platform.newVm.bind(platform);
  platform.newVm = async (options?: VmOptions): Promise<LuaVm> => {
    const vm = await newVm(options);
    peak = Math.max(peak, ++live);
    const close = vm.close.bind(vm);
    let closed = false;
    vm.close = () => {
      if (!closed) live--;
      closed = true;
      close();
    };
    return vm;
  };
});

const fanout = (items: number, arm: string) =>
  prompt(
    `# Fan\n\n## Main\n\n${block(`local items = {}\nfor i = 1, ${items} do items[i] = i end\nlocal results = tasks.fanout('## Arm', items)\nreturn #results .. '|' .. table.concat(results, ',', 1, 5) .. '|' .. results[#items]`)}\n## Arm\n\n${block(arm)}`,
  );

describe('tasks.fanout over many items', () => {
  it('keeps at most ARMS_AT_ONCE arms alive, and returns the results in item order', async () => {
    peak = 0;
    const outcome = await run(platform, fanout(200, `store.write('arm' .. item .. '.txt', tostring(item))\nreturn item * 2 .. '@' .. sys.task_id`));
    expect(resultOf(outcome)).toBe('200|2@0.f0.1,4@0.f0.2,6@0.f0.3,8@0.f0.4,10@0.f0.5|400@0.f0.200');
    // The main chain's VM and at most ARMS_AT_ONCE arms.
    expect(peak).toBe(1 + ARMS_AT_ONCE);
    expect(live).toBe(0);
  });

  it('counts as one section entry, whatever the number of arms', async () => {
    const outcome = await run(platform, fanout(50, 'return item'), { limits: { entries: 3 } });
    expect(resultOf(outcome)).toBe('50|1,2,3,4,5|50');
  });

  it('closes every VM when the Harness fails while arms wait on it', async () => {
    const harness: Harness = {
      perform: async (request) => {
        if (request.op === 'store.write' && request.path === 'arm5.txt') throw new Error('the Harness broke');
        return answered(null);
      },
    };
    await expect(run(platform, fanout(20, `store.write('arm' .. item .. '.txt', 'x')\nreturn item`), { harness })).rejects.toThrow('the Harness broke');
    expect(live).toBe(0);
  });

  it('gives nil at the place of an arm that returns nothing', async () => {
    const target = prompt(
      `# Fan\n\n## Main\n\n${block("local r = tasks.fanout('## Arm', { 1, 2, 3, 4 })\nreturn tostring(r[1]) .. ',' .. tostring(r[2]) .. ',' .. tostring(r[3]) .. ',' .. tostring(r[4])")}\n## Arm\n\n${block('if item % 2 == 0 then return item end')}`,
    );
    expect(resultOf(await run(platform, target))).toBe('nil,2,nil,4');
  });
});
