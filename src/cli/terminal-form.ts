/**
 * A form ask at the terminal (`runvil run`): each field asked in turn, its label, its kind and
 * its default shown; an empty line takes the default (MCP has a client pre-fill its form with
 * the defaults) or leaves an optional field out. A line that does not fit the field is asked
 * again, saying why; the object is checked against the whole form at the end, as the API
 * checks it.
 */
import { checkFormAnswer, formAnswerText, type AskForm, type FormField, type FormOption } from '../host/ask-form.ts';
import { fieldProblem, optionValues } from '../host/ask-form-answer.ts';
import type { Json } from '../json/json.ts';

/** Reads one line: the text, null at the input's end, undefined when the ask's window closed. */
export type ReadLine = () => Promise<string | null | undefined>;

/** The filled form's JSON text, or null when the input ended or the window closed first. */
export async function askFormAtTerminal(form: AskForm, readLine: ReadLine, write: (text: string) => void): Promise<string | null> {
  const value: Record<string, Json> = {};
  for (const [name, field] of Object.entries(form.properties)) {
    const required = form.required?.includes(name) ?? false;
    for (;;) {
      write(`${fieldPrompt(name, field, required)}\n> `);
      const line = await readLine();
      if (line === null || line === undefined) return null;
      const read = fieldValue(field, line.trim());
      if (read === undefined) {
        if (!required) break;
        write(`${name} is required\n`);
        continue;
      }
      const problem = fieldProblem(field, read);
      if (problem === null) {
        Object.defineProperty(value, name, { value: read, enumerable: true, writable: true, configurable: true });
        break;
      }
      write(`${name} ${problem}\n`);
    }
  }
  const checked = checkFormAnswer(form, value);
  return checked.ok ? formAnswerText(checked.value) : null;
}

/** How a field is asked: its label, what it takes, its default. */
function fieldPrompt(name: string, field: FormField, required: boolean): string {
  const label = field.title ?? name;
  const about = field.description ? ` (${field.description})` : '';
  const fallback = field.default !== undefined ? ` [default: ${Array.isArray(field.default) ? field.default.join(', ') : String(field.default)}]` : '';
  return `${label}${about}: ${kindOf(field)}${required ? '' : ', optional'}${fallback}`;
}

function kindOf(field: FormField): string {
  switch (field.type) {
    case 'boolean':
      return 'yes or no';
    case 'number':
      return 'a number';
    case 'integer':
      return 'a whole number';
    case 'array':
      return `some of ${optionsOf(field.items.enum, field.items.anyOf)}, separated by commas`;
    case 'string':
      if ('enum' in field || 'oneOf' in field) return `one of ${optionsOf(field.enum, field.oneOf, field.enumNames)}`;
      return 'format' in field && field.format ? `a text (${field.format})` : 'a text';
  }
}

const optionsOf = (values: readonly string[] | undefined, options: readonly FormOption[] | undefined, names?: readonly string[]): string =>
  values
    ? values.map((value, index) => (names?.[index] !== undefined ? `${value} (${names[index]})` : value)).join(' / ')
    : (options ?? []).map((option) => `${option.const} (${option.title})`).join(' / ');

/** A typed line as the field's value (undefined: left empty and no default); fieldProblem says whether it fits. */
function fieldValue(field: FormField, line: string): Json | undefined {
  if (line === '') return field.default as Json | undefined;
  switch (field.type) {
    case 'boolean':
      return /^(y|yes|true)$/i.test(line) ? true : /^(n|no|false)$/i.test(line) ? false : line;
    case 'number':
    case 'integer': {
      const number = Number(line);
      return Number.isFinite(number) ? number : line;
    }
    case 'array':
      return line.split(',').map((item) => optionValue(item.trim(), field.items.enum, field.items.anyOf));
    case 'string':
      return 'enum' in field || 'oneOf' in field ? optionValue(line, field.enum, field.oneOf, field.enumNames) : line;
  }
}

/** An option typed by its value or its label, as its value. */
function optionValue(text: string, values: readonly string[] | undefined, options: readonly FormOption[] | undefined, names?: readonly string[]): string {
  const all = optionValues(values, options);
  if (all.includes(text)) return text;
  const byTitle = options?.find((option) => option.title === text)?.const;
  const byName = names ? values?.[names.indexOf(text)] : undefined;
  return byTitle ?? byName ?? text;
}
