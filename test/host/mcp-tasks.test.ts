/**
 * MCP server tasks (the tasks extension, 2026-07-28) through an MCP Pack on one process's Host
 * (`runvil run`'s way: the call polls on a timer). Against the tasks test server
 * (test/support/tasks-mcp-server.mjs, the SDK's v2 server, a process on loopback): a call the
 * server makes a task ends with the task's result after several polls, each at the server's
 * pace (the server counts them); a task's input request is a form ask of the run, answered
 * with tasks/update; a cancelled run cancels the task; a task past the Pack's timeout fails
 * the call with a tool error and is cancelled. Hostile servers: a task that never ends, poll
 * intervals of 0 and of days, a huge or changing task id, tasks/get answering garbage, a
 * result far past the output cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../src/json/json.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import type { AskContext, Operator, OperatorAnswer } from '../../src/host/operator.ts';
import { snapshotPacks, snapshotPacksToPacks } from '../../src/host/remote/configured-packs.ts';
import { nextPollAt, pollDelay, POLLS_BEFORE_BACKOFF, TASK_POLL_CEILING_MS, TASK_POLL_FLOOR_MS } from '../../src/host/remote/mcp/mcp-tasks.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import { newPlatform } from '../engine/helpers.ts';
import { startTasksMcpServer, type TasksMcpServer } from '../support/tasks-mcp.ts';

let server: TasksMcpServer;
beforeAll(async () => {
  server = await startTasksMcpServer();
});
afterAll(() => server?.stop());

function promptCalling(args: Json) {
  const lua = `local ok, out = pcall(tools.call, 'tasks/job', json.decode(${JSON.stringify(JSON.stringify(args))}))\nreturn ok and out or ('failed: ' .. tostring(out))`;
  const parsed = parsePrompt(
    `---\nname: job\ndescription: Calls job.\nrunvil: 0\nuses: [acme/tasks]\n---\n\n# Job\n\n## Call\n\n\`\`\`lua\n${lua}\n\`\`\`\n`,
    'job.md',
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.prompt;
}

/** Runs one call of `job` with `args` on slot `slot`, asks answered by `operator`; the output without its untrusted envelope, or the run's error. */
async function run(slot: string, args: Json, options: { operator?: Operator; timeoutSeconds?: number; signal?: AbortSignal } = {}): Promise<string> {
  clearMcpToolListCache();
  const prompt = promptCalling(args);
  const parsed = parseDeploymentConfig(`packs:\n  acme/tasks:\n    mcp: { url: "${server.url(slot)}" }\n    timeout: ${options.timeoutSeconds ?? 60}\n`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  // The Pack as a run keeps it: runvil.yaml's timeout: travels with its snapshot.
  const [pack] = snapshotPacksToPacks(await snapshotPacks(parsed.config, prompt, {}), {});
  const base = fixtureHost({}, [], []);
  const operator = options.operator ?? { ask: async () => ({ ok: false, message: 'nobody answers' }) as OperatorAnswer };
  try {
    const outcome = await runOnHost(
      await newPlatform(),
      { ...base, operator, packs: [...base.packs, pack!] },
      { prompt, ...(options.signal ? { signal: options.signal } : {}) },
    );
    if (outcome.status !== 'completed') return `${outcome.status}: ${outcome.error.message}`;
    return /<untrusted_input_[0-9a-f]+>\n([^]*)\n<\/untrusted_input_/.exec(outcome.result)?.[1] ?? outcome.result;
  } finally {
    await pack!.dispose();
  }
}

describe('a call its MCP server makes a task', () => {
  it("ends with the task's result after several polls, one per answer the server gives", async () => {
    expect(await run('polls', { polls: 3, interval: 1000 })).toBe('job done after 3 polls');
    const log = await server.log('polls');
    // Sent once; polled until the task ended, and not once more.
    expect(log.calls).toBe(1);
    expect(Object.values(log.polls)).toEqual([4]);
    expect(log.cancels).toEqual([]);
  });

  it("asks the task's input request as a form ask, and sends the answer with tasks/update", async () => {
    const asked: AskContext[] = [];
    const operator: Operator = { ask: async (context) => (asked.push(context), { ok: true, text: '{"name":"Ada"}' }) };
    expect(await run('asks', { ask: true, interval: 1000 }, { operator })).toBe('report for Ada');
    expect(asked.map(({ question, form, part }) => ({ question, form, part }))).toEqual([
      { question: 'Who is the report for?', form: { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] }, part: 0 },
    ]);
    expect((await server.log('asks')).updates.map((update) => update.inputResponses)).toEqual([{ who: { action: 'accept', content: { name: 'Ada' } } }]);
  });

  it('sends decline when the operator declines the form', async () => {
    const operator: Operator = { ask: async () => ({ ok: true, text: 'decline' }) };
    expect(await run('declines', { ask: true, interval: 1000 }, { operator })).toBe('decline');
  });

  it('cancels the task when the run is cancelled', async () => {
    const controller = new AbortController();
    const ran = run('cancel', { forever: true, interval: 1000 }, { signal: controller.signal });
    await until(async () => Object.values((await server.log('cancel')).polls)[0] === 2);
    controller.abort('the operator cancelled the run');
    expect(await ran).toBe('failed: the run was cancelled: the operator cancelled the run');
    // The call sends tasks/cancel as the run ends.
    await until(async () => (await server.log('cancel')).cancels.length === 1);
  });

  it("fails the call past the Pack's timeout, and cancels the task", async () => {
    expect(await run('deadline', { forever: true, interval: 1000 }, { timeoutSeconds: 2 })).toBe(
      "failed: tool call failure: tasks/job: the MCP server's task did not end within 2 s (the Pack's timeout); it was cancelled",
    );
    expect((await server.log('deadline')).cancels).toHaveLength(1);
  });
});

describe('hostile task servers', () => {
  it('a task id past 256 characters is not followed', async () => {
    expect(await run('huge-id', { attack: 'huge-id' })).toBe(
      'failed: tool call failure: tasks/job: the MCP server answered with a task Runvil cannot follow: its task id is 100000 characters long (at most 256 are kept)',
    );
  });

  it('tasks/get answering with another task fails the call', async () => {
    expect(await run('other-id', { attack: 'other-id', interval: 1000 })).toBe(
      "failed: tool call failure: tasks/job: the MCP server's task could not be followed: tasks/get answered with another task",
    );
  });

  it('tasks/get answering no task fails the call', async () => {
    expect(await run('garbage', { attack: 'garbage', interval: 1000 })).toBe(
      "failed: tool call failure: tasks/job: the MCP server's task could not be followed: tasks/get answered something that is not a task (an object with no task status)",
    );
  });

  it('a malformed task answer fails the call', async () => {
    expect(await run('bad-task', { attack: 'bad-task' })).toMatch(
      /^failed: tool call failure: tasks\/job: the MCP server did not answer \(it answered with a task that is not one/,
    );
  });

  it('a result far past the output cap ends the run with Limit', async () => {
    expect(await run('huge-result', { attack: 'huge-result', polls: 0, interval: 1000 })).toMatch(
      /^failed: the tool tasks\/job of the Pack acme\/tasks answered more than the cap/,
    );
  });

  it("a failed task's error is the call's", async () => {
    expect(await run('failed', { attack: 'failed', polls: 0, interval: 1000 })).toBe(
      "failed: tool call failure: tasks/job: the MCP server's task failed: the printer caught fire",
    );
  });

  it('a poll interval of 0 is polled at the floor, and still ends', async () => {
    expect(await run('zero', { polls: 2, interval: 0 })).toBe('job done after 2 polls');
    expect(Object.values((await server.log('zero')).polls)).toEqual([3]);
  });
});

describe('the pace of polls', () => {
  it('holds an interval of 0, a negative one or none to the floor and a huge one to the ceiling', () => {
    for (const poll_ms of [0, -5, 1, 999]) expect(pollDelay({ poll_ms, polls: 0 })).toBe(TASK_POLL_FLOOR_MS);
    for (const poll_ms of [TASK_POLL_CEILING_MS + 1, 86_400_000 * 30, Number.MAX_SAFE_INTEGER])
      expect(pollDelay({ poll_ms, polls: 0 })).toBe(TASK_POLL_CEILING_MS);
    expect(pollDelay({ poll_ms: 5_000, polls: 3 })).toBe(5_000);
    expect(pollDelay({ poll_ms: null, polls: 0 })).toBeGreaterThanOrEqual(TASK_POLL_FLOOR_MS);
  });

  it('backs off after POLLS_BEFORE_BACKOFF polls, doubling up to the ceiling', () => {
    expect(pollDelay({ poll_ms: 1_000, polls: POLLS_BEFORE_BACKOFF })).toBe(1_000);
    expect(pollDelay({ poll_ms: 1_000, polls: POLLS_BEFORE_BACKOFF + 1 })).toBe(2_000);
    expect(pollDelay({ poll_ms: 1_000, polls: POLLS_BEFORE_BACKOFF + 3 })).toBe(8_000);
    expect(pollDelay({ poll_ms: 1_000, polls: POLLS_BEFORE_BACKOFF + 1_000 })).toBe(TASK_POLL_CEILING_MS);
  });

  it('never schedules a poll past the deadline, however long the server asks to wait', () => {
    expect(nextPollAt({ poll_ms: 86_400_000, polls: 0 }, 1_000, 31_000)).toBe(31_000);
    expect(nextPollAt({ poll_ms: 1_000, polls: 0 }, 1_000, 31_000)).toBe(2_000);
  });
});

async function until(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('never happened');
}
