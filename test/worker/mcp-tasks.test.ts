/**
 * The tasks extension (2026-07-28): a caller that declares it gets a run that outlives the
 * request as a task, follows it with tasks/get, answers its asks with tasks/update, and
 * cancels it with tasks/cancel; each method needs its scope.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, getRun, json } from './app/client.ts';
import { TWO_ASKS } from './mcp/mcp-prompts.ts';
import { rawCallTool, rawRequest } from './mcp/mcp-raw.ts';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const answer = (key: string, text: string) => ({ [key]: { action: 'accept', content: { answer: text } } });

beforeAll(async () => {
  await json(await call('PUT', '/prompts/two-asks', { body: TWO_ASKS }), 201);
});

/** Polls tasks/get until `done` holds (bounded). */
async function taskUntil(taskId: string, done: (task: any) => boolean): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const task = (await rawRequest('tasks/get', { taskId }, { capabilities: TASKS })).result;
    if (done(task)) return task;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`task ${taskId} never got there`);
}

describe('a caller that takes tasks but cannot be asked now', () => {
  it("gets the run as a task, its asks as the task's input requests, answers them with tasks/update, and reads the result", async () => {
    const created = await rawCallTool('two-asks', {}, {}, { capabilities: TASKS });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required', pollIntervalMs: 1000, ttlMs: null });
    const taskId = created.result.taskId as string;
    expect((await getRun(taskId)).status).toBe('suspended');

    const first = await taskUntil(taskId, (task) => task.status === 'input_required');
    const [key] = Object.keys(first.inputRequests);
    expect(first.inputRequests[key!]).toMatchObject({ method: 'elicitation/create', params: { message: 'Who owns the launch?' } });
    expect((await rawRequest('tasks/update', { taskId, inputResponses: answer(key!, 'Ada') }, { capabilities: TASKS })).result).toBeDefined();

    const second = await taskUntil(taskId, (task) => task.status === 'input_required' && !(key! in task.inputRequests));
    const [key2] = Object.keys(second.inputRequests);
    expect(second.inputRequests[key2!].params.requestedSchema.properties.answer.enum).toEqual(['today', 'tomorrow']);
    expect((await rawRequest('tasks/update', { taskId, inputResponses: answer(key2!, 'yesterday') }, { capabilities: TASKS })).error).toMatchObject({
      code: -32602,
      data: { choices: ['today', 'tomorrow'] },
    });
    await rawRequest('tasks/update', { taskId, inputResponses: answer(key2!, 'today') }, { capabilities: TASKS });

    const done = await taskUntil(taskId, (task) => task.status === 'completed');
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'Ada ships today' }] });
  });

  it('cancels the run with tasks/cancel', async () => {
    const created = await rawCallTool('two-asks', {}, {}, { capabilities: TASKS });
    const taskId = created.result.taskId as string;
    expect((await rawRequest('tasks/cancel', { taskId }, { capabilities: TASKS })).result).toMatchObject({ taskId, status: 'cancelled' });
    expect((await getRun(taskId)).status).toBe('cancelled');
  });

  it('refuses an unknown task, and a key without the scope each method needs', async () => {
    expect((await rawRequest('tasks/get', { taskId: 'f'.repeat(64) }, { capabilities: TASKS })).error).toMatchObject({ code: -32602 });
    const created = await rawCallTool('two-asks', {}, {}, { capabilities: TASKS });
    const taskId = created.result.taskId as string;
    const { key } = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'other', scopes: ['runs:start:greet'] } }), 201);
    const options = { capabilities: TASKS, token: key };
    expect((await rawRequest('tasks/get', { taskId }, options)).error).toMatchObject({ code: -32003, data: { scope: 'runs:start:two-asks' } });
    expect((await rawRequest('tasks/update', { taskId, inputResponses: {} }, options)).error).toMatchObject({
      code: -32003,
      data: { scope: 'asks:answer:two-asks' },
    });
    expect((await rawRequest('tasks/cancel', { taskId }, options)).error).toMatchObject({ code: -32003, data: { scope: 'runs:start:two-asks' } });
    expect((await getRun(taskId)).status).toBe('suspended');
  });
});
