/**
 * A run with tasks becomes a test that passes ("A run becomes a test", DESIGN.md): its chains
 * went on side by side, and their model rounds and asks finished in the order the world
 * answered them, which a run offline (every answer at hand) does not repeat. The test file
 * names the chain each reply, each task's ask and each clock reading belongs to, and expects
 * each chain's events apart, so `runvil test` gives each chain what it got.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readTestText } from '../../src/cli/test-file.ts';
import { runPromptTest } from '../../src/cli/test-run.ts';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { RunOutcome } from '../../src/engine/run.ts';
import { runOnHost } from '../../src/host/host.ts';
import { runTestFile } from '../../src/host/run-test-file.ts';
import type { Pack } from '../../src/host/pack.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import { runvilPacks } from '../../packs/index.ts';
import { newPlatform } from '../engine/helpers.ts';

const SOURCE = `---
name: review
description: Asks the operator, then two arms each ask and have a model reply.
runvil: 0
uses: [user-input]
models:
  writer: {}
---
# Review

## Main

\`\`\`lua
local go = tools.call('user-input/ask', { question = 'Start?' })
local started = sys.now()
local arms = tasks.fanout('## Arm', { 'slow', 'fast' })
return go .. ' at ' .. started .. ' | ' .. table.concat(arms, ' | ')
\`\`\`

## Arm

\`\`\`lua
models.use('writer')
local note = tools.call('user-input/ask', { question = 'Note for ' .. item .. '?' })
local review = models.infer('Review ' .. item)
return note .. ' -> ' .. review .. ' at ' .. sys.now()
\`\`\`
`;

/** Answers after a delay that depends on what is asked: the slow arm's answers come last. */
const after = <T>(slow: boolean, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), slow ? 40 : 1));

/** The live run's clock: each read a second after the last. */
let clockReads = 0;
const clock = () => Date.UTC(2026, 11, 2) + 1000 * ++clockReads;

let platform: LuaPlatform;
let live: Extract<RunOutcome, { status: 'completed' }>;
let text: string;

beforeAll(async () => {
  platform = await newPlatform();
  const parsed = parsePrompt(SOURCE, 'review.md');
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const userInput = runvilPacks({ fetchPage: async () => ({ ok: false, message: 'no web here' }) })[1] as Pack;
  const outcome = await runOnHost(
    platform,
    {
      packs: [userInput],
      clock,
      operator: { ask: (ask) => after(ask.question === 'Note for slow?', { ok: true, text: `noted (${ask.question})` }) },
      models: {
        provider: () => ({
          round: (request) => {
            const slow = JSON.stringify(request.messages).includes('Review slow');
            return after(slow, { ok: true, reply: { content: slow ? 'slow reviewed' : 'fast reviewed', tool_calls: [] } });
          },
        }),
      },
    },
    { prompt: parsed.prompt, seed: '7' },
  );
  if (outcome.status !== 'completed') throw new Error(`the live run ended ${outcome.status}`);
  live = outcome;
  text = runTestFile({
    run_id: 'r1',
    prompt: 'review',
    source: SOURCE,
    args: {},
    seed: '7',
    journal: outcome.journal,
    ending: { status: 'completed', result: outcome.result },
    events: outcome.events,
    packs: [],
  });
});

describe('a run whose arms finished out of order, as a test file', () => {
  it("journals the fast arm's ask and round before the slow arm's (what makes the order matter)", () => {
    const [start, fast, slow] = [1, 2, 3].map((n) => Date.UTC(2026, 11, 2) + 1000 * n);
    expect(live.result).toBe(
      `noted (Start?) at ${start} | noted (Note for slow?) -> slow reviewed at ${slow} | noted (Note for fast?) -> fast reviewed at ${fast}`,
    );
    const arms = live.journal.filter((entry) => entry.chain !== '0' && entry.chain !== 'scheduler').map((entry) => entry.chain);
    expect(arms[0]).toBe('0.f0.2');
    expect(arms.at(-1)).toBe('0.f0.1');
  });

  it("names each arm's replies and asks by its chain, and keeps the main chain's ask an answer", () => {
    const file = parse(text) as {
      model: object[];
      answers: string[];
      recorded: object[];
      clock: object[];
      expect: { events: string[]; task_events: Record<string, string[]> };
    };
    expect(file.answers).toEqual(['noted (Start?)']);
    expect(file.model).toEqual([
      { task: '0.f0.2', content: 'fast reviewed' },
      { task: '0.f0.1', content: 'slow reviewed' },
    ]);
    expect(file.recorded).toEqual([
      { tool: 'user-input/ask', args: { question: 'Note for fast?' }, task: '0.f0.2', section: 'Arm', output: 'noted (Note for fast?)' },
      { tool: 'user-input/ask', args: { question: 'Note for slow?' }, task: '0.f0.1', section: 'Arm', output: 'noted (Note for slow?)' },
    ]);
    const base = Date.UTC(2026, 11, 2);
    expect(file.clock).toEqual([{ now: base + 1000 }, { now: base + 2000, task: '0.f0.2' }, { now: base + 3000, task: '0.f0.1' }]);
    // Each chain's events apart: the arms' interleave with the main chain's as their effects finished.
    const typesOf = (task: string) => live.events.filter((event) => event.task === task).map((event) => event.type);
    expect(file.expect.events).toEqual(typesOf('0'));
    expect(file.expect.events).toContain('run_completed');
    expect(Object.keys(file.expect.task_events).sort()).toEqual(['0.f0.1', '0.f0.2']);
    for (const arm of ['0.f0.1', '0.f0.2']) {
      expect(file.expect.task_events[arm]).toEqual(typesOf(arm));
      expect(file.expect.task_events[arm]).toEqual(expect.arrayContaining(['task_started', 'model_turn_completed', 'task_completed']));
    }
  });

  it('passes under runvil test, each arm given what it got', async () => {
    const read = await readTestText(text, 'r1.test.yaml', async () => 'no files');
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    expect(await runPromptTest(platform, read.value)).toEqual([]);
  });

  it('reads the fixture clock once a chain has no reading left', async () => {
    const file = parse(text) as { clock: object[] };
    file.clock = file.clock.slice(0, 1);
    const read = await readTestText(JSON.stringify(file), 'r1.test.yaml', async () => 'no files');
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    const lines = await runPromptTest(platform, read.value);
    expect(lines[1]).toContain(`slow reviewed at ${Date.UTC(2025, 0, 1)} | `);
  });

  it("fails, naming the task, when a task's events are not the ones expected", async () => {
    const file = parse(text) as { expect: { task_events: Record<string, string[]> } };
    file.expect.task_events['0.f0.1'] = ['task_started', 'task_failed'];
    const read = await readTestText(JSON.stringify(file), 'r1.test.yaml', async () => 'no files');
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    const lines = await runPromptTest(platform, read.value);
    expect(lines[0]).toBe('expected events of task 0.f0.1 in this order: task_started, task_failed');
    expect(lines.at(-1)).toMatch(/^got events of task 0\.f0\.1: task_started, section_entered, .*task_completed$/);
  });

  it('fails, naming the result, when the replies lose their tasks (as before they were named)', async () => {
    const untagged = text.replace(/^ {2}- task: 0\.f0\.\d\n {4}/gm, '  - ');
    expect(untagged).not.toContain('- task:');
    const read = await readTestText(untagged, 'r1.test.yaml', async () => 'no files');
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    expect((await runPromptTest(platform, read.value))[0]).toBe(`expected result ${JSON.stringify(live.result)}`);
  });
});
