/**
 * An ask's choices (`user-input/ask` with `choices`): the answers it takes. The live route
 * (POST /runs/:id/asks/:ask_id) refuses any other; so do the paths that give an answer
 * without it: a fork's `answers` (fork.ts), a test file's `answers:` (operator.ts's
 * ScriptedOperator) and its recorded asks (recording.ts). Matched exactly, as the live
 * route matches: no case folding, trimming or Unicode normalization, so an answer Lua gets
 * is always one of the texts the prompt offered.
 */
import type { Json } from '../json/json.ts';

/** The choices an ask's arguments offer, or null for a free-text ask. A `choices` that is not a list offers none. */
export function choicesOf(args: Json | undefined): Json[] | null {
  if (args === null || typeof args !== 'object' || Array.isArray(args) || !Object.hasOwn(args, 'choices')) return null;
  const choices = args.choices;
  if (choices === undefined || choices === null) return null;
  return Array.isArray(choices) ? choices : [];
}

/** The question an ask's arguments carry, if it is a text. */
export function questionOf(args: Json | undefined): string | undefined {
  if (args === null || typeof args !== 'object' || Array.isArray(args) || !Object.hasOwn(args, 'question')) return undefined;
  return typeof args.question === 'string' ? args.question : undefined;
}

/** True when `answer` may answer an ask offering `choices` (null: any text). */
export function takesAnswer(choices: readonly Json[] | null, answer: string): boolean {
  return choices === null || choices.some((choice) => choice === answer);
}

/** Why an answer is refused: it names the ask (its id and question) and every choice. */
export function notAChoice(ask: { id: string; question?: string | undefined }, answer: Json, choices: readonly Json[]): string {
  const question = ask.question !== undefined ? ` (${JSON.stringify(clipped(ask.question))})` : '';
  const offered = choices.length > 0 ? `: ${choices.map((choice) => JSON.stringify(choice)).join(', ')}` : ', and it offers none';
  return `the answer ${JSON.stringify(answer)} is not one of the choices of the ask ${ask.id}${question}${offered}`;
}

/** A question as a message quotes it: its first 80 characters. */
function clipped(text: string): string {
  const chars = [...text];
  return chars.length > 80 ? `${chars.slice(0, 80).join('')}…` : text;
}
