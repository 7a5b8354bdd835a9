/**
 * An answer to a form ask (ask-form.ts): a JSON object whose fields are the form's, each of
 * its type and within its bounds, checked on every path that gives one (the answer route, a
 * fork's `answers`, a test file's `answers:`, the terminal). Nothing is filled in: MCP's
 * elicitation (2025-11-25) says a client pre-populates its form with the defaults, so an
 * answer holds what the person submitted, and a required field left out is refused. Fields
 * the form lacks are refused too, as are texts where numbers are due (`"5"` is no 5).
 */
import { canonicalJson } from '../json/canonical-json.ts';
import { defineField, type Json } from '../json/json.ts';
import type { AskForm, FormField, FormOption, MultiSelectField, SelectField, TextField } from './ask-form.ts';
import { charCount, MAX_FORM_TEXT_CHARS } from './ask-limits.ts';

/** An answer that fits its form (the object, fields in the form's order), or the field that does not and why. */
export type FormAnswer = { ok: true; value: Record<string, Json> } | { ok: false; field: string; message: string };

/** The formats a text field may have. */
export const FORMATS: readonly string[] = ['email', 'uri', 'date', 'date-time'];

/**
 * Checks `answer` against `form`. `field` names the field that does not fit (empty when the
 * answer is no object at all); the message names it too, for whoever reads it.
 */
export function checkFormAnswer(form: AskForm, answer: unknown): FormAnswer {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
    return { ok: false, field: '', message: `the answer to a form must be a JSON object of its fields (${fieldList(form)}), not ${describe(answer)}` };
  }
  const given = answer as { [key: string]: unknown };
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(form.properties, key)) {
      return { ok: false, field: key, message: `the form has no field ${JSON.stringify(clipped(key))}; its fields are ${fieldList(form)}` };
    }
  }
  const value: Record<string, Json> = {};
  for (const [name, field] of Object.entries(form.properties)) {
    const present = Object.hasOwn(given, name) && given[name] !== undefined;
    if (!present) {
      if (form.required?.includes(name)) return { ok: false, field: name, message: `the field ${JSON.stringify(name)} is required` };
      continue;
    }
    const problem = fieldProblem(field, given[name]);
    if (problem !== null) return { ok: false, field: name, message: `the field ${JSON.stringify(name)} ${problem}` };
    defineField(value, name, copied(given[name] as Json));
  }
  return { ok: true, value };
}

/** The text Lua gets for an answer that fits: its canonical JSON, keys sorted as `json.encode` writes them, so a retry is the same text. */
export const formAnswerText = (value: Record<string, Json>): string => canonicalJson(value);

/** Why `value` does not fit `field` (a phrase after the field's name), or null. */
export function fieldProblem(field: FormField, value: unknown): string | null {
  switch (field.type) {
    case 'boolean':
      return typeof value === 'boolean' ? null : `must be true or false, not ${describe(value)}`;
    case 'number':
    case 'integer':
      return numberProblem(field.type, field, value);
    case 'array':
      return multiSelectProblem(field, value);
    case 'string':
      if ('enum' in field || 'oneOf' in field) return selectProblem(field as SelectField, value);
      return textProblem(field as TextField, value);
  }
}

function numberProblem(type: 'number' | 'integer', bounds: { minimum?: number; maximum?: number }, value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return `must be ${type === 'integer' ? 'a whole number' : 'a number'}, not ${describe(value)}`;
  if (type === 'integer' && !Number.isInteger(value)) return `must be a whole number, not ${value}`;
  if (bounds.minimum !== undefined && value < bounds.minimum) return `must be at least ${bounds.minimum}, not ${value}`;
  if (bounds.maximum !== undefined && value > bounds.maximum) return `must be at most ${bounds.maximum}, not ${value}`;
  return null;
}

function textProblem(field: { minLength?: number; maxLength?: number; format?: string }, value: unknown): string | null {
  if (typeof value !== 'string') return `must be a text, not ${describe(value)}`;
  const chars = charCount(value);
  const max = Math.min(field.maxLength ?? MAX_FORM_TEXT_CHARS, MAX_FORM_TEXT_CHARS);
  if (chars > max) return `is ${chars} characters long; it takes at most ${max}`;
  if (field.minLength !== undefined && chars < field.minLength) return `is ${chars} characters long; it takes at least ${field.minLength}`;
  if (field.format !== undefined && !FORMAT_CHECKS[field.format as keyof typeof FORMAT_CHECKS](value)) return `must be ${FORMAT_NAMES[field.format]}`;
  return null;
}

function selectProblem(field: SelectField, value: unknown): string | null {
  const values = optionValues(field.enum, field.oneOf);
  if (typeof value !== 'string') return `must be one of ${quoted(values)}, not ${describe(value)}`;
  return values.includes(value) ? null : `must be one of ${quoted(values)}, not ${JSON.stringify(clipped(value))}`;
}

function multiSelectProblem(field: MultiSelectField, value: unknown): string | null {
  const values = optionValues(field.items.enum, field.items.anyOf);
  if (!Array.isArray(value)) return `must be a list of options (${quoted(values)}), not ${describe(value)}`;
  for (const item of value) {
    if (typeof item !== 'string' || !values.includes(item)) return `holds ${describe(item)}, which is none of its options (${quoted(values)})`;
  }
  if (new Set(value).size !== value.length) return 'holds an option twice';
  if (field.minItems !== undefined && value.length < field.minItems) return `holds ${value.length} options; pick at least ${field.minItems}`;
  if (field.maxItems !== undefined && value.length > field.maxItems) return `holds ${value.length} options; pick at most ${field.maxItems}`;
  return null;
}

/** The values an enum offers, untitled or titled. */
export const optionValues = (values: readonly string[] | undefined, options: readonly FormOption[] | undefined): string[] =>
  values ? [...values] : (options ?? []).map((option) => option.const);

const FORMAT_NAMES: { [format: string]: string } = {
  email: 'an email address, such as name@example.com',
  uri: 'an absolute URI, such as https://example.com/page',
  date: 'a date as YYYY-MM-DD, such as 2026-12-31',
  'date-time': 'a date and time as RFC 3339 gives it, such as 2026-12-31T09:30:00Z',
};

// Each check walks its text once: no pattern here backtracks (a text may be 8,000 characters).
const FORMAT_CHECKS = {
  email(text: string): boolean {
    const at = text.indexOf('@');
    if (at <= 0 || at !== text.lastIndexOf('@') || /\s/.test(text)) return false;
    const domain = text.slice(at + 1);
    const dot = domain.lastIndexOf('.');
    return dot > 0 && dot < domain.length - 1 && !domain.startsWith('.') && !domain.includes('..');
  },
  uri: (text: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/.test(text),
  date(text: string): boolean {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
    return match !== null && realDate(Number(match[1]), Number(match[2]), Number(match[3]));
  },
  'date-time'(text: string): boolean {
    const match = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/.exec(text);
    if (match === null || !realDate(Number(match[1]), Number(match[2]), Number(match[3]))) return false;
    const [hour, minute, second] = [Number(match[4]), Number(match[5]), Number(match[6])];
    const offsetOk = match[7] === undefined || (Number(match[7]) <= 23 && Number(match[8]) <= 59);
    return hour <= 23 && minute <= 59 && second <= 60 && offsetOk;
  },
};

function realDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/** A copy of an answer's field, so the value kept shares nothing with what was posted. */
const copied = (value: Json): Json => (Array.isArray(value) ? [...value] : value);

/** What a value is, as a message says it: short, whatever was sent. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the text ${JSON.stringify(clipped(value))}`;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'a number JSON cannot hold';
  if (typeof value === 'boolean') return String(value);
  return typeof value;
}

const fieldList = (form: AskForm): string => quoted(Object.keys(form.properties));
const quoted = (texts: readonly string[]): string => texts.map((text) => JSON.stringify(text)).join(', ');

/** A text as a message quotes it: its first 40 characters. */
function clipped(text: string): string {
  const chars = [...text.slice(0, 200)];
  return chars.length > 40 ? `${chars.slice(0, 40).join('')}…` : text;
}
