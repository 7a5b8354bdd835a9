/**
 * HTTP tool services in workerd (DESIGN.md Part 2): a call is a signed POST the service
 * verifies with the `standardwebhooks` package; 200 answers now, 202 makes the call wait
 * (its chain only) until the service posts the result to the callback URL with the call's
 * own token; the run is suspended only when nothing else can run; a waiting call survives
 * the object's eviction and a crash, is never sent twice once answered, and fails at its
 * deadline. Bad callbacks change nothing.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { PendingToolCall, RunView, StreamEvent } from '../../src/worker/run-object/run-view.ts';
import { call, json, testEnv, untilServed } from './app/client.ts';
import { performedBy } from './app/test-host.ts';
import { armFault, dropObjects } from './app/test-worker.ts';
import { received, receivedBy, unsigned } from './app/tool-service.ts';

vi.setConfig({ testTimeout: 30_000 });

const prompt = (name: string, uses: string, body: string) => `---
name: ${name}
description: A test prompt.
runvil: 0
uses: [${uses}]
args:
  tool: { type: string, default: start }
  service: { type: string, default: api }
---
# ${name}

${body}`;
const lua = (code: string) => '```lua\n' + code + '\n```\n';

/** Calls one acme/deploy tool (by `tool`) and reports how the call ended. */
const DEPLOY = prompt(
  'deploy',
  'acme/deploy',
  `## Go
${lua(`local ok, out = pcall(tools.call, 'deploy/' .. args.tool, { service = args.service })
return (ok and 'ok: ' or 'failed: ') .. tostring(out)`)}`,
);

/** Asks the operator, then waits on deploy/start: an ask token and a call token in one run. */
const ASK_DEPLOY = prompt(
  'ask-deploy',
  'user-input, acme/deploy',
  `## Go
${lua(`local who = tools.call('user-input/ask', { question = 'Who deploys?' })
return who .. ': ' .. tools.call('deploy/start', { service = 'api' })`)}`,
);

/** Task 0.0 waits on deploy/start while task 0.1 ticks the counter twice (each a timer's while). */
const PARALLEL = prompt(
  'parallel',
  'acme/deploy, acme/counter',
  `## Main
${lua(`local deploying = tasks.spawn('## Deploy')
local working = tasks.spawn('## Work')
local worked = tasks.await(working)
local deployed = tasks.await(deploying)
return worked .. '|' .. deployed`)}
## Deploy
${lua(`return tools.call('deploy/start', { service = 'web' })`)}
## Work
${lua(`local a = tools.call('counter/tick', { label = 'w1', wait_ms = 20 })
local b = tools.call('counter/tick', { label = 'w2', wait_ms = 20 })
return a .. ',' .. b`)}`,
);

type View = Omit<RunView, 'pending'> & { pending: (PendingToolCall | { kind: 'ask' })[] };

const getView = async (runId: string): Promise<View> => json<View>(await call('GET', `/runs/${runId}`), 200);
/** How many journal entries the run's storage holds, read without a request that would wake the run. */
async function journalLength(runId: string): Promise<number> {
  const stub = testEnv.RUNS.get(testEnv.RUNS.idFromString(runId));
  return runInDurableObject(
    stub,
    async (_instance: unknown, state: { storage: { kv: { get(key: string): { journal: number } } } }) => state.storage.kv.get('progress').journal,
  );
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(runId: string, done: (view: View) => boolean): Promise<View> {
  for (let i = 0; i < 800; i++) {
    const response = await call('GET', `/runs/${runId}`);
    if (response.status === 200) {
      const view = (await response.json()) as View;
      if (done(view)) return view;
    }
    await sleep(10);
  }
  throw new Error(`run ${runId} never got there: ${JSON.stringify(await getView(runId))}`);
}

async function start(name: string, args: object = {}): Promise<string> {
  return (await json<{ run_id: string }>(await call('POST', `/prompts/${name}/runs`, { body: { args } }), 202)).run_id;
}

/** The call the service received for `runId` (its first try, or the one given). */
async function receivedCall(runId: string, count = 1) {
  for (let i = 0; i < 1000 && receivedBy(runId).length < count; i++) await sleep(5);
  const calls = receivedBy(runId);
  expect(calls.length).toBeGreaterThanOrEqual(count);
  return calls[count - 1]!;
}

/** Posts a result to a call's callback; `token` undefined sends the API token, null none. */
const postResult = (runId: string, callId: string, body: unknown, token?: string | null) =>
  call('POST', `/runs/${runId}/tool-results/${callId}`, { body, token });

const events = async (runId: string): Promise<StreamEvent[]> => {
  const text = await (await call('GET', `/runs/${runId}/events`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as StreamEvent);
};

beforeAll(async () => {
  await json(await call('PUT', '/prompts/deploy', { body: DEPLOY }), 201);
  await json(await call('PUT', '/prompts/parallel', { body: PARALLEL }), 201);
  await json(await call('PUT', '/prompts/ask-deploy', { body: ASK_DEPLOY }), 201);
});

describe('tokens of one run', () => {
  it('keep their purpose: an ask token delivers no tool result, a callback token answers no ask', async () => {
    const runId = await start('ask-deploy');
    const asking = await until(runId, (view) => view.status === 'suspended');
    const ask = asking.pending[0] as unknown as { ask_id: string; token: string };
    await json(await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: 'Ada' }, token: ask.token }), 200);
    await until(runId, (view) => view.status === 'suspended' && view.pending[0]?.kind === 'tool');
    const { body } = await receivedCall(runId);
    expect((await postResult(runId, body.call_id, { output: 'x' }, ask.token)).status).toBe(401);
    expect((await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: 'Ada' }, token: body.callback_token })).status).toBe(401);
    // The route of one is not the other's: a call id on the ask route, an ask id on the result route.
    expect((await call('POST', `/runs/${runId}/asks/${body.call_id}`, { body: { answer: 'x' }, token: body.callback_token })).status).toBe(401);
    expect((await postResult(runId, ask.ask_id, { output: 'x' }, ask.token)).status).toBe(401);
    await json(await postResult(runId, body.call_id, { output: { not: 'text' } }, body.callback_token), 200);
    // deploy/start is a plain tool: an output that is not text is the call's failure, and the run's.
    const done = await until(runId, (view) => view.status !== 'suspended' && view.status !== 'running');
    expect(done).toMatchObject({
      status: 'failed',
      error: { kind: 'Tool', message: expect.stringContaining("deploy/start: the tool service's output is not text (a plain tool's output is a string)") },
    });
  });
});

describe('a call whose service answers 202', () => {
  let runId: string;
  let waiting: View;
  let callId: string;
  let token: string;

  beforeAll(async () => {
    runId = await start('deploy');
    waiting = await until(runId, (view) => view.status !== 'running');
    const got = await receivedCall(runId);
    callId = got.body.call_id;
    token = got.body.callback_token;
  });

  it("is a POST signed with the Pack's secret, webhook-id the call id, with the documented body", async () => {
    const got = await receivedCall(runId);
    expect(got.webhookId).toBe(callId);
    expect(callId).toMatch(/^tc_[0-9a-f]{32}$/);
    expect(got.body).toEqual({
      type: 'tool.call',
      run_id: runId,
      call_id: callId,
      tool: 'deploy/start',
      arguments: { service: 'api' },
      callback_url: `https://runvil.test/runs/${runId}/tool-results/${callId}`,
      callback_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      deadline: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(Date.parse(got.body.deadline) - Date.now()).toBeGreaterThan(890_000);
    expect(unsigned).toEqual([]);
  });

  it('suspends the run with the call in pending, kind "tool"', () => {
    expect(waiting.status).toBe('suspended');
    expect(waiting.pending).toEqual([
      { kind: 'tool', call_id: callId, tool: 'deploy/start', called_at: expect.any(String), deadline: receivedBy(runId)[0]!.body.deadline },
    ]);
  });

  it('refuses a wrong token before the run is touched (401), in every variant', async () => {
    const other = await start('deploy', { service: 'other' });
    const otherToken = (await receivedCall(other)).body.callback_token;
    for (const bad of [null, '', 'x', token.toUpperCase(), `${token}0`, token.slice(1), otherToken, 'test-api-token '.repeat(3)]) {
      const response = await postResult(runId, callId, { output: 'evil' }, bad);
      expect(response.status, String(bad)).toBe(401);
    }
    // The token of this call opens no other call id and no other run.
    expect((await postResult(runId, `tc_${'0'.repeat(32)}`, { output: 'x' }, token)).status).toBe(401);
    expect((await postResult(other, callId, { output: 'x' }, token)).status).toBe(401);
    expect(await getView(runId)).toEqual(waiting);
    await call('POST', `/runs/${other}/cancel`, { body: {} });
  });

  it('refuses a body that is not a result (400), changing nothing', async () => {
    const cases: [unknown, string][] = [
      ['{"output": ', 'not valid JSON'],
      ['[1,2]', 'must be a JSON object'],
      ['"done"', 'must be a JSON object'],
      [{}, 'exactly one of them'],
      [{ output: 'a', error: 'b' }, 'exactly one of them'],
      [{ error: 42 }, '`error` must be a non-empty string'],
      [{ error: '' }, '`error` must be a non-empty string'],
      [{ output: 'a', status: 'ok' }, 'unknown field `status`'],
    ];
    for (const [body, message] of cases) {
      const response = await postResult(runId, callId, body, token);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain(message);
    }
    const typed = await call('POST', `/runs/${runId}/tool-results/${callId}`, {
      body: '{"output":"x"}',
      token,
      headers: { 'content-type': 'application/xml' },
    });
    expect(typed.status).toBe(415);
    expect(await getView(runId)).toEqual(waiting);
  });

  it('answers 404 for an unknown call or run to the API token', async () => {
    const unknown = await call('POST', `/runs/${runId}/tool-results/tc_${'0'.repeat(32)}`, { body: { output: 'x' } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain('has no tool call');
    expect((await call('POST', `/runs/${'f'.repeat(64)}/tool-results/${callId}`, { body: { output: 'x' } })).status).toBe(404);
    expect(await getView(runId)).toEqual(waiting);
  });

  it("is counted in the run's pending_count in GET /runs", async () => {
    let row: { pending_count: number; status: string } | undefined;
    for (let i = 0; i < 200 && row?.status !== 'suspended'; i++) {
      row = (
        await json<{ runs: { run_id: string; pending_count: number; status: string }[] }>(await call('GET', '/runs?prompt=deploy&limit=100'), 200)
      ).runs.find((entry) => entry.run_id === runId);
      if (row?.status !== 'suspended') await sleep(20);
    }
    expect(row).toMatchObject({ status: 'suspended', pending_count: 1 });
  });

  it('takes the result with the call\'s token, answers only {"accepted": true}, and the run completes with it', async () => {
    expect(await json(await postResult(runId, callId, { output: 'live at v42' }, token), 200)).toEqual({ accepted: true });
    const done = await until(runId, (view) => view.status === 'completed');
    expect(done).toMatchObject({ result: 'ok: live at v42', pending: [] });
    const types = (await events(runId)).map((event) => event.type);
    expect(types.indexOf('tool_call_pending')).toBeLessThan(types.indexOf('run_suspended'));
    expect(types.indexOf('tool_result_received')).toBeLessThan(types.indexOf('run_completed'));
  });

  it('takes the same result again (200), refuses a different one (409), and sent the call once', async () => {
    expect(await json(await postResult(runId, callId, { output: 'live at v42' }, token), 200)).toEqual({ accepted: true });
    const different = await postResult(runId, callId, { output: 'live at v43' }, token);
    expect(different.status).toBe(409);
    expect(((await different.json()) as { error: { message: string } }).error.message).toContain('already has a different result');
    expect(receivedBy(runId)).toHaveLength(1);
  });
});

describe('what a service answers', () => {
  const outcome = async (tool: string) => {
    const runId = await start('deploy', { tool, service: 'api' });
    return { runId, view: await until(runId, (view) => view.status !== 'running') };
  };

  it('200 {"output"}: the output now, with no wait', async () => {
    expect((await outcome('now')).view).toMatchObject({ status: 'completed', result: 'ok: live: api' });
  });

  it('200 {"error"}: a tool failure whose message is the error', async () => {
    expect((await outcome('broken')).view).toMatchObject({ status: 'completed', result: 'failed: tool call failure: deploy failed: api' });
  });

  it('a 4xx: a tool failure naming the status, not tried again', async () => {
    const { runId, view } = await outcome('refuse');
    expect(view).toMatchObject({ status: 'completed', result: 'failed: tool call failure: deploy/refuse: the tool service refused the call (HTTP 404)' });
    expect(receivedBy(runId)).toHaveLength(1);
  });

  it('a 5xx: tried again under the same call id, and a 202 then waits', async () => {
    const { runId, view } = await outcome('flaky');
    expect(view.status).toBe('suspended');
    const calls = receivedBy(runId);
    expect(calls.map((got) => got.tries)).toEqual([1, 2]);
    expect(new Set(calls.map((got) => got.webhookId)).size).toBe(1);
    await call('POST', `/runs/${runId}/cancel`, { body: {} });
  });

  it('a 5xx every time: 3 tries, then a tool failure', async () => {
    const { runId, view } = await outcome('down');
    expect(view).toMatchObject({
      status: 'completed',
      result: 'failed: tool call failure: deploy/down: the tool service failed after 3 tries: it failed with HTTP 503',
    });
    expect(receivedBy(runId)).toHaveLength(3);
  });

  it('a result posted before the 202 is answered: taken, and the call does not wait', async () => {
    expect((await outcome('early')).view).toMatchObject({ status: 'completed', result: 'ok: early: api' });
  });
});

describe('a call that waits holds only its chain', () => {
  it('lets the other task go on to its end, and suspends the run only then', async () => {
    const runId = await start('parallel');
    const waiting = await until(runId, (view) => view.status !== 'running');
    expect(waiting.status).toBe('suspended');
    expect(performedBy(runId)).toEqual(['counter/tick w1', 'counter/tick w2']);
    const { body } = await receivedCall(runId);
    expect(waiting.pending).toEqual([expect.objectContaining({ kind: 'tool', call_id: body.call_id, tool: 'deploy/start' })]);
    await json(await postResult(runId, body.call_id, { output: 'web is live' }, body.callback_token), 200);
    expect(await until(runId, (view) => view.status === 'completed')).toMatchObject({ result: 'tick-w1,tick-w2|web is live' });
    // The call waited while task 0.1 went on; the run suspended once, after 0.1 ended.
    const seen = (await events(runId)).map((event) => `${event.type} ${event.task ?? ''}`.trim());
    expect(seen.indexOf('tool_call_pending 0.0')).toBeLessThan(seen.indexOf('task_completed 0.1'));
    expect(seen.indexOf('task_completed 0.1')).toBeLessThan(seen.indexOf('run_suspended'));
    expect(seen.filter((type) => type === 'run_suspended')).toHaveLength(1);
  });

  it('is abandoned when its task is cancelled: a later result is refused with 409', async () => {
    const runId = await start('parallel');
    await until(runId, (view) => view.status === 'suspended');
    const { body } = await receivedCall(runId);
    await json(await call('POST', `/runs/${runId}/cancel`, { body: {} }), 200);
    const late = await postResult(runId, body.call_id, { output: 'too late' }, body.callback_token);
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: { message: string } }).error.message).toContain('the run has ended (cancelled)');
  });
});

describe('the deadline of a call', () => {
  it('fails the call with "<tool id>: no result within <timeout> s", and a later result gets 409, refused as expired even once the run has ended (as an ask is)', async () => {
    const runId = await start('deploy', { tool: 'quick' });
    const waiting = await until(runId, (view) => view.status !== 'running');
    expect(waiting.pending).toEqual([expect.objectContaining({ kind: 'tool', tool: 'deploy/quick' })]);
    const done = await until(runId, (view) => view.status === 'completed');
    expect(done.result).toBe('failed: tool call failure: deploy/quick: no result within 1 s');
    const { body } = await receivedCall(runId);
    const late = await postResult(runId, body.call_id, { output: 'late' }, body.callback_token);
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: { message: string } }).error.message).toBe(
      `tool call ${body.call_id} is no longer waiting: its deadline passed at ${body.deadline}, so the result is stale`,
    );
  });
});

describe('a run waiting on a tool call, under faults', () => {
  it('evicted while it waits: the result replays it to the end, and the call was sent once', async () => {
    const runId = await start('deploy', { service: 'evicted' });
    await until(runId, (view) => view.status === 'suspended');
    const { body } = await receivedCall(runId);
    await dropObjects();
    await sleep(50);
    expect(await getView(runId)).toMatchObject({ status: 'suspended', pending: [expect.objectContaining({ call_id: body.call_id })] });
    await dropObjects();
    await json(await postResult(runId, body.call_id, { output: 'back' }, body.callback_token), 200);
    expect(await untilServed(runId)).toMatchObject({ status: 'completed', result: 'ok: back' });
    expect(receivedBy(runId)).toHaveLength(1);
  });

  it('evicted after the result was taken but before the run went on: the replay finds the result, and nothing is sent again', async () => {
    const runId = await start('parallel');
    await until(runId, (view) => view.status === 'suspended');
    const { body } = await receivedCall(runId);
    // The call's answer is the journal's next entry: the fault stops the run right after it commits.
    const fault = armFault((await journalLength(runId)) + 1);
    await json(await postResult(runId, body.call_id, { output: 'web is live' }, body.callback_token), 200);
    await fault;
    await dropObjects();
    expect(await untilServed(runId)).toMatchObject({ status: 'completed', result: 'tick-w1,tick-w2|web is live' });
    expect(receivedBy(runId)).toHaveLength(1);
    expect(performedBy(runId)).toEqual(['counter/tick w1', 'counter/tick w2']);
  });

  it('dropped while the call is being sent (no answer yet): sent again under the same call id, and the 202 then waits', async () => {
    const runId = await start('deploy', { tool: 'hang' });
    const first = await receivedCall(runId);
    await dropObjects();
    // The watchdog (or this request) replays the run, which finds the call still `sending`.
    const second = await receivedCall(runId, 2);
    expect(second.webhookId).toBe(first.webhookId);
    expect(second.body.callback_token).toBe(first.body.callback_token);
    const waiting = await until(runId, (view) => view.status === 'suspended');
    expect(waiting.pending).toEqual([expect.objectContaining({ call_id: first.body.call_id })]);
    await json(await postResult(runId, first.body.call_id, { error: 'rolled back' }, first.body.callback_token), 200);
    expect(await untilServed(runId)).toMatchObject({ status: 'completed', result: 'failed: tool call failure: rolled back' });
  });

  it('evicted with the result in before its deadline, the run is not failed by the deadline afterwards', async () => {
    const runId = await start('deploy', { tool: 'quick' });
    await until(runId, (view) => view.status === 'suspended');
    const { body } = await receivedCall(runId);
    await dropObjects();
    await json(await postResult(runId, body.call_id, { output: 'in time' }, body.callback_token), 200);
    expect(await untilServed(runId)).toMatchObject({ status: 'completed', result: 'ok: in time' });
    await sleep(1200);
    expect(await getView(runId)).toMatchObject({ status: 'completed', result: 'ok: in time' });
  });
});

// Keeps the received log from growing without bound across watch-mode reruns.
beforeAll(() => void received.splice(0));
