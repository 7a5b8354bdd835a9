/**
 * A tool call its MCP server turned into a task (mcp-tasks.ts), as the calling chain sees it:
 * the call waits on the task until it ends, and its result is the call's. Where the Host
 * polls the tasks of waiting calls itself (the Worker: the run object's alarm, so no Worker
 * waits in a loop), the call is journaled in the run's call ledger by its task id and waits
 * there like a call whose result is posted, durably: a run evicted between polls finds it on
 * its replay, and is not sent again. Elsewhere (`runvil run`, one process) the call polls on
 * a timer, at the same pace.
 *
 * A task's input requests (`input_required`) become form asks of the run, one per request,
 * numbered within the call's effect after the asks before them; the answers go back with
 * `tasks/update`, and the polls go on. The call's deadline is its Pack's timeout: past it the
 * call fails, and the task is cancelled (`tasks/cancel`), as it is when the run or the task
 * that called is cancelled.
 */
import type { ToolContext, ToolOutcome } from '../../pack.ts';
import { callIdOf, type CallEnd, type CallRecord, type FollowedTask, type ToolResult } from '../../tool-calls.ts';
import { outputCapExceeded, TOOL_OUTPUT_BYTES } from '../../tool-output-cap.ts';
import { askForm } from './mcp-elicitation.ts';
import { cancelTask, followedTask, pollTask, taskIdProblem, updateTask, type TaskAnswer, type TaskReach } from './mcp-tasks.ts';

/** How long a call its server made a task may wait on it when its Pack says nothing: one hour. */
export const DEFAULT_TASK_TIMEOUT_SECONDS = 3_600;
/** The most asks one task may put to the operator: a server cannot keep a run asking for ever. */
export const MAX_TASK_ASKS = 20;

/** A task call: the Pack, the tool and its server, and how long it may take. */
export interface TaskCall extends TaskReach {
  /** The Pack's configured name, such as `acme/reports`. */
  pack: string;
  timeoutSeconds: number;
  clock?: () => number;
}

/** The message of a task call past its deadline. */
export const taskTimedOut = (toolId: string, seconds: number): string =>
  `${toolId}: the MCP server's task did not end within ${seconds} s (the Pack's timeout); it was cancelled`;

/**
 * The outcome of a call whose record the ledger keeps already (a replay of a run whose call
 * waits on a task): it waits again, never sending the call anew. Null when the call has no
 * task record (it is sent as usual).
 */
export async function resumeTaskCall(call: TaskCall, context: ToolContext): Promise<ToolOutcome | null> {
  const ledger = context.calls;
  if (!ledger?.pollsTasks || !ledger.find || !context.effect) return null;
  const record = ledger.find(await callIdOf(context.runId, context.effect));
  if (!record?.task) return null;
  return waitOnLedger(call, context, record.call_id);
}

/** Follows the task `answer` the server answered the call with, until the call's result. */
export async function followTaskCall(call: TaskCall, answer: TaskAnswer, context: ToolContext): Promise<ToolOutcome> {
  const problem = taskIdProblem(answer.taskId);
  if (problem !== null) return { ok: false, message: `${call.toolId}: the MCP server answered with a task Runvil cannot follow: ${problem}` };
  const now = (call.clock ?? Date.now)();
  const ledger = context.calls;
  if (ledger?.pollsTasks && ledger.find && ledger.updateTask && context.effect) {
    const callId = await callIdOf(context.runId, context.effect);
    const record = ledger.open({ callId, tool: call.toolId, chain: context.effect.chain, timeoutSeconds: call.timeoutSeconds });
    if (record.state === 'sending') ledger.markWaiting(callId, followedTask(call.pack, answer, now, Date.parse(record.deadline)));
    return waitOnLedger(call, context, callId);
  }
  return pollInProcess(call, followedTask(call.pack, answer, now, now + call.timeoutSeconds * 1000), context);
}

/** Waits on the ledger's record of the call, asking its task's input requests whenever a poll found some. */
async function waitOnLedger(call: TaskCall, context: ToolContext, callId: string): Promise<ToolOutcome> {
  const ledger = context.calls!;
  for (;;) {
    const record: CallRecord | undefined = ledger.find!(callId);
    if (record?.state === 'waiting' && record.task?.input !== undefined) {
      const answered = await answerInput(call, record.task, context);
      if (!answered.ok) ledger.settle(callId, { error: answered.message });
      else {
        const { input: _input, ...task } = record.task;
        ledger.updateTask!(callId, { ...task, asked: answered.asked, next_poll_at: (call.clock ?? Date.now)() });
      }
    }
    const nudged = ledger.nudged?.(callId).then(() => null) ?? new Promise<null>(() => {});
    const end = await Promise.race([ledger.wait(callId), nudged]);
    if (end !== null) return outcomeOf(call, end);
  }
}

/** `runvil run`'s way: polls on a timer, in this process, until the task ends or the deadline passes. */
async function pollInProcess(call: TaskCall, first: FollowedTask, context: ToolContext): Promise<ToolOutcome> {
  const clock = call.clock ?? Date.now;
  const deadline = clock() + call.timeoutSeconds * 1000;
  let task = first;
  for (;;) {
    const slept = await sleep(Math.max(0, task.next_poll_at - clock()), context.signal);
    if (!slept) {
      await cancelTask(task, call);
      return { ok: false, message: `${call.toolId}: the call was cancelled` };
    }
    if (clock() >= deadline) {
      await cancelTask(task, call);
      return { ok: false, message: taskTimedOut(call.toolId, call.timeoutSeconds) };
    }
    const step = await pollTask(task, call, clock(), deadline, context.signal);
    if (step.kind === 'result') return outcomeOf(call, { kind: 'result', result: step.result });
    task = step.task;
    if (step.kind === 'input') {
      const answered = await answerInput(call, task, context);
      if (!answered.ok) return { ok: false, message: answered.message };
      const { input: _input, ...rest } = task;
      task = { ...rest, asked: answered.asked, next_poll_at: clock() };
    }
  }
}

/** Asks the operator the task's input requests as form asks, then sends the answers (`tasks/update`); the count of asks made so far, or why the call fails. */
async function answerInput(call: TaskCall, task: FollowedTask, context: ToolContext): Promise<{ ok: true; asked: number } | { ok: false; message: string }> {
  const requests = task.input !== null && typeof task.input === 'object' && !Array.isArray(task.input) ? task.input : {};
  let asked = task.asked ?? 0;
  const responses: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(requests).sort()) {
    const request = requests[key] as { method?: unknown; params?: { message?: unknown; requestedSchema?: unknown } } | null;
    if (request?.method !== 'elicitation/create') {
      return { ok: false, message: `${call.toolId}: the MCP server's task asks for ${String(request?.method).slice(0, 40)}, which Runvil does not answer` };
    }
    if (asked >= MAX_TASK_ASKS)
      return { ok: false, message: `${call.toolId}: the MCP server's task asked more than ${MAX_TASK_ASKS} questions; the call was ended` };
    const message = typeof request.params?.message === 'string' ? request.params.message : '';
    const outcome = await askForm({ message, requestedSchema: request.params?.requestedSchema }, context, asked);
    asked++;
    if ('refused' in outcome) return { ok: false, message: `${call.toolId}: ${outcome.refused}` };
    responses[key] = outcome.result;
  }
  try {
    await updateTask(task, call, { ...responses }, context.signal);
  } catch (error) {
    return {
      ok: false,
      message: `${call.toolId}: the MCP server did not take the answers to its task's questions (${error instanceof Error ? error.message.slice(0, 200) : 'no reason'})`,
    };
  }
  return { ok: true, asked };
}

function outcomeOf(call: TaskCall, end: CallEnd): ToolOutcome {
  if (end.kind === 'expired') return { ok: false, message: taskTimedOut(call.toolId, call.timeoutSeconds) };
  if (end.kind === 'closed') return { ok: false, message: `${call.toolId}: the call was cancelled; so was the MCP server's task` };
  return resultOutcome(call, end.result);
}

function resultOutcome(call: TaskCall, result: ToolResult): ToolOutcome {
  if ('oversized' in result) return outputCapExceeded(call.pack, call.toolId, TOOL_OUTPUT_BYTES);
  if ('error' in result) return { ok: false, message: result.error };
  return { ok: true, output: typeof result.output === 'string' ? result.output : JSON.stringify(result.output) };
}

/** Sleeps `ms`, or less when `signal` aborts: false then. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve(true);
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
