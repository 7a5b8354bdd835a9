import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { RunOutcome } from '../../src/engine/run.ts';
import { lua, newPlatform, prompt, resultOf, run } from './helpers.ts';

const block = (code: string) => '```lua\n' + code + '\n```\n';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

/**
 * Runs with a signal that aborts after `ms`, under a budget no loop here reaches; returns the
 * outcome. A run that did not hear its signal would loop until the test's timeout.
 */
async function cancelledAfter(target: ReturnType<typeof lua>, ms: number): Promise<{ outcome: RunOutcome }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort('the operator stopped it'), ms);
  const outcome = await run(platform, target, { signal: controller.signal, limits: { instructions: 1e12 } });
  clearTimeout(timer);
  return { outcome };
}

describe('cancelling the whole run', () => {
  it('ends a run whose main chain loops forever as Cancelled soon after its signal aborts', async () => {
    const { outcome } = await cancelledAfter(lua('while true do end'), 50);
    expect(outcome.status).toBe('failed');
    if (outcome.status === 'failed') expect(outcome.error).toEqual({ kind: 'Cancelled', message: 'the run was cancelled: the operator stopped it' });
  });

  it('ends a run whose task loops inside pcall as Cancelled, the task reported cancelled', async () => {
    const target = prompt(
      `# T\n\n## Main\n\n${block("return tasks.await(tasks.spawn('## Spin'))")}\n## Spin\n\n${block('while true do pcall(function() while true do end end) end')}`,
    );
    const { outcome } = await cancelledAfter(target, 50);
    expect(outcome.status).toBe('failed');
    if (outcome.status === 'failed') expect(outcome.error.kind).toBe('Cancelled');
    expect(outcome.events.filter((event) => event.task === '0.0').map((event) => event.type)).toEqual(['task_started', 'section_entered', 'task_cancelled']);
  });
});

describe('cancelling a task that loops forever', () => {
  const spinning = (loop: string) =>
    prompt(`# T

## Main

${block(`local t = tasks.spawn('## Spin')
-- Effects give the spinning task its turns until it has started looping.
repeat store.write('tick.txt', 'x') until var.spinning
t:cancel()
local ok, err = pcall(tasks.await, t)
store.write('after.txt', 'the run goes on')
return t:status() .. '|' .. err.kind .. '|' .. tostring(err) .. '|' .. store.read('after.txt')`)}
## Spin

${block(`var.spinning = true\n${loop}`)}`);

  it.each([
    ['a plain loop', 'while true do end'],
    ['a loop inside pcall', 'while true do pcall(function() while true do end end) end'],
    ['a loop inside a coroutine', 'coroutine.wrap(function() while true do end end)()'],
  ])('stops %s when another chain cancels it, and the run goes on', async (_name, loop) => {
    const outcome = await run(platform, spinning(loop), { limits: { instructions: 1e12 } });
    expect(resultOf(outcome)).toBe('cancelled|cancelled|task 0.0 was cancelled|the run goes on');
  });
});

describe('cancelling fanout arms', () => {
  it('cancels the arms of a cancelled task, a looping one included', async () => {
    const target = prompt(`# T

## Main

${block(`local t = tasks.spawn('## Fan')
repeat store.write('tick.txt', 'x') until var.looping
t:cancel()
local ok, err = pcall(tasks.await, t)
return tostring(err)`)}
## Fan

${block(`return table.concat(tasks.fanout('## Arm', { 1, 2, 3 }), ',')`)}
## Arm

${block(`if item == 2 then var.looping = true while true do end end\nstore.write('arm' .. item .. '.txt', 'x')\nreturn item`)}`);
    const outcome = await run(platform, target, { limits: { instructions: 1e12 } });
    expect(resultOf(outcome)).toBe('task 0.0 was cancelled');
    const cancelled = outcome.events.filter((event) => event.type === 'task_cancelled').map((event) => event.task);
    expect(cancelled).toContain('0.0.f0.2');
    expect(cancelled[0]).toBe('0.0');
  });

  it('cancels the other arms, a looping one and one waiting on an effect, when one arm fails', async () => {
    const target = prompt(`# T

## Main

${block(`local ok, err = pcall(tasks.fanout, '## Arm', { 1, 2, 3 })
return err.kind .. '|' .. tostring(err) .. '|' .. err.task`)}
## Arm

${block(`if item == 1 then var.looping = true while true do end end
if item == 2 then while true do store.write('tick2.txt', 'x') end end
repeat store.write('tick3.txt', 'x') until var.looping
error('three fails', 0)`)}`);
    const outcome = await run(platform, target, { limits: { instructions: 1e12 } });
    expect(resultOf(outcome)).toBe('lua|three fails|0.f0.3');
    const cancelled = outcome.events.filter((event) => event.type === 'task_cancelled').map((event) => event.task);
    expect(cancelled).toEqual(['0.f0.1', '0.f0.2']);
  });
});
