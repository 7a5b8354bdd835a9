/**
 * An answer as posted (POST /runs/:id/asks/:ask_id, an MCP caller's elicitation result) and
 * the text the ask's wait takes: a free-text ask takes a text (its choices are the wait
 * ledger's to check); an ask with a form takes a JSON object that fits the form
 * (ask-form.ts), and its text is the object's canonical JSON, so the same object posted
 * again, keys in any order, is a retry. A form ask's answer that does not fit is refused
 * with 400 naming the field, and the ask stays pending.
 */
import { checkFormAnswer, formAnswerText } from '../../host/ask-form.ts';
import type { Json } from '../../json/json.ts';
import type { Refusal } from '../run-object/run-object-api.ts';
import type { AskRecord } from '../run-object/run-view.ts';

/** The text ask `record` takes for `answer`, or why the answer does not fit it (a missing ask is the ledger's to refuse). */
export function postedAnswerText(record: AskRecord | undefined, answer: Json): { ok: true; text: string } | Refusal {
  const form = record?.form ?? null;
  if (form === null) {
    if (typeof answer === 'string' || record === undefined) return { ok: true, text: typeof answer === 'string' ? answer : JSON.stringify(answer) };
    return misfit(
      `ask ${record.ask_id} has no form: its answer is a text, not ${Array.isArray(answer) ? 'a list' : typeof answer === 'object' && answer !== null ? 'an object' : JSON.stringify(answer)}`,
      '',
    );
  }
  if (typeof answer === 'string') {
    // An MCP server's elicitation may be refused with MCP's own words rather than filled.
    if (record!.refusals?.includes(answer.trim())) return { ok: true, text: answer.trim() };
    return misfit(
      `ask ${record!.ask_id} has a form: its answer is a JSON object of the form's fields, such as {"answer": {"${Object.keys(form.properties)[0]}": ...}}` +
        (record!.refusals ? `, or one of ${record!.refusals.map((word) => JSON.stringify(word)).join(', ')} to refuse it` : ''),
      '',
    );
  }
  const checked = checkFormAnswer(form, answer);
  if (!checked.ok) return misfit(`the answer does not fit the form of ask ${record!.ask_id}: ${checked.message}`, checked.field);
  return { ok: true, text: formAnswerText(checked.value) };
}

const misfit = (message: string, field: string): Refusal => ({ ok: false, reason: 'not-a-fit', status: 400, message, ...(field !== '' ? { field } : {}) });
