/**
 * MCP server tasks in workerd (DESIGN.md Part 3, "MCP servers of the 2026-07-28 protocol"),
 * against the tasks test server (tasks-mcp.setup.ts): a call the server makes a task suspends
 * the run on it, journaled by its task id; the run object's alarm polls it (the test moves
 * the poll's time and runs the alarm, so nothing waits on the server's interval), and the run
 * completes with the task's result, evicted between polls or not, the call sent once; the
 * task's input request is a form ask of the run; a cancelled run cancels the task; the fault
 * matrix drops the object's memory after each journaled effect of a run that waits on a task.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import type { CallRecord } from '../../src/host/tool-calls.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import type { TasksLog } from '../support/tasks-mcp.ts';
import { call, getRun, json, testEnv, until } from './app/client.ts';
import { armFault, dropObjects } from './app/test-worker.ts';

vi.setConfig({ testTimeout: 40_000 });

const { origin } = inject('tasksMcp');

/** What the clients of slot `slot` did (the server's log). */
const tasksLog = async (server: string, slot: string): Promise<TasksLog> => (await (await fetch(`${server}/s/${slot}/log`)).json()) as TasksLog;

/** A prompt that asks `before` (when set), calls tasks/job with its args, and returns what it answered. */
const PROMPT = `---
name: job
description: Calls a job its server makes a task.
runvil: 0
uses: [acme/tasks, user-input]
args:
  job: { type: string }
  before: { type: boolean, default: false }
---

# Job

## Call

\`\`\`lua
local who = args.before and tools.call('user-input/ask', { question = 'Who runs the job?' }) or 'nobody'
local ok, out = pcall(tools.call, 'tasks/job', json.decode(args.job))
return who .. ': ' .. (ok and out or ('failed: ' .. tostring(out)))
\`\`\`
`;

/** Serves acme/tasks from slot `slot` of the tasks test server. */
function configure(slot: string): void {
  const parsed = parseDeploymentConfig(`packs:\n  acme/tasks:\n    mcp: { url: "${origin}/s/${slot}/mcp" }\n`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
}

beforeAll(async () => {
  await json(await call('PUT', '/prompts/job', { body: PROMPT }), 201);
});
afterAll(() => replaceDeploymentConfig(null));

// A suggested interval of an hour: no poll is due on its own while a test runs, so each poll is the test's.
const SLOW = { interval: 3_600_000 };

async function start(slot: string, job: object, before = false): Promise<string> {
  configure(slot);
  return (await json<{ run_id: string }>(await call('POST', '/prompts/job/runs', { body: { args: { job: JSON.stringify(job), before } } }), 202)).run_id;
}

const stubOf = (runId: string) => testEnv.RUNS.get(testEnv.RUNS.idFromString(runId)) as unknown as object;

type Storage = {
  storage: {
    setAlarm(at: number): Promise<void>;
    kv: { get(key: string): unknown; put(key: string, value: unknown): void; list(options: { prefix: string }): Iterable<[string, unknown]> };
  };
};

/** The run's call records, read from its storage. */
async function calls(runId: string): Promise<CallRecord[]> {
  return runInDurableObject(stubOf(runId), (_instance: unknown, state: Storage) =>
    [...state.storage.kv.list({ prefix: 'call:' })].map(([, record]) => record as CallRecord),
  );
}

/**
 * Fake time for the polls: makes every task's next poll due now, then runs the run object's
 * alarm (set first: one that was running a moment ago has none set until it ends).
 */
async function pollNow(runId: string): Promise<void> {
  await runInDurableObject(stubOf(runId), async (_instance: unknown, state: Storage) => {
    for (const [key, record] of state.storage.kv.list({ prefix: 'call:' })) {
      const call = record as CallRecord;
      if (call.task && call.state === 'waiting') state.storage.kv.put(key, { ...call, task: { ...call.task, next_poll_at: 0 } });
    }
    await state.storage.setAlarm(Date.now() + 3_600_000);
  });
  expect(await runDurableObjectAlarm(stubOf(runId))).toBe(true);
}

/** The run once it has ended: one not in memory when its task ends is replayed, and reads as suspended until the replay runs. */
const finished = (runId: string) => until(runId, (view) => view.status === 'completed' || view.status === 'failed' || view.status === 'cancelled');

const waitsOnTask = (runId: string) =>
  until(runId, (view) => view.status === 'suspended' && view.pending.some((entry) => (entry as { kind?: string }).kind === 'tool'));

describe('a call its MCP server makes a task, in the run object', () => {
  it("suspends the run on the task, which the alarm polls; the run completes with the task's result, evicted between polls", async () => {
    const runId = await start('w-polls', { polls: 2, ...SLOW });
    const waiting = await waitsOnTask(runId);
    expect(waiting.pending).toEqual([expect.objectContaining({ kind: 'tool', tool: 'tasks/job' })]);
    const [record] = await calls(runId);
    expect(record).toMatchObject({ state: 'waiting', task: { pack: 'acme/tasks', task_id: expect.stringMatching(/^task-/), polls: 0 } });

    await pollNow(runId);
    expect(Object.values((await tasksLog(origin, 'w-polls')).polls)).toEqual([1]);
    expect((await getRun(runId)).status).toBe('suspended');

    await dropObjects();
    await pollNow(runId);
    await dropObjects();
    await pollNow(runId);
    expect(await finished(runId)).toMatchObject({ status: 'completed', result: expect.stringContaining('job done after 2 polls') });
    const log = await tasksLog(origin, 'w-polls');
    // Sent once, whatever the evictions; polled three times, by the test's alarms alone.
    expect(log.calls).toBe(1);
    expect(Object.values(log.polls)).toEqual([3]);
    expect((await calls(runId))[0]).toMatchObject({ state: 'done', result: { output: 'job done after 2 polls' } });
  });

  it("asks the task's input request as a form ask of the run, and the answer goes back with tasks/update", async () => {
    const runId = await start('w-asks', { ask: true, ...SLOW });
    await waitsOnTask(runId);
    await pollNow(runId);
    const asking = await until(runId, (view) => view.pending.some((entry) => entry.ask_id !== undefined));
    const ask = asking.pending.find((entry) => entry.ask_id !== undefined)!;
    expect(ask).toMatchObject({ question: 'Who is the report for?', form: { type: 'object', properties: { name: { type: 'string', title: 'Name' } } } });
    await json(await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: { name: 'Ada' } } }), 200);
    for (let i = 0; i < 400 && (await tasksLog(origin, 'w-asks')).updates.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await tasksLog(origin, 'w-asks')).updates[0]!.inputResponses).toEqual({ who: { action: 'accept', content: { name: 'Ada' } } });
    await waitsOnTask(runId);
    await pollNow(runId);
    await pollNow(runId);
    await pollNow(runId);
    expect(await finished(runId)).toMatchObject({ status: 'completed', result: expect.stringContaining('report for Ada') });
  });

  it("asks the task's input request of a run evicted before the poll found it: the alarm replays the run, which asks", async () => {
    const runId = await start('w-asks-evicted', { ask: true, ...SLOW });
    await waitsOnTask(runId);
    await dropObjects();
    await pollNow(runId);
    const asking = await until(runId, (view) => view.pending.some((entry) => entry.ask_id !== undefined));
    const ask = asking.pending.find((entry) => entry.ask_id !== undefined)!;
    expect(ask.question).toBe('Who is the report for?');
    await dropObjects();
    await json(await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: { name: 'Eve' } } }), 200);
    for (let i = 0; i < 400 && (await tasksLog(origin, 'w-asks-evicted')).updates.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    await waitsOnTask(runId);
    await pollNow(runId);
    await pollNow(runId);
    await pollNow(runId);
    expect(await finished(runId)).toMatchObject({ status: 'completed', result: expect.stringContaining('report for Eve') });
    const log = await tasksLog(origin, 'w-asks-evicted');
    expect(log.calls).toBe(1);
    expect(log.updates.map((update) => update.inputResponses)).toEqual([{ who: { action: 'accept', content: { name: 'Eve' } } }]);
  });

  it('cancels the task when the run is cancelled', async () => {
    const runId = await start('w-cancel', { forever: true, ...SLOW });
    await waitsOnTask(runId);
    await json(await call('POST', `/runs/${runId}/cancel`, { body: { reason: 'not needed' } }), 200);
    // The alarm right after the run's end asks the server to cancel the task, once.
    for (let i = 0; i < 200 && (await tasksLog(origin, 'w-cancel')).cancels.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await tasksLog(origin, 'w-cancel')).cancels).toHaveLength(1);
    expect((await calls(runId))[0]).toMatchObject({ state: 'closed', task: { cancel_sent: true } });
  });

  it("fails the call past the Pack's timeout with a tool error, and cancels the task that never ends", async () => {
    const runId = await start('w-forever', { forever: true, ...SLOW });
    await waitsOnTask(runId);
    await pollNow(runId);
    // Fake time: the call's deadline passes, and the alarm runs.
    await runInDurableObject(stubOf(runId), (_instance: unknown, state: Storage) => {
      for (const [key, record] of state.storage.kv.list({ prefix: 'call:' }))
        state.storage.kv.put(key, { ...(record as CallRecord), deadline: new Date(0).toISOString() });
    });
    await runDurableObjectAlarm(stubOf(runId));
    expect((await finished(runId)).result).toContain(
      "failed: tool call failure: tasks/job: the MCP server's task did not end within 3600 s (the Pack's timeout); it was cancelled",
    );
    for (let i = 0; i < 200 && (await tasksLog(origin, 'w-forever')).cancels.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await tasksLog(origin, 'w-forever')).cancels).toHaveLength(1);
    expect((await calls(runId))[0]).toMatchObject({ state: 'expired', task: { cancel_sent: true } });
  });

  it('ends the run with Limit when the task ends with a result far past the cap on one output', async () => {
    const runId = await start('w-huge', { attack: 'huge-result', polls: 0, ...SLOW });
    await waitsOnTask(runId);
    await pollNow(runId);
    const view = await finished(runId);
    expect(view.status).toBe('failed');
    expect(view.error).toMatchObject({
      kind: 'Limit',
      message: expect.stringContaining('the tool tasks/job of the Pack acme/tasks answered more than the cap'),
    });
  });

  it("fails the call with the server's own words when tasks/get answers garbage", async () => {
    const runId = await start('w-garbage', { attack: 'garbage', ...SLOW });
    await waitsOnTask(runId);
    await pollNow(runId);
    expect((await finished(runId)).result).toContain(
      "failed: tool call failure: tasks/job: the MCP server's task could not be followed: tasks/get answered something that is not a task",
    );
  });
});

describe('the fault matrix: memory dropped right after each journaled effect of a run waiting on a task', () => {
  // The effects: the ask answered (1), then the call its server made a task, journaled once the task ended (2).
  for (const effect of [1, 2]) {
    it(`after effect ${effect}: the same result, the call sent once`, async () => {
      const slot = `w-fault-${effect}`;
      const fault = armFault(effect);
      const runId = await start(slot, { polls: 1, ...SLOW }, true);
      const asking = await until(runId, (view) => view.pending.length > 0);
      await json(await call('POST', `/runs/${runId}/asks/${asking.pending[0]!.ask_id}`, { body: { answer: 'Ada' } }), 200);
      if (effect === 2) {
        await waitsOnTask(runId);
        await pollNow(runId);
        await pollNow(runId);
      }
      await fault;
      await dropObjects();
      if (effect === 1) {
        await waitsOnTask(runId);
        await pollNow(runId);
        await pollNow(runId);
      }
      const view = await finished(runId);
      expect(view.status).toBe('completed');
      expect(view.result).toMatch(/^Ada: /);
      expect(view.result).toContain('job done after 1 polls');
      expect((await tasksLog(origin, slot)).calls).toBe(1);
    });
  }
});
