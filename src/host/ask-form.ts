/**
 * An ask's form (`user-input/ask` with `form`): a flat object schema exactly as MCP's
 * elicitation `requestedSchema` (2025-11-25: StringSchema, NumberSchema, BooleanSchema and the
 * enum schemas, single- and multi-select, titled or not, and the legacy `enumNames`), so the
 * same form goes to an MCP caller as its elicitation's schema untouched. A form that is not
 * such a schema is refused when the ask is made, naming the place and what is wrong; its
 * answer, a JSON object, is checked by checkFormAnswer (ask-form-answer.ts) on every path
 * that gives one. A form is stored with its ask, indexed and notified, so it is capped too.
 */
import type { Json } from '../json/json.ts';
import {
  charCount,
  MAX_CHOICE_CHARS,
  MAX_FIELD_DESCRIPTION_CHARS,
  MAX_FIELD_NAME_CHARS,
  MAX_FIELD_TITLE_CHARS,
  MAX_FORM_CHARS,
  MAX_FORM_FIELDS,
  MAX_FORM_OPTIONS,
  MAX_FORM_TEXT_CHARS,
} from './ask-limits.ts';
import { FORMATS, fieldProblem } from './ask-form-answer.ts';

export { checkFormAnswer, formAnswerText, type FormAnswer } from './ask-form-answer.ts';
export { MAX_FIELD_DESCRIPTION_CHARS, MAX_FIELD_NAME_CHARS, MAX_FIELD_TITLE_CHARS, MAX_FORM_CHARS, MAX_FORM_FIELDS, MAX_FORM_OPTIONS, MAX_FORM_TEXT_CHARS };

/** An option of a titled enum: the value answered and the label shown. */
export interface FormOption {
  const: string;
  title: string;
}

/** What every field may say about itself. */
interface FieldBase {
  title?: string;
  description?: string;
}

/** A text field (MCP's StringSchema). */
export interface TextField extends FieldBase {
  type: 'string';
  minLength?: number;
  maxLength?: number;
  format?: 'email' | 'uri' | 'date' | 'date-time';
  default?: string;
}

/** A number field (MCP's NumberSchema): `integer` takes whole numbers only. */
export interface NumberField extends FieldBase {
  type: 'number' | 'integer';
  minimum?: number;
  maximum?: number;
  default?: number;
}

/** A yes-or-no field (MCP's BooleanSchema). */
export interface BooleanField extends FieldBase {
  type: 'boolean';
  default?: boolean;
}

/** One of a list (MCP's untitled, titled and legacy single-select enums). */
export interface SelectField extends FieldBase {
  type: 'string';
  enum?: string[];
  /** Legacy labels of `enum`, one each (LegacyTitledEnumSchema). */
  enumNames?: string[];
  oneOf?: FormOption[];
  default?: string;
}

/** Some of a list (MCP's multi-select enums): `items.enum`, or `items.anyOf` with labels. */
export interface MultiSelectField extends FieldBase {
  type: 'array';
  minItems?: number;
  maxItems?: number;
  items: { type?: 'string'; enum?: string[]; anyOf?: FormOption[] };
  default?: string[];
}

/** A field of a form. */
export type FormField = TextField | NumberField | BooleanField | SelectField | MultiSelectField;

/** An ask's form: MCP's elicitation `requestedSchema`. */
export interface AskForm {
  $schema?: string;
  type: 'object';
  properties: { [name: string]: FormField };
  required?: string[];
}

/** A form as the JSON value it is (its interfaces carry no index signature, so the type system cannot see that itself). */
export const formJson = (form: AskForm | null): Json => form as unknown as Json;

/** A form read, or where it is wrong and why (the message names the place: `form.properties.age.minimum`). */
export type FormOutcome = { ok: true; form: AskForm } | { ok: false; field: string; message: string };

/** The form an ask's arguments carry, already checked when the ask was made; null for an ask without one (or one that is not a form). */
export function formOf(args: Json | undefined): AskForm | null {
  if (args === null || typeof args !== 'object' || Array.isArray(args) || !Object.hasOwn(args, 'form')) return null;
  const form = args.form;
  if (form === undefined || form === null) return null;
  const read = readForm(form);
  return read.ok ? read.form : null;
}

/** Reads `value` as a form: a copy holding only what MCP's schema has, or the first place that is wrong. */
export function readForm(value: unknown): FormOutcome {
  try {
    return { ok: true, form: formFrom(value) };
  } catch (error) {
    if (error instanceof FormError) return { ok: false, field: error.field, message: `${error.field} ${error.problem}` };
    throw error;
  }
}

/** Where a form is wrong; thrown within readForm only, so each check reads as one line. */
class FormError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field} ${problem}`);
  }
}

type Fields = { [key: string]: unknown };

const isObject = (value: unknown): value is Fields => value !== null && typeof value === 'object' && !Array.isArray(value);

function formFrom(value: unknown): AskForm {
  if (!isObject(value)) throw new FormError('form', 'must be an object schema: { type = "object", properties = { name = { type = "string" }, ... } }');
  onlyKeys(value, 'form', ['$schema', 'type', 'properties', 'required']);
  if (value.type !== 'object') throw new FormError('form.type', 'must be "object": a form is a flat object of fields');
  const schema = optional(value, 'form', '$schema', text);
  const properties = value.properties;
  if (!isObject(properties) || Object.keys(properties).length === 0)
    throw new FormError('form.properties', 'must be a table of at least one field, such as { email = { type = "string", format = "email" } }');
  const names = Object.keys(properties);
  if (names.length > MAX_FORM_FIELDS) throw new FormError('form.properties', `has ${names.length} fields; a form has at most ${MAX_FORM_FIELDS}`);
  const fields: { [name: string]: FormField } = Object.create(null);
  for (const name of names) {
    const chars = charCount(name);
    if (chars === 0 || chars > MAX_FIELD_NAME_CHARS)
      throw new FormError('form.properties', `has a field name of ${chars} characters; a name has 1 to ${MAX_FIELD_NAME_CHARS}`);
    if (name === '__proto__') throw new FormError('form.properties.__proto__', 'is a name JavaScript objects reserve; name the field otherwise');
    fields[name] = fieldFrom(properties[name], `form.properties.${name}`);
  }
  const required = listOrEmpty(value.required);
  let requiredNames: string[] | undefined;
  if (required !== undefined && required !== null) {
    if (!Array.isArray(required)) throw new FormError('form.required', 'must be a list of field names');
    for (const [index, name] of required.entries()) {
      if (typeof name !== 'string' || !Object.hasOwn(fields, name))
        throw new FormError(`form.required[${index + 1}]`, `must name a field of form.properties (${names.map((n) => JSON.stringify(n)).join(', ')})`);
    }
    if (new Set(required).size !== required.length) throw new FormError('form.required', 'names a field twice');
    requiredNames = required as string[];
  }
  const form: AskForm = {
    ...(schema !== undefined ? { $schema: schema } : {}),
    type: 'object',
    properties: { ...fields },
    ...(requiredNames && requiredNames.length > 0 ? { required: [...requiredNames] } : {}),
  };
  const chars = charCount(JSON.stringify(form));
  if (chars > MAX_FORM_CHARS) throw new FormError('form', `is ${chars} characters of JSON; a form takes at most ${MAX_FORM_CHARS}`);
  return form;
}

function fieldFrom(value: unknown, at: string): FormField {
  if (!isObject(value)) throw new FormError(at, 'must be a field schema, such as { type = "string" }');
  const base: FieldBase = {
    ...labelled(value, at, 'title', MAX_FIELD_TITLE_CHARS),
    ...labelled(value, at, 'description', MAX_FIELD_DESCRIPTION_CHARS),
  };
  let field: FormField;
  switch (value.type) {
    case 'string':
      field = Object.hasOwn(value, 'enum') || Object.hasOwn(value, 'oneOf') ? selectFrom(value, at, base) : textFrom(value, at, base);
      break;
    case 'number':
    case 'integer': {
      onlyKeys(value, at, ['type', 'title', 'description', 'minimum', 'maximum', 'default']);
      const minimum = optional(value, at, 'minimum', finite);
      const maximum = optional(value, at, 'maximum', finite);
      if (minimum !== undefined && maximum !== undefined && minimum > maximum) throw new FormError(`${at}.minimum`, `is above maximum (${maximum})`);
      field = { type: value.type, ...base, ...(minimum !== undefined ? { minimum } : {}), ...(maximum !== undefined ? { maximum } : {}) };
      break;
    }
    case 'boolean':
      onlyKeys(value, at, ['type', 'title', 'description', 'default']);
      field = { type: 'boolean', ...base };
      break;
    case 'array':
      field = multiSelectFrom(value, at, base);
      break;
    default:
      throw new FormError(
        `${at}.type`,
        'must be "string", "number", "integer", "boolean" or "array" (a multi-select): a form field holds one value, never an object',
      );
  }
  if (Object.hasOwn(value, 'default') && value.default !== null && value.default !== undefined) {
    const fallback = field.type === 'array' ? listOrEmpty(value.default) : value.default;
    const problem = fieldProblem(field, fallback as Json);
    if (problem !== null) throw new FormError(`${at}.default`, `does not fit the field: it ${problem}`);
    (field as { default?: Json }).default = Array.isArray(fallback) ? [...(fallback as string[])] : (fallback as Json);
  }
  return field;
}

function textFrom(value: Fields, at: string, base: FieldBase): TextField {
  onlyKeys(value, at, ['type', 'title', 'description', 'minLength', 'maxLength', 'format', 'default']);
  const minLength = optional(value, at, 'minLength', count(MAX_FORM_TEXT_CHARS));
  const maxLength = optional(value, at, 'maxLength', count(MAX_FORM_TEXT_CHARS));
  if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) throw new FormError(`${at}.minLength`, `is above maxLength (${maxLength})`);
  const format = optional(
    value,
    at,
    'format',
    (v) => (typeof v === 'string' && FORMATS.includes(v) ? (v as TextField['format']) : undefined),
    'must be "email", "uri", "date" or "date-time"',
  );
  return {
    type: 'string',
    ...base,
    ...(minLength !== undefined ? { minLength } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
    ...(format !== undefined ? { format } : {}),
  };
}

function selectFrom(value: Fields, at: string, base: FieldBase): SelectField {
  onlyKeys(value, at, ['type', 'title', 'description', 'enum', 'enumNames', 'oneOf', 'default']);
  if (Object.hasOwn(value, 'enum') && Object.hasOwn(value, 'oneOf')) throw new FormError(at, 'has both enum and oneOf; a select lists its options once');
  if (Object.hasOwn(value, 'oneOf')) {
    if (Object.hasOwn(value, 'enumNames')) throw new FormError(`${at}.enumNames`, 'goes with enum only; oneOf options carry their own titles');
    return { type: 'string', ...base, oneOf: optionsFrom(value.oneOf, `${at}.oneOf`) };
  }
  const values = valuesFrom(value.enum, `${at}.enum`);
  if (!Object.hasOwn(value, 'enumNames') || value.enumNames === null) return { type: 'string', ...base, enum: values };
  const names = value.enumNames;
  if (!Array.isArray(names) || names.length !== values.length)
    throw new FormError(`${at}.enumNames`, `must be a list of ${values.length} labels, one for each value of enum`);
  names.forEach((name, index) => label(name, `${at}.enumNames[${index + 1}]`, MAX_CHOICE_CHARS));
  return { type: 'string', ...base, enum: values, enumNames: [...(names as string[])] };
}

function multiSelectFrom(value: Fields, at: string, base: FieldBase): MultiSelectField {
  onlyKeys(value, at, ['type', 'title', 'description', 'minItems', 'maxItems', 'items', 'default']);
  const items = value.items;
  if (!isObject(items))
    throw new FormError(
      `${at}.items`,
      'must be { type = "string", enum = { ... } } or { anyOf = { { const = ..., title = ... }, ... } }: an array field is a multi-select',
    );
  onlyKeys(items, `${at}.items`, ['type', 'enum', 'anyOf']);
  if (Object.hasOwn(items, 'enum') === Object.hasOwn(items, 'anyOf')) throw new FormError(`${at}.items`, 'must have either enum or anyOf');
  let options: MultiSelectField['items'];
  if (Object.hasOwn(items, 'enum')) {
    if (items.type !== 'string') throw new FormError(`${at}.items.type`, 'must be "string": the options are texts');
    options = { type: 'string', enum: valuesFrom(items.enum, `${at}.items.enum`) };
  } else {
    if (items.type !== undefined && items.type !== 'string') throw new FormError(`${at}.items.type`, 'must be "string": the options are texts');
    options = { ...(items.type === 'string' ? { type: 'string' as const } : {}), anyOf: optionsFrom(items.anyOf, `${at}.items.anyOf`) };
  }
  const offered = (options.enum ?? options.anyOf ?? []).length;
  const minItems = optional(value, at, 'minItems', count(offered));
  const maxItems = optional(value, at, 'maxItems', count(MAX_FORM_OPTIONS));
  if (minItems !== undefined && maxItems !== undefined && minItems > maxItems) throw new FormError(`${at}.minItems`, `is above maxItems (${maxItems})`);
  return { type: 'array', ...base, ...(minItems !== undefined ? { minItems } : {}), ...(maxItems !== undefined ? { maxItems } : {}), items: options };
}

/** An untitled enum's values: 1 to MAX_FORM_OPTIONS distinct texts of 1 to MAX_CHOICE_CHARS characters. */
function valuesFrom(value: unknown, at: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_FORM_OPTIONS)
    throw new FormError(at, `must be a list of 1 to ${MAX_FORM_OPTIONS} texts, the options`);
  value.forEach((item, index) => label(item, `${at}[${index + 1}]`, MAX_CHOICE_CHARS));
  if (new Set(value).size !== value.length) throw new FormError(at, 'lists an option twice');
  return [...(value as string[])];
}

/** A titled enum's options: 1 to MAX_FORM_OPTIONS of { const, title }, distinct values. */
function optionsFrom(value: unknown, at: string): FormOption[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_FORM_OPTIONS)
    throw new FormError(at, `must be a list of 1 to ${MAX_FORM_OPTIONS} options, each { const = "value", title = "Label" }`);
  const options = value.map((option, index): FormOption => {
    const where = `${at}[${index + 1}]`;
    if (!isObject(option)) throw new FormError(where, 'must be { const = "value", title = "Label" }');
    onlyKeys(option, where, ['const', 'title']);
    return { const: label(option.const, `${where}.const`, MAX_CHOICE_CHARS), title: label(option.title, `${where}.title`, MAX_CHOICE_CHARS) };
  });
  if (new Set(options.map((option) => option.const)).size !== options.length) throw new FormError(at, 'lists a value (const) twice');
  return options;
}

/** An empty table where a list is due is the empty list: Lua's `{}` crosses as an empty object. */
const listOrEmpty = (value: unknown): unknown => (isObject(value) && Object.keys(value).length === 0 ? [] : value);

/** Refuses any key of `value` outside `known`, naming it: a key MCP's schema lacks would mean nothing to an MCP client. */
function onlyKeys(value: Fields, at: string, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new FormError(`${at}.${key}`, `is not part of MCP's elicitation schema here; ${at} takes ${known.join(', ')}`);
  }
}

function labelled(value: Fields, at: string, key: 'title' | 'description', max: number): FieldBase {
  if (!Object.hasOwn(value, key) || value[key] === null || value[key] === undefined) return {};
  return { [key]: label(value[key], `${at}.${key}`, max, true) };
}

function label(value: unknown, at: string, max: number, mayBeEmpty = false): string {
  if (typeof value !== 'string') throw new FormError(at, 'must be a text');
  const chars = charCount(value);
  if ((!mayBeEmpty && chars === 0) || chars > max) throw new FormError(at, `is ${chars} characters long; it takes ${mayBeEmpty ? 0 : 1} to ${max}`);
  return value;
}

/** The value of optional key `key`, read by `read` (undefined: not acceptable, said by `expected`). */
function optional<T>(value: Fields, at: string, key: string, read: (v: unknown) => T | undefined, expected?: string): T | undefined {
  if (!Object.hasOwn(value, key) || value[key] === null || value[key] === undefined) return undefined;
  const got = read(value[key]);
  if (got === undefined) throw new FormError(`${at}.${key}`, expected ?? (read as { expects?: string }).expects ?? 'is not valid');
  return got;
}

const text = Object.assign((v: unknown) => (typeof v === 'string' ? v : undefined), { expects: 'must be a text' });
const finite = Object.assign((v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined), { expects: 'must be a number' });
const count = (max: number) =>
  Object.assign((v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max ? v : undefined), {
    expects: `must be a whole number from 0 to ${max}`,
  });
