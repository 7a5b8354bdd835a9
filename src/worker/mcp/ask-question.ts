/**
 * An ask of a run as a question to the MCP caller: an elicitation whose message is the
 * ask's question and whose schema is the ask's form as it stands (MCP's requestedSchema),
 * else one field, `answer` (the ask's choices as an enum, else any text); and the answer
 * read back from the caller's accepted content: the filled form's object, or the text of
 * `answer`. The run object checks the answer as it checks every other (the form's fields,
 * the choices; first answer wins).
 */
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import type { Json } from '../../json/json.ts';
import type { AskInfo } from '../run-object/run-view.ts';

/** The key of the ask's input request in `inputRequests` / `inputResponses`. */
export const askKey = (askId: string): string => `ask-${askId}`;

/** The elicitation of `ask`. */
export function elicitationOf(ask: AskInfo): ElicitRequestFormParams {
  const message = ask.question ?? 'The run asks for your answer.';
  if (ask.form) return { mode: 'form', message, requestedSchema: ask.form as unknown as ElicitRequestFormParams['requestedSchema'] };
  const answer =
    ask.choices !== null
      ? { type: 'string' as const, title: 'Answer', enum: [...ask.choices] }
      : { type: 'string' as const, title: 'Answer', description: 'Your answer, as text' };
  return { mode: 'form', message, requestedSchema: { type: 'object', properties: { answer }, required: ['answer'] } };
}

/** The answer in an accepted elicitation's content for `ask` (or an ask known only to have a form, or not), or a message saying what it lacks. */
export function answerOf(
  ask: Pick<AskInfo, 'form'> | { hasForm: boolean } | null,
  content: Record<string, unknown> | undefined,
): { ok: true; answer: Json } | { ok: false; message: string } {
  const hasForm = ask !== null && ('hasForm' in ask ? ask.hasForm : Boolean(ask.form));
  // A form's answer is the filled object, as it came: the run object checks it against the form.
  if (hasForm) return content !== undefined ? { ok: true, answer: content as Json } : { ok: false, message: "the answer must be the form's filled object" };
  const answer = content !== undefined && Object.hasOwn(content, 'answer') ? content.answer : undefined;
  if (typeof answer !== 'string') return { ok: false, message: 'the answer must be the text of the field `answer`' };
  return { ok: true, answer };
}
