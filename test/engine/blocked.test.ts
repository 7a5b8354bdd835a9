import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { Harness } from '../../src/engine/effects.ts';
import { lua, newPlatform, resultOf, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

describe('onBlocked', () => {
  it('says when no chain can run until an effect is answered, and when the run moves again', async () => {
    const seen: string[] = [];
    let answer: ((text: string) => void) | null = null;
    const harness: Harness = {
      perform: (request) => {
        seen.push(`perform ${request.op}`);
        return new Promise((resolve) => {
          answer = (text) => resolve({ ok: true, value: text });
        });
      },
    };
    // The first report of a blocked run, however long the machine takes to reach it.
    let reportBlocked = () => {};
    const reported = new Promise<void>((resolve) => (reportBlocked = resolve));
    const onBlocked = (blocked: boolean) => {
      seen.push(`blocked ${blocked}`);
      if (blocked) reportBlocked();
    };
    const pending = run(platform, lua(`return store.read('slow.md')`), { harness, onBlocked });
    await reported;
    expect(seen).toEqual(['perform store.read', 'blocked true']);
    answer!('late');
    expect(resultOf(await pending)).toBe('late');
    expect(seen).toEqual(['perform store.read', 'blocked true', 'blocked false']);
  });
});
