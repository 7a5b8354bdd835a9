/**
 * The isolate's Lua memory shared fairly, in workerd: runs that each hold a good part of the
 * 80 MiB heap and then wait (on asks, on an HTTP tool that answered 202, in tasks and fanout
 * arms) give their VMs up to an honest run larger than each of them, the one waiting longest
 * first; answered afterwards, they resume by replay of their journal and complete with the
 * results they would have had.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { StreamEvent } from '../../src/worker/run-object/run-view.ts';
import { call, json, settled, until, type RunView } from './app/client.ts';
import { reclaimedRuns } from './app/test-worker.ts';
import { receivedBy } from './app/tool-service.ts';

vi.setConfig({ testTimeout: 60_000 });

const MiB = 1024 * 1024;
const lua = (code: string) => '```lua\n' + code + '\n```\n';
const prompt = (name: string, uses: string, args: string, body: string) => `---
name: ${name}
description: A test prompt.
runvil: 0
uses: [${uses}]
args:
${args}---
# ${name}

${body}`;

/** Lua that keeps `mib` strings of 1 MiB in `kept`, and a function that counts their bytes. */
const keep = (mib: string) => `local kept = {}
for i = 1, ${mib} do kept[i] = ('k'):rep(${MiB} - 8) .. string.format('%08d', i) end
local function held() local n = 0 for _, s in ipairs(kept) do n = n + #s end return n end`;

/** Holds `mib` MiB, then asks `asks` times; returns the answers and the bytes it held. */
const HOLD = prompt(
  'hold',
  'user-input',
  '  mib: { type: integer, default: 12 }\n  asks: { type: integer, default: 1 }\n',
  `## Main
${lua(`${keep('args.mib')}
local answers = {}
for i = 1, args.asks do answers[i] = tools.call('user-input/ask', { question = 'Keep ' .. #kept .. ' MiB? (' .. i .. ')' }) end
return table.concat(answers, '+') .. ':' .. held()`)}`,
);

/** Holds `mib` MiB, then waits on deploy/start, whose service answers 202 and posts the result later. */
const HOLD_DEPLOY = prompt(
  'hold-deploy',
  'acme/deploy',
  '  mib: { type: integer, default: 12 }\n',
  `## Main
${lua(`${keep('args.mib')}
return tools.call('deploy/start', { service = 'api' }) .. ':' .. held()`)}`,
);

/** Two tasks that each hold `mib` MiB and ask, awaited in order. */
const HOLD_TASKS = prompt(
  'hold-tasks',
  'user-input',
  '  mib: { type: integer, default: 6 }\n',
  `## Main
${lua(`local a, b = tasks.spawn('## Hold', 1), tasks.spawn('## Hold', 2)
return tasks.await(a) .. ',' .. tasks.await(b)`)}
## Hold
${lua(`local n = ...
${keep('args.mib')}
return tools.call('user-input/ask', { question = 'Task ' .. n .. '?' }) .. '@' .. held()`)}`,
);

/** A fanout of two arms that each hold `mib` MiB and ask. */
const HOLD_FANOUT = prompt(
  'hold-fanout',
  'user-input',
  '  mib: { type: integer, default: 6 }\n',
  `## Main
${lua(`return table.concat(tasks.fanout('## Arm', { 1, 2 }), ',')`)}
## Arm
${lua(`${keep('args.mib')}
return tools.call('user-input/ask', { question = 'Arm ' .. item .. '?' }) .. '@' .. held()`)}`,
);

/**
 * Three tasks that each hold `mib` MiB at once, while a tool call waits on a timer (a run
 * computing, not waiting: its VMs are its own), then add up what they held.
 */
const HEAVY = prompt(
  'heavy',
  'acme/counter',
  '  mib: { type: integer, default: 11 }\n  wait_ms: { type: integer, default: 50 }\n',
  `## Main
${lua(`local ids = {}
for i = 1, 3 do ids[i] = tasks.spawn('## Fill', i) end
local total = 0
for _, id in ipairs(ids) do total = total + tasks.await(id) end
return 'heavy:' .. total`)}
## Fill
${lua(`local n = ...
${keep('args.mib')}
tools.call('counter/tick', { label = 'fill' .. n, wait_ms = args.wait_ms })
return held()`)}`,
);

beforeAll(async () => {
  for (const [name, text] of [
    ['hold', HOLD],
    ['hold-deploy', HOLD_DEPLOY],
    ['hold-tasks', HOLD_TASKS],
    ['hold-fanout', HOLD_FANOUT],
    ['heavy', HEAVY],
  ])
    await json(await call('PUT', `/prompts/${name}`, { body: text }), 201);
});

type View = Omit<RunView, 'pending'> & { pending: { kind: string; ask_id?: string; token?: string; call_id?: string }[] };

const start = async (name: string, args: object = {}) =>
  (await json<{ run_id: string }>(await call('POST', `/prompts/${name}/runs`, { body: { args } }), 202)).run_id;

/** Starts `count` runs of `name`, one after another, each suspended before the next starts. */
async function waitingRuns(name: string, count: number, args: object = {}): Promise<string[]> {
  const runs: string[] = [];
  for (let i = 0; i < count; i++) {
    const runId = await start(name, args);
    expect((await settled(runId)).status).toBe('suspended');
    runs.push(runId);
  }
  return runs;
}

/** Answers every ask the run lists as pending with `answer`. */
async function answerAsks(runId: string, answer: string): Promise<void> {
  const view = (await settled(runId)) as View;
  for (const ask of view.pending.filter((entry) => entry.kind === 'ask'))
    await json(await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer }, token: ask.token }), 200);
}

/** The run once it has ended. */
const ended = (runId: string) => until(runId, (view) => view.status === 'completed' || view.status === 'failed' || view.status === 'cancelled');

/** The types of the run's events, in order. */
async function eventTypes(runId: string): Promise<string[]> {
  const text = await (await call('GET', `/runs/${runId}/events`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => (JSON.parse(line.slice(6)) as StreamEvent).type);
}

/** The bytes `keep(mib)` holds. */
const held = (mib: number) => mib * MiB;

describe('runs that each fill a good part of the heap and wait on asks', () => {
  it('give their VMs to an honest run larger than each of them, which completes; answered, they all complete by replay', async () => {
    const runs = await waitingRuns('hold', 5);
    const before = await reclaimedRuns();
    expect(await ended(await start('heavy'))).toMatchObject({ status: 'completed', result: `heavy:${3 * held(11)}` });
    expect(await reclaimedRuns()).toBeGreaterThan(before);
    for (const [i, runId] of runs.entries()) await answerAsks(runId, `yes-${i}`);
    for (const [i, runId] of runs.entries()) expect(await ended(runId)).toMatchObject({ status: 'completed', result: `yes-${i}:${held(12)}` });
    // The oldest waiting run was reclaimed and replayed, the newest was not: their events read alike.
    expect(await eventTypes(runs[0]!)).toEqual(await eventTypes(runs[4]!));
  });

  it('arriving while the others are mid-resume: the heavy run takes the VMs of those still waiting, and every run completes', async () => {
    const runs = await waitingRuns('hold', 5, { asks: 2 });
    expect(await ended(await start('heavy'))).toMatchObject({ status: 'completed' });
    // The two oldest were reclaimed: their answers resume them by replay, and the heavy run comes at once.
    await answerAsks(runs[0]!, 'a0');
    await answerAsks(runs[1]!, 'a1');
    const heavy = await start('heavy');
    expect(await ended(heavy)).toMatchObject({ status: 'completed', result: `heavy:${3 * held(11)}` });
    for (const [i, runId] of runs.entries()) if (i > 1) await answerAsks(runId, `a${i}`);
    for (const [i, runId] of runs.entries()) await answerAsks(runId, `b${i}`);
    for (const [i, runId] of runs.entries()) expect(await ended(runId)).toMatchObject({ status: 'completed', result: `a${i}+b${i}:${held(12)}` });
  });

  it('answered while the heavy run runs: each resumes (by replay when it was reclaimed) and completes, and so does the heavy run', async () => {
    const runs = await waitingRuns('hold', 4);
    const before = await reclaimedRuns();
    // Its tasks hold their memory while their timers run: long enough for the answers to come meanwhile.
    const heavy = await start('heavy', { wait_ms: 1500 });
    for (let i = 0; i < 200 && (await reclaimedRuns()) === before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await reclaimedRuns()).toBeGreaterThan(before);
    for (const [i, runId] of runs.entries()) {
      await answerAsks(runId, `now-${i}`);
      expect(await ended(runId)).toMatchObject({ status: 'completed', result: `now-${i}:${held(12)}` });
    }
    expect(await ended(heavy)).toMatchObject({ status: 'completed', result: `heavy:${3 * held(11)}` });
  });
});

describe('runs that fill the heap and wait on an HTTP tool that answered 202', () => {
  it('give their VMs to the heavy run; the results posted afterwards resume them by replay, each with its own', async () => {
    const runs = await waitingRuns('hold-deploy', 5);
    const before = await reclaimedRuns();
    expect(await ended(await start('heavy'))).toMatchObject({ status: 'completed' });
    expect(await reclaimedRuns()).toBeGreaterThan(before);
    for (const [i, runId] of runs.entries()) {
      const sent = receivedBy(runId);
      // Sent once: a replay waits on the call it made, and sends nothing again.
      expect(sent).toHaveLength(1);
      const { call_id, callback_token } = sent[0]!.body as { call_id: string; callback_token: string };
      await json(await call('POST', `/runs/${runId}/tool-results/${call_id}`, { body: { output: `deployed-${i}` }, token: callback_token }), 200);
    }
    for (const [i, runId] of runs.entries()) expect(await ended(runId)).toMatchObject({ status: 'completed', result: `deployed-${i}:${held(12)}` });
    for (const runId of runs) expect(receivedBy(runId)).toHaveLength(1);
  });
});

describe('runs whose tasks or fanout arms fill the heap and wait on asks', () => {
  for (const [name, results] of [
    ['hold-tasks', (answer: string) => `${answer}@${held(6)},${answer}@${held(6)}`],
    ['hold-fanout', (answer: string) => `${answer}@${held(6)},${answer}@${held(6)}`],
  ] as const) {
    it(`(${name}) give their VMs to the heavy run, and every task gets its answer by replay`, async () => {
      const runs = await waitingRuns(name, 5);
      const before = await reclaimedRuns();
      expect(await ended(await start('heavy'))).toMatchObject({ status: 'completed' });
      expect(await reclaimedRuns()).toBeGreaterThan(before);
      for (const [i, runId] of runs.entries()) await answerAsks(runId, `t${i}`);
      for (const [i, runId] of runs.entries()) expect(await ended(runId)).toMatchObject({ status: 'completed', result: results(`t${i}`) });
    });
  }
});
