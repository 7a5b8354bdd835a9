/**
 * An MCP server's elicitation as operator asks. A 2026-07-28 server's elicitation (an
 * `input_required` round, mcp-input-rounds.ts) becomes one ask whose `form` is the requested
 * schema as it stands (askForm below; DESIGN.md Part 3, "Asks with forms"): the operator fills
 * it, or declines or cancels. A 2025-11-25 server's elicitation on the call's open stream
 * (DESIGN.md Part 2, "MCP servers as Packs") becomes, as before, one ask per field (the required ones, or every field when none is required), the
 * server's message first; an enum, titled options (`oneOf` consts) or a multi-select's items
 * give the ask's choices. The first ask of a call is the call's own ask id; later ones add
 * `.N`.
 *
 * What goes back to the server is the server's own: for a field with choices, the choice
 * itself, never the operator's text, so an answer outside them (whatever path it came by: a
 * stored answer, a fork, a test file) is declined, never sent. A field Runvil cannot ask
 * about is declined too. An operator who cannot answer cancels the request. An elicitation
 * past the caps of an ask (ask-limits.ts: a huge message, too many or too long options) is
 * not asked at all: the call fails saying why.
 */
import type { ElicitResult } from '@modelcontextprotocol/client';
import { choicesProblem, questionProblem } from '../../ask-limits.ts';
import { readForm } from '../../ask-form.ts';
import type { ToolContext } from '../../pack.ts';
import type { Elicitation } from './mcp-connection.ts';

/** The server's answer, or why the call cannot go on (an ask past the caps). */
export type ElicitOutcome = { result: ElicitResult } | { refused: string };

interface FieldSchema {
  type?: unknown;
  title?: unknown;
  description?: unknown;
  enum?: unknown;
  oneOf?: unknown;
  items?: { enum?: unknown; anyOf?: unknown };
  minItems?: unknown;
}

/** How a field is answered: free text of a type, one of `choices`, a list of one of them, or not at all. */
type FieldAnswer = { kind: 'text' } | { kind: 'one'; choices: string[] } | { kind: 'many'; choices: string[] } | { kind: 'unusable' };

/** A value the server's schema takes for one field. */
type FieldValue = string | number | boolean | string[];

/** Asks the operator for what the server requests (see the module comment). */
export async function elicit(request: Elicitation, context: ToolContext, asked: { count: number }): Promise<ElicitOutcome> {
  const schema = (request.requestedSchema ?? {}) as { properties?: Record<string, FieldSchema>; required?: unknown };
  const properties = schema.properties && typeof schema.properties === 'object' ? Object.entries(schema.properties) : [];
  const required = Array.isArray(schema.required) ? new Set(schema.required.filter((name): name is string => typeof name === 'string')) : new Set<string>();
  const fields = properties.filter(([name]) => required.size === 0 || required.has(name));
  const content: Record<string, FieldValue> = Object.create(null);
  for (const [name, field] of fields) {
    const how = answerOf(field);
    if (how.kind === 'unusable') return { result: { action: 'decline' } };
    const choices = how.kind === 'text' ? undefined : how.choices;
    // The choices first: thousands of them would make the question too long, which says less.
    const unfit = choices ? choicesProblem(choices) : null;
    if (unfit !== null) return { refused: `the MCP server's elicitation cannot be put to the operator: ${unfit}` };
    const label = typeof field.description === 'string' ? field.description : typeof field.title === 'string' ? field.title : name;
    const lines = [request.message, '', fields.length === 1 && label === name ? name : `${name}: ${label}`];
    if (choices) lines.push(`(one of: ${choices.join(', ')})`);
    const question = lines.join('\n');
    const problem = questionProblem(question);
    if (problem !== null) return { refused: `the MCP server's elicitation cannot be put to the operator: ${problem}` };
    const answer = await context.operator.ask({
      question,
      ...(choices ? { choices } : {}),
      ...(context.effect ? { effect: context.effect, part: asked.count } : {}),
    });
    asked.count++;
    if (!answer.ok) return { result: { action: 'cancel' } };
    const value = valueOf(answer.text.trim(), field, how);
    if (value === undefined) return { result: { action: 'decline' } };
    content[name] = value;
  }
  return { result: { action: 'accept', content: { ...content } } };
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
  if (content === null || typeof content !== 'object' || Array.isArray(content)) return { result: { action: 'decline' } };
  return { result: { action: 'accept', content: content as Record<string, string | number | boolean | string[]> } };
}

function answerOf(field: FieldSchema): FieldAnswer {
  if (field.type === 'array') {
    const items = field.items ?? {};
    const choices = texts(items.enum) ?? consts(items.anyOf);
    // One answer makes a list of one: a field that needs more cannot be asked with one question.
    const fewest = typeof field.minItems === 'number' ? field.minItems : 0;
    return choices && fewest <= 1 ? { kind: 'many', choices } : { kind: 'unusable' };
  }
  if (field.enum !== undefined || field.oneOf !== undefined) {
    const choices = field.enum !== undefined ? texts(field.enum) : consts(field.oneOf);
    return choices ? { kind: 'one', choices } : { kind: 'unusable' };
  }
  return field.type === undefined || ['string', 'number', 'integer', 'boolean'].includes(field.type as string) ? { kind: 'text' } : { kind: 'unusable' };
}

/** An enum's values when every one is text, else null. */
function texts(values: unknown): string[] | null {
  return Array.isArray(values) && values.every((value) => typeof value === 'string') ? [...values] : null;
}

/** The `const` of each titled option when every option has a text one, else null. */
function consts(options: unknown): string[] | null {
  if (!Array.isArray(options)) return null;
  const values = options.map((option: unknown) => (typeof option === 'object' && option !== null ? (option as { const?: unknown }).const : undefined));
  return texts(values);
}

/** The value sent back for the operator's answer `text`, or undefined when it does not fit (the request is declined). */
function valueOf(text: string, field: FieldSchema, how: FieldAnswer): FieldValue | undefined {
  if (how.kind === 'one' || how.kind === 'many') {
    // The server's own string, found by the answer: never the answer itself.
    const chosen = how.choices.find((choice) => choice === text);
    if (chosen === undefined) return undefined;
    return how.kind === 'one' ? chosen : [chosen];
  }
  switch (field.type) {
    case 'number':
    case 'integer': {
      const number = Number(text);
      if (text === '' || !Number.isFinite(number) || (field.type === 'integer' && !Number.isInteger(number))) return undefined;
      return number;
    }
    case 'boolean':
      return /^(true|yes|y)$/i.test(text) ? true : /^(false|no|n)$/i.test(text) ? false : undefined;
    default:
      return text;
  }
}
