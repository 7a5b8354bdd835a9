/**
 * An MCP server's elicitation as operator asks: one ask whose `form` is the requested schema
 * as it stands (askForm below; DESIGN.md Part 3, "Asks with forms"), its question the server's
 * message; the operator fills the form, or declines or cancels. So it is for a 2026-07-28
 * server's `input_required` round (mcp-input-rounds.ts), a task's input request
 * (mcp-task-call.ts) and a 2025-11-25 server's elicitation on the call's open stream (elicit
 * below). The first ask of a call is the call's own ask id; later ones add `.N`.
 *
 * What goes back to the server is the operator's object only once every path has checked it
 * against the form (ask-form.ts: an answer outside an enum's values never reaches here); a
 * text that is no object declines. An ask that closes unanswered cancels. An elicitation no
 * form can hold (a nested object, a `pattern`, a key MCP's schema lacks) or past the caps of
 * an ask (ask-limits.ts: a huge message, too many or too long options) is not asked at all:
 * the call fails saying why.
 */
import type { ElicitResult } from '@modelcontextprotocol/client';
import { questionProblem } from '../../ask-limits.ts';
import { checkFormAnswer, readForm } from '../../ask-form.ts';
import type { ToolContext } from '../../pack.ts';
import type { Elicitation } from './mcp-connection.ts';

/** The server's answer, or why the call cannot go on (an elicitation no form ask can hold). */
export type ElicitOutcome = { result: ElicitResult } | { refused: string };

/** Asks the operator a 2025-11-25 server's elicitation as one form ask; `asked` counts the call's asks so far (the module comment). */
export async function elicit(request: Elicitation, context: ToolContext, asked: { count: number }): Promise<ElicitOutcome> {
  const outcome = await askForm(request, context, asked.count);
  if ('result' in outcome) asked.count++;
  return outcome;
}

/** The words an operator answers a form ask of an MCP server with to refuse it rather than fill its form: MCP's own actions. */
export const ELICITATION_REFUSALS = ['decline', 'cancel'] as const;

/** Why an elicitation's requested schema cannot be put to the operator as a form, or null (ask-form.ts: MCP's elicitation schema, within an ask's caps). */
export function elicitationProblem(request: Elicitation): string | null {
  const question = questionProblem(request.message);
  if (question !== null) return `the MCP server's elicitation cannot be put to the operator: ${question}`;
  const form = readForm(request.requestedSchema);
  return form.ok ? null : `the MCP server's elicitation cannot be put to the operator: its requestedSchema is no form an operator can fill: ${form.message}`;
}

/**
 * Asks the operator one elicitation as a form ask: the server's message is the question, its
 * requested schema the form; `part` numbers the ask within the call's effect. The operator's
 * object is sent as `accept` with that content; `decline` or `cancel` as said; an ask that
 * closes unanswered (its run or task cancelled) cancels.
 */
export async function askForm(request: Elicitation, context: ToolContext, part: number): Promise<ElicitOutcome> {
  const problem = elicitationProblem(request);
  if (problem !== null) return { refused: problem };
  const form = readForm(request.requestedSchema);
  if (!form.ok) return { refused: problem ?? form.message };
  const answer = await context.operator.ask({
    question: request.message,
    form: form.form,
    refusals: [...ELICITATION_REFUSALS],
    ...(context.effect ? { effect: context.effect, part } : {}),
  });
  if (!answer.ok) return { result: { action: 'cancel' } };
  const text = answer.text.trim();
  if (text === 'decline' || text === 'cancel') return { result: { action: text } };
  let content: unknown;
  try {
    content = JSON.parse(text);
  } catch {
    // Every path checks a form's answer before the run sees it; a text that is none is no answer to send.
    return { result: { action: 'decline' } };
  }
  // Checked again here, whatever path the answer came by: what the server gets is only ever its own form's values.
  const checked = checkFormAnswer(form.form, content);
  if (!checked.ok) return { result: { action: 'decline' } };
  return { result: { action: 'accept', content: checked.value as Record<string, string | number | boolean | string[]> } };
}
