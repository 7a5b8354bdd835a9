/**
 * An MCP server's tasks (the tasks extension, `io.modelcontextprotocol/tasks`, 2026-07-28): a
 * server may answer a `tools/call` with a task rather than the result, and the client polls
 * `tasks/get` until the task ends, answers its input requests with `tasks/update`, and may
 * end it with `tasks/cancel`. The wire's shapes are the extension's own package's
 * (`@modelcontextprotocol/ext-tasks`, its v2 schemas and guards); what is Runvil's is how a
 * poll is paced and bounded, and what a poll's answer makes of the call.
 *
 * The SDK's v2 client refuses a result of type `task` (it knows `complete` and
 * `input_required`), so a connection catches the task answer on its transport before the
 * client reads it (`catchTaskAnswers`), and the client is handed an empty result in its place.
 * `tasks/*` requests go through the client as any request (their results are `complete`).
 *
 * Hostile servers: a task id longer than MAX_TASK_ID_CHARS or with control characters is not
 * kept (the call fails); a `tasks/get` answer that is not a task, or names another task, fails
 * the call; a poll interval below TASK_POLL_FLOOR_MS is raised to it, one above
 * TASK_POLL_CEILING_MS lowered to it, and no poll is due past the call's deadline; a result
 * is read within the bound on one answer and capped as any call's output.
 */
import type { Transport } from '@modelcontextprotocol/client';
import { isCreateTaskResultV2, isDetailedTaskV2, TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { FollowedTask, ToolResult } from '../../tool-calls.ts';
import { answerBytesFor, capOutput, TOOL_OUTPUT_BYTES } from '../../tool-output-cap.ts';
import { boundedFetch } from '../bounded-body.ts';
import { MCP_CONNECT_TIMEOUT_MS, newMcpClient, shortReason, streamableHttp, type McpEndpoint, type McpTransportFactory } from './mcp-client.ts';
import { toolOutcome } from './mcp-output.ts';

/** The extension's identifier, as a client's capabilities declare it. */
export const TASKS_EXTENSION = TASKS_EXTENSION_ID_V2;

/** The soonest a task is polled again, whatever the server suggests: a server cannot make the run object's alarm spin. */
export const TASK_POLL_FLOOR_MS = 1_000;
/** The longest between two polls, whatever the server suggests (the call's deadline bounds it too). */
export const TASK_POLL_CEILING_MS = 300_000;
/** The interval when the server suggests none. */
export const DEFAULT_TASK_POLL_MS = 2_000;
/** How many polls go at the server's pace before the interval doubles with each further poll (up to the ceiling). */
export const POLLS_BEFORE_BACKOFF = 10;
/** The longest task id kept: an id is journaled with the call, and read back on every poll. */
export const MAX_TASK_ID_CHARS = 256;

/** A task as a server answered a call with it (the fields read here). */
export interface TaskAnswer {
  taskId: string;
  status: string;
  pollIntervalMs?: number;
}

/** What a connection caught of a call's answer: a task, a task answer that is none, or nothing (the answer was a result). */
export type CaughtTask = { ok: true; task: TaskAnswer } | { ok: false; reason: string } | null;

/**
 * Watches the messages `transport` hands its client (call once the client is connected: it
 * wraps the handler the client set): a response whose result is a task (`resultType: task`) is
 * kept for `take()`, and the client gets an empty complete result in its place.
 */
export function catchTaskAnswers(transport: Transport): { take(): CaughtTask } {
  let caught: CaughtTask = null;
  const deliver = transport.onmessage;
  if (!deliver) return { take: () => null };
  transport.onmessage = (message, extra) => {
    const result = (message as { result?: { resultType?: unknown } }).result;
    if (result && typeof result === 'object' && result.resultType === 'task') {
      caught = isCreateTaskResultV2(result)
        ? { ok: true, task: result }
        : { ok: false, reason: "it answered with a task that is not one (not the tasks extension's shape)" };
      const { id, jsonrpc } = message as { id: string | number; jsonrpc: '2.0' };
      return deliver({ jsonrpc, id, result: { resultType: 'complete', content: [] } } as unknown as typeof message, extra);
    }
    return deliver(message, extra);
  };
  return {
    take() {
      const taken = caught;
      caught = null;
      return taken;
    },
  };
}

/** Why a server's task id cannot be kept, or null. */
export function taskIdProblem(taskId: string): string | null {
  if (taskId.length === 0) return 'its task id is empty';
  if (taskId.length > MAX_TASK_ID_CHARS) return `its task id is ${taskId.length} characters long (at most ${MAX_TASK_ID_CHARS} are kept)`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(taskId)) return 'its task id holds control characters';
  return null;
}

/** The server's suggested interval, if it is a number at all. */
export const suggestedInterval = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * How long after a poll that found `task` under way the next one is due: the server's
 * suggestion (or DEFAULT_TASK_POLL_MS) within the floor and ceiling, doubled for each poll past
 * POLLS_BEFORE_BACKOFF, never past the ceiling.
 */
export function pollDelay(task: Pick<FollowedTask, 'poll_ms' | 'polls'>): number {
  const base = Math.min(TASK_POLL_CEILING_MS, Math.max(TASK_POLL_FLOOR_MS, task.poll_ms ?? DEFAULT_TASK_POLL_MS));
  const doublings = Math.max(0, task.polls - POLLS_BEFORE_BACKOFF);
  return Math.min(TASK_POLL_CEILING_MS, base * 2 ** Math.min(doublings, 20));
}

/** When the next poll of `task` is due after one at `now`, within the call's `deadline` (epoch ms). */
export const nextPollAt = (task: Pick<FollowedTask, 'poll_ms' | 'polls'>, now: number, deadline: number): number => Math.min(now + pollDelay(task), deadline);

/** What a poll found: the call's result, the task still under way (its next poll), or input the call must ask for first. */
export type TaskStep = { kind: 'result'; result: ToolResult } | { kind: 'again'; task: FollowedTask } | { kind: 'input'; task: FollowedTask };

/** What a poll needs beside the task: where the server is, how to reach it, and what the tool's output is. */
export interface TaskReach {
  endpoint: McpEndpoint;
  transport?: McpTransportFactory;
  /** The tool id, such as `reports/build`. */
  toolId: string;
  structured: boolean;
}

/** A short-lived client for one task's requests, its answers read within the bound on one answer. */
async function taskClient(reach: TaskReach, signal?: AbortSignal) {
  const client = newMcpClient();
  let passed = false;
  const fetch = boundedFetch(answerBytesFor(TOOL_OUTPUT_BYTES), () => {
    passed = true;
  });
  const transport = await (reach.transport ?? streamableHttp)(reach.endpoint, fetch);
  await client.connect(transport, { timeout: MCP_CONNECT_TIMEOUT_MS, ...(signal ? { signal } : {}) });
  const request = async (method: string, params: Record<string, unknown>): Promise<unknown> => {
    try {
      return await client.request({ method, params } as never, ANY_RESULT as never, { timeout: MCP_CONNECT_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    } catch (error) {
      if (passed) throw new OversizedAnswer();
      throw error;
    }
  };
  return { request, close: () => client.close().catch(() => undefined) };
}

/** Any JSON result, as a Standard Schema (what is read of it is checked by the extension's guards). */
const ANY_RESULT = { '~standard': { version: 1, vendor: 'runvil', validate: (value: unknown) => ({ value }) } };

class OversizedAnswer extends Error {}

/**
 * Polls `task` once (`tasks/get`) at `now`, within the call's `deadline` (epoch ms). A server
 * that cannot be reached is polled again later (the deadline ends the call if it never comes
 * back); an answer that is no task, or another task, ends the call with a tool error.
 */
export async function pollTask(task: FollowedTask, reach: TaskReach, now: number, deadline: number, signal?: AbortSignal): Promise<TaskStep> {
  const failed = (why: string): TaskStep => ({ kind: 'result', result: { error: `${reach.toolId}: the MCP server's task ${why}` } });
  let answer: unknown;
  try {
    const client = await taskClient(reach, signal);
    try {
      answer = await client.request('tasks/get', { taskId: task.task_id });
    } finally {
      await client.close();
    }
  } catch (error) {
    if (error instanceof OversizedAnswer) return { kind: 'result', result: { oversized: true } };
    const later = { ...task, polls: task.polls + 1 };
    return { kind: 'again', task: { ...later, next_poll_at: nextPollAt(later, now, deadline) } };
  }
  if (!isDetailedTaskV2(answer)) return failed(`could not be followed: tasks/get answered something that is not a task (${shapeOf(answer)})`);
  if (answer.taskId !== task.task_id) return failed('could not be followed: tasks/get answered with another task');
  const heard = { ...task, poll_ms: suggestedInterval(answer.pollIntervalMs) ?? task.poll_ms, polls: task.polls + 1 };
  switch (answer.status) {
    case 'working': {
      const { input: _input, ...rest } = heard;
      return { kind: 'again', task: { ...rest, next_poll_at: nextPollAt(heard, now, deadline) } };
    }
    case 'input_required':
      return { kind: 'input', task: { ...heard, input: answer.inputRequests as FollowedTask['input'], next_poll_at: now } };
    case 'completed': {
      const outcome = capOutput(toolOutcome(reach.toolId, answer.result, reach.structured), task.pack, reach.toolId);
      if (outcome.ok) return { kind: 'result', result: { output: outcome.output } };
      return { kind: 'result', result: outcome.limit ? { oversized: true } : { error: outcome.message } };
    }
    case 'failed':
      return failed(`failed: ${clip(answer.error.message)}`);
    case 'cancelled':
      return failed('was cancelled by the server');
  }
}

/** Sends the answers to a task's input requests (`tasks/update`), by input request key; throws when the server cannot take them. */
export async function updateTask(task: FollowedTask, reach: TaskReach, inputResponses: Record<string, unknown>, signal?: AbortSignal): Promise<void> {
  const client = await taskClient(reach, signal);
  try {
    await client.request('tasks/update', { taskId: task.task_id, inputResponses });
  } finally {
    await client.close();
  }
}

/** Asks the server to end `task` (`tasks/cancel`); best effort: a server that cannot be reached is not asked again. */
export async function cancelTask(task: FollowedTask, reach: TaskReach): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    const client = await taskClient(reach);
    try {
      await client.request('tasks/cancel', { taskId: task.task_id });
    } finally {
      await client.close();
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: shortReason(error) };
  }
}

/** The first poll of a task a server answered a call with at `now`. */
export function followedTask(pack: string, answer: TaskAnswer, now: number, deadline: number): FollowedTask {
  const first = { pack, task_id: answer.taskId, poll_ms: suggestedInterval(answer.pollIntervalMs), polls: 0 };
  return { ...first, next_poll_at: nextPollAt(first, now, deadline) };
}

function shapeOf(value: unknown): string {
  if (value === null || typeof value !== 'object') return value === null ? 'null' : typeof value;
  const status = (value as { status?: unknown }).status;
  return typeof status === 'string' ? `status ${JSON.stringify(clip(status, 40))}` : 'an object with no task status';
}

const clip = (text: string, most = 200): string => (text.length > most ? `${text.slice(0, most - 3)}...` : text);
