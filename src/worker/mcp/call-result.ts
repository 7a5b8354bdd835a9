/**
 * The run as a `tools/call` result: a completed run's result as text (and as
 * `structuredContent` when it is a JSON object), a failed or cancelled run's error as
 * `isError`, a pending ask as a question to the caller where the caller can be asked
 * (`input_required` with the signed request state, which the 2025-11-25 legacy path turns
 * into `elicitation/create` on the call's stream), and otherwise the run as it stands, with
 * its pending asks' answer URLs and tokens, so a person can answer elsewhere.
 */
import { inputRequired, type CallToolResult, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import type { Env } from '../env.ts';
import { publicView } from '../waits/ask-view.ts';
import type { AskInfo, ObjectView, PendingAsk } from '../run-object/run-view.ts';
import { askKey, elicitationOf } from './ask-question.ts';
import type { AskStateCodec } from './request-state.ts';
import { taskOf } from './run-task.ts';

/** Turns the run as it stands into the call's result; `declined` names an ask the caller declined just now (it is not asked again). */
export type ResultShaper = (view: ObjectView, options?: { declined?: string }) => Promise<CallToolResult | InputRequiredResult>;

/** What shaping a result needs to know of the call. */
export interface ShapingContext {
  env: Env;
  /** The tool called (request states name it). */
  tool: string;
  /** True when the caller takes questions (elicitation: as `input_required`, or on its stream). */
  canElicit: boolean;
  /** Signs request states; null when the deployment has no secret (the pending ask is returned instead). */
  codec: AskStateCodec | null;
  /** True when the caller declared the tasks extension: a run that outlives the request is then a task. */
  takesTasks: boolean;
  ctx: ServerContext;
}

/** The `_meta` key under which every result of a run names the run (GET /runs/:id, the console). */
export const RUN_ID_META = 'dev.runvil/run_id';

/** A tool error the caller's model reads: `isError`, with the message. */
export function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** The shaper of a call. */
export function resultShaper(context: ShapingContext): ResultShaper {
  return async (view, options = {}) => {
    const _meta = { [RUN_ID_META]: view.run_id };
    switch (view.status) {
      case 'completed':
        return { ...completedResult(view.result ?? ''), _meta };
      case 'failed':
        return { ...errorResult(view.error?.message ?? 'the run failed'), _meta };
      case 'cancelled':
        return { ...errorResult(`the run was cancelled${view.error ? `: ${view.error.message}` : ''}`), _meta };
      default: {
        const ask = view.pending.find((entry): entry is AskInfo => entry.kind === 'ask');
        if (ask && context.canElicit && context.codec && ask.ask_id !== options.declined) {
          const requestState = await context.codec.mint(
            { run: view.run_id, ask: ask.ask_id, tool: context.tool, expires: ask.expires_at, form: ask.form !== null && ask.form !== undefined },
            context.ctx,
          );
          return { ...inputRequired({ inputRequests: { [askKey(ask.ask_id)]: inputRequired.elicit(elicitationOf(ask)) }, requestState }), _meta };
        }
        if (context.takesTasks) return { resultType: 'task', ...taskOf(view), _meta } as unknown as CallToolResult;
        return { ...pendingResult(await publicView(context.env, view)), _meta };
      }
    }
  };
}

/** A completed run's result: its text, and as structuredContent when it is a JSON object. */
export function completedResult(text: string): CallToolResult {
  const structured = jsonObjectOf(text);
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) };
}

function jsonObjectOf(text: string): Record<string, unknown> | null {
  if (!text.trimStart().startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The run that has not ended, as the result: what it waits on, and where a person answers its asks. */
function pendingResult(view: Awaited<ReturnType<typeof publicView>>): CallToolResult {
  const asks = view.pending.filter((entry): entry is PendingAsk => entry.kind === 'ask');
  const lines = [`The run ${view.run_id} is ${view.status}.`];
  for (const ask of asks) {
    lines.push(`It asks: ${ask.question ?? '(no question)'}${ask.choices ? ` (choices: ${ask.choices.join(', ')})` : ''}.`);
    if (ask.answer_url) lines.push(`Answer with POST ${ask.answer_url} {"answer": "..."}${ask.token ? ` and Authorization: Bearer ${ask.token}` : ''}.`);
  }
  const structuredContent = { run_id: view.run_id, status: view.status, pending: view.pending };
  return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: structuredContent as unknown as Record<string, unknown> };
}
