/**
 * The run-wide memory budget in workerd: runs share one isolate and one wasm heap, and a
 * memory-hungry run ends as Limit while the others in the same isolate complete.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, drive, json, settled } from './app/client.ts';
import { DESK } from './app/prompts.ts';

const lua = (code: string) => '```lua\n' + code + '\n```\n';
const hungry = (name: string, code: string) => `---
name: ${name}
description: Takes memory without end.
runvil: 0
---
# Hungry

## Eat
${lua(code)}`;

const HOARD = `---
name: hoard
description: Hundreds of tasks that each hold memory and wait.
runvil: 0
uses: [user-input]
---
# Hoard

## Main
${lua(`local ids = {}
for i = 1, 300 do ids[i] = tasks.spawn('## Hold') end
tasks.await_all(ids)
return 'never'`)}
## Hold
${lua(`local kept = ('h'):rep(1024 * 1024)
return tools.call('user-input/ask', { question = 'Keep ' .. #kept .. '?' })`)}`;

const BOMBS: [string, string][] = [
  ['strings', `local t = {} while true do t[#t+1] = ('x'):rep(1e6) .. #t end`],
  ['string-rep', `return #string.rep('x', 1e9)`],
  ['pcall-loop', `while true do pcall(function() local t = {} while true do t[#t+1] = ('y'):rep(1e6) end end) end`],
  ['tables', `local t = {} for i = 1, 1e8 do t[i] = {i} end`],
];

beforeAll(async () => {
  await call('PUT', '/prompts/desk', { body: DESK });
  await call('PUT', '/prompts/hoard', { body: HOARD });
  for (const [name, code] of BOMBS) await call('PUT', `/prompts/bomb-${name}`, { body: hungry(`bomb-${name}`, code) });
});

const start = async (prompt: string, body: object = {}) =>
  (await json<{ run_id: string }>(await call('POST', `/prompts/${prompt}/runs`, { body }), 202)).run_id;

describe('a memory-hungry run in workerd', () => {
  for (const [name] of BOMBS) {
    it(`(${name}) ends as Limit naming the memory limit, while a run in the same isolate completes`, async () => {
      const honest = await start('desk', { seed: `mem-${name}` });
      const bomb = await start(`bomb-${name}`);
      const ended = await settled(bomb);
      expect(ended.status).toBe('failed');
      expect(ended.error).toMatchObject({ kind: 'Limit', message: expect.stringMatching(/\((memoryBytes|runMemoryBytes)\)/) });
      const view = await drive(honest, ['Ada', 'Friday']);
      expect(view.status).toBe('completed');
    });
  }

  it('with hundreds of tasks waiting on asks ends as Limit (runMemoryBytes), and another run completes', async () => {
    const hoard = await start('hoard');
    const ended = await settled(hoard);
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatchObject({ kind: 'Limit', message: expect.stringContaining('(runMemoryBytes)') });
    const view = await drive(await start('desk', { seed: 'after-hoard' }), ['Ada', 'Friday']);
    expect(view.status).toBe('completed');
    expect((await call('GET', '/health')).status).toBe(200);
  });
});
