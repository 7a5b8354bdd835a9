/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) for runs that outlive
 * the request: a caller that declares the extension gets, instead of the run as it stands,
 * a task whose id is the run's id. `tasks/get` answers the run as a task (working,
 * input_required with its pending asks as elicitations, completed with the call's result,
 * cancelled), `tasks/update` answers its asks with the caller's input responses (through
 * the run object, first answer wins; a response for an ask no longer pending is ignored, as
 * the extension says), `tasks/cancel` cancels the run. Each method names the scope it needs.
 */
import { fromJsonSchema, inputRequired, inputResponse, ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';
import type { Env } from '../env.ts';
import { readRunRecord } from '../outbox/run-store-kv.ts';
import { runObject } from '../run-object/run-ids.ts';
import type { AskInfo, ObjectView } from '../run-object/run-view.ts';
import { answerOf, askKey, elicitationOf } from './ask-question.ts';
import { completedResult, errorResult, RUN_ID_META } from './call-result.ts';
import { forbidden, holds, READ_SCOPE, startScope, type Principal } from './mcp-caller.ts';
import { taskOf } from './run-task.ts';

export { TASKS_EXTENSION } from './run-task.ts';

/** `tasks/get`'s answer: the task with its pending asks as input requests, or its result. */
export function detailedTask(view: ObjectView): Record<string, unknown> {
  const task = taskOf(view);
  if (task.status === 'input_required') {
    const asks = view.pending.filter((entry): entry is AskInfo => entry.kind === 'ask');
    return { ...task, inputRequests: Object.fromEntries(asks.map((ask) => [askKey(ask.ask_id), inputRequired.elicit(elicitationOf(ask))])) };
  }
  if (view.status === 'completed') return { ...task, result: { ...completedResult(view.result ?? ''), _meta: { [RUN_ID_META]: view.run_id } } };
  if (view.status === 'failed') return { ...task, result: { ...errorResult(view.error?.message ?? 'the run failed'), _meta: { [RUN_ID_META]: view.run_id } } };
  return task;
}

const validator = new CfWorkerJsonSchemaValidator();
const TASK_ID = fromJsonSchema<{ taskId: string }>({ type: 'object', properties: { taskId: { type: 'string' } }, required: ['taskId'] }, validator);
/** Registers `tasks/get`, `tasks/update` and `tasks/cancel` on `server`; `answeredBy` names the caller in answers. */
export function registerTasks(server: Server, env: Env, principal: Principal, answeredBy: () => string): void {
  /** The run of a task the caller may see, or the protocol's error for a task it cannot. */
  const runOf = async (taskId: string): Promise<ObjectView> => {
    let view: ObjectView | null;
    try {
      view = await runObject(env, taskId).view();
    } catch {
      throw unknownTask(taskId);
    }
    if (view === null) {
      const record = await readRunRecord(env.RUNVIL_KV, taskId);
      if (!record) throw unknownTask(taskId);
      view = { ...record, pending: [] };
    }
    return view;
  };

  server.setRequestHandler('tasks/get', { params: TASK_ID }, async ({ taskId }) => {
    const view = await runOf(taskId);
    if (!holds(principal, READ_SCOPE) && !holds(principal, startScope(view.prompt))) throw forbidden(startScope(view.prompt));
    return { resultType: 'complete', ...detailedTask(view) };
  });

  // The SDK lifts `inputResponses` out of the params (as for a retried call) into the context.
  server.setRequestHandler('tasks/update', { params: TASK_ID }, async ({ taskId }, ctx) => {
    const inputResponses = ctx.mcpReq.inputResponses ?? {};
    const view = await runOf(taskId);
    const scope = `asks:answer:${view.prompt}`;
    if (!holds(principal, scope)) throw forbidden(scope);
    for (const entry of view.pending) {
      if (entry.kind !== 'ask') continue;
      const response = inputResponse(inputResponses, askKey(entry.ask_id));
      if (response.kind !== 'elicit' || response.action !== 'accept') continue;
      const answer = answerOf(entry, response.content);
      if (!answer.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, answer.message);
      const outcome = await runObject(env, taskId).answer(entry.ask_id, answer.answer, answeredBy(), { waitMs: 0 });
      if (!outcome.ok && outcome.reason === 'not-a-choice')
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, outcome.message, { choices: outcome.choices ?? [] });
      if (!outcome.ok && outcome.reason === 'not-a-fit')
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, outcome.message, outcome.field !== undefined ? { field: outcome.field } : {});
    }
    return {};
  });

  server.setRequestHandler('tasks/cancel', { params: TASK_ID }, async ({ taskId }) => {
    const view = await runOf(taskId);
    const scope = startScope(view.prompt);
    if (!holds(principal, scope)) throw forbidden(scope);
    // A run that already ended stays as it ended; the answer is the task as it stands.
    await runObject(env, taskId).cancel('cancelled by the MCP caller (tasks/cancel)');
    return { resultType: 'complete', ...taskOf(await runOf(taskId)) };
  });
}

function unknownTask(taskId: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task: ${taskId.slice(0, 100)}`);
}
