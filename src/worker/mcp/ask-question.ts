/**
 * An ask of a run as a question to the MCP caller: an elicitation whose message is the
 * ask's question and whose schema is one field, `answer` (the ask's choices as an enum,
 * else any text), and the answer read back from the caller's accepted content. The run
 * object checks the answer as it checks every other (choices, first answer wins).
 */
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import type { AskInfo } from '../run-object/run-view.ts';

/** The key of the ask's input request in `inputRequests` / `inputResponses`. */
export const askKey = (askId: string): string => `ask-${askId}`;

/** The elicitation of `ask`. */
export function elicitationOf(ask: AskInfo): ElicitRequestFormParams {
  const answer =
    ask.choices !== null
      ? { type: 'string' as const, title: 'Answer', enum: [...ask.choices] }
      : { type: 'string' as const, title: 'Answer', description: 'Your answer, as text' };
  return {
    mode: 'form',
    message: ask.question ?? 'The run asks for your answer.',
    requestedSchema: { type: 'object', properties: { answer }, required: ['answer'] },
  };
}

/** The answer in an accepted elicitation's content, or a message saying what it lacks. */
export function answerOf(content: Record<string, unknown> | undefined): { ok: true; answer: string } | { ok: false; message: string } {
  const answer = content !== undefined && Object.hasOwn(content, 'answer') ? content.answer : undefined;
  if (typeof answer !== 'string') return { ok: false, message: 'the answer must be the text of the field `answer`' };
  return { ok: true, answer };
}
