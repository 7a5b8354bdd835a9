/**
 * An ask's form is MCP's elicitation `requestedSchema` (2025-11-25), read when the ask is
 * made, and its answer is checked against it on every path (DESIGN.md Part 3, "Asks with
 * forms"): each field type, each bound, each enum style, required fields, fields the form
 * lacks, and an attacker's answers.
 */
import { describe, expect, it } from 'vitest';
import { checkFormAnswer, formAnswerText, formOf, readForm, type AskForm } from '../../src/host/ask-form.ts';
import { MAX_FORM_FIELDS, MAX_FORM_TEXT_CHARS } from '../../src/host/ask-limits.ts';
import type { Json } from '../../src/json/json.ts';

/** A form read as the ask reads it; the test fails with the reason when it is refused. */
function form(schema: Json): AskForm {
  const read = readForm(schema);
  if (!read.ok) throw new Error(read.message);
  return read.form;
}

/** Where and why `schema` is refused. */
function refusal(schema: unknown): { field: string; message: string } {
  const read = readForm(schema);
  if (read.ok) throw new Error(`accepted ${JSON.stringify(schema)}`);
  return { field: read.field, message: read.message };
}

/** The field an answer is refused for, and why. */
function refused(f: AskForm, answer: unknown): { field: string; message: string } {
  const checked = checkFormAnswer(f, answer);
  if (checked.ok) throw new Error(`took ${JSON.stringify(answer)}`);
  return { field: checked.field, message: checked.message };
}

const one = (field: Json, required = true): AskForm => form({ type: 'object', properties: { x: field }, ...(required ? { required: ['x'] } : {}) });

const SIGNUP = form({
  type: 'object',
  properties: {
    email: { type: 'string', title: 'Email', format: 'email' },
    age: { type: 'integer', minimum: 18, maximum: 130 },
    score: { type: 'number', minimum: 0, maximum: 1, default: 0.5 },
    subscribe: { type: 'boolean', default: false },
    plan: {
      type: 'string',
      oneOf: [
        { const: 'free', title: 'Free' },
        { const: 'pro', title: 'Pro' },
      ],
    },
    colour: { type: 'string', enum: ['red', 'green'] },
    size: { type: 'string', enum: ['s', 'm'], enumNames: ['Small', 'Medium'] },
    tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2 },
    labels: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'x', title: 'Ex' },
          { const: 'y', title: 'Why' },
        ],
      },
    },
  },
  required: ['email', 'age'],
});

describe('a form is read as MCP writes requestedSchema', () => {
  it('keeps every field kind of the 2025-11-25 schema as it was given', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', description: 'Your name', minLength: 1, maxLength: 50, default: 'Ada' },
        when: { type: 'string', format: 'date-time' },
        count: { type: 'integer', minimum: 1, maximum: 9, default: 3 },
        ratio: { type: 'number', minimum: 0.5 },
        ok: { type: 'boolean', default: true },
        pick: { type: 'string', enum: ['a', 'b'], default: 'b' },
        titled: { type: 'string', oneOf: [{ const: 'a', title: 'A' }] },
        legacy: { type: 'string', enum: ['a', 'b'], enumNames: ['A', 'B'] },
        many: { type: 'array', minItems: 0, maxItems: 2, items: { type: 'string', enum: ['a', 'b'] }, default: ['a'] },
        manyTitled: { type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }] } },
      },
      required: ['name', 'count'],
    };
    expect(form(schema)).toEqual(schema);
  });

  it("reads Lua's empty table as the empty list where a list is due (required, a multi-select's default)", () => {
    expect(form({ type: 'object', properties: { a: { type: 'array', items: { type: 'string', enum: ['x'] }, default: {} } }, required: {} })).toEqual({
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'string', enum: ['x'] }, default: [] } },
    });
  });

  it('is read from the ask arguments, and an ask without one has none', () => {
    expect(formOf({ question: 'q', form: { type: 'object', properties: { a: { type: 'boolean' } } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'boolean' } },
    });
    expect(formOf({ question: 'q' })).toBeNull();
    expect(formOf(null)).toBeNull();
    expect(formOf({ form: 'not a form' })).toBeNull();
  });

  it.each([
    ['not an object', 'a form', 'form'],
    ['a list', [1], 'form'],
    ['not type object', { type: 'array', properties: { a: { type: 'boolean' } } }, 'form.type'],
    ['no fields', { type: 'object', properties: {} }, 'form.properties'],
    ['fields as a list', { type: 'object', properties: [{ type: 'boolean' }] }, 'form.properties'],
    ['a key MCP lacks', { type: 'object', properties: { a: { type: 'boolean' } }, additionalProperties: false }, 'form.additionalProperties'],
    ['a nested object field', { type: 'object', properties: { a: { type: 'object', properties: {} } } }, 'form.properties.a.type'],
    ['a field without a type', { type: 'object', properties: { a: { title: 'A' } } }, 'form.properties.a.type'],
    ['a pattern (not in MCP)', { type: 'object', properties: { a: { type: 'string', pattern: '^a' } } }, 'form.properties.a.pattern'],
    ['an unknown format', { type: 'object', properties: { a: { type: 'string', format: 'phone' } } }, 'form.properties.a.format'],
    ['minLength above maxLength', { type: 'object', properties: { a: { type: 'string', minLength: 5, maxLength: 2 } } }, 'form.properties.a.minLength'],
    ['a negative maxLength', { type: 'object', properties: { a: { type: 'string', maxLength: -1 } } }, 'form.properties.a.maxLength'],
    ['a maxLength past the cap', { type: 'object', properties: { a: { type: 'string', maxLength: MAX_FORM_TEXT_CHARS + 1 } } }, 'form.properties.a.maxLength'],
    ['a minimum as text', { type: 'object', properties: { a: { type: 'number', minimum: '1' } } }, 'form.properties.a.minimum'],
    ['minimum above maximum', { type: 'object', properties: { a: { type: 'integer', minimum: 3, maximum: 1 } } }, 'form.properties.a.minimum'],
    ['a default of the wrong type', { type: 'object', properties: { a: { type: 'integer', default: 'one' } } }, 'form.properties.a.default'],
    ['a default out of bounds', { type: 'object', properties: { a: { type: 'integer', maximum: 3, default: 4 } } }, 'form.properties.a.default'],
    ['a default outside the enum', { type: 'object', properties: { a: { type: 'string', enum: ['x'], default: 'y' } } }, 'form.properties.a.default'],
    ['an empty enum', { type: 'object', properties: { a: { type: 'string', enum: [] } } }, 'form.properties.a.enum'],
    ['an enum of numbers', { type: 'object', properties: { a: { type: 'string', enum: [1, 2] } } }, 'form.properties.a.enum[1]'],
    ['an enum listing a value twice', { type: 'object', properties: { a: { type: 'string', enum: ['x', 'x'] } } }, 'form.properties.a.enum'],
    [
      'enum and oneOf together',
      { type: 'object', properties: { a: { type: 'string', enum: ['x'], oneOf: [{ const: 'x', title: 'X' }] } } },
      'form.properties.a',
    ],
    [
      'enumNames of another length',
      { type: 'object', properties: { a: { type: 'string', enum: ['x', 'y'], enumNames: ['X'] } } },
      'form.properties.a.enumNames',
    ],
    ['a oneOf option without a title', { type: 'object', properties: { a: { type: 'string', oneOf: [{ const: 'x' }] } } }, 'form.properties.a.oneOf[1].title'],
    ['a multi-select without items', { type: 'object', properties: { a: { type: 'array' } } }, 'form.properties.a.items'],
    ['a multi-select of objects', { type: 'object', properties: { a: { type: 'array', items: { type: 'object' } } } }, 'form.properties.a.items'],
    [
      'a multi-select with minItems above its options',
      { type: 'object', properties: { a: { type: 'array', minItems: 3, items: { type: 'string', enum: ['x'] } } } },
      'form.properties.a.minItems',
    ],
    ['required naming no field', { type: 'object', properties: { a: { type: 'boolean' } }, required: ['b'] }, 'form.required[1]'],
    ['required as a text', { type: 'object', properties: { a: { type: 'boolean' } }, required: 'a' }, 'form.required'],
    ['a __proto__ field', JSON.parse('{"type":"object","properties":{"__proto__":{"type":"boolean"}}}'), 'form.properties.__proto__'],
    ['a huge title', { type: 'object', properties: { a: { type: 'boolean', title: 'x'.repeat(10_000) } } }, 'form.properties.a.title'],
  ])('refuses %s, naming where', (_name, schema, field) => {
    const why = refusal(schema);
    expect(why.field).toBe(field);
    expect(why.message.startsWith(field)).toBe(true);
  });

  it('refuses more fields than the cap', () => {
    const properties = Object.fromEntries(Array.from({ length: MAX_FORM_FIELDS + 1 }, (_, i) => [`f${i}`, { type: 'boolean' }]));
    expect(refusal({ type: 'object', properties }).message).toBe(`form.properties has ${MAX_FORM_FIELDS + 1} fields; a form has at most ${MAX_FORM_FIELDS}`);
  });

  it('refuses a form too long to store and notify, naming its size', () => {
    const options = Array.from({ length: 100 }, (_, i) => `${i}-${'o'.repeat(190)}`);
    const properties = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`f${i}`, { type: 'string', enum: options }]));
    expect(refusal({ type: 'object', properties }).message).toMatch(/^form is \d+ characters of JSON; a form takes at most 32000$/);
  });
});

const good = { email: 'ada@example.com', age: 36 };

describe('an answer to a form', () => {
  it('is the object given, keys in canonical order as Lua reads it', () => {
    const answer = { tags: ['b', 'a'], age: 36, email: 'ada@example.com', subscribe: true, plan: 'pro', colour: 'red', size: 'm', labels: [], score: 1 };
    const checked = checkFormAnswer(SIGNUP, answer);
    expect(checked).toEqual({ ok: true, value: answer });
    if (checked.ok)
      expect(formAnswerText(checked.value)).toBe(
        '{"age":36,"colour":"red","email":"ada@example.com","labels":[],"plan":"pro","score":1,"size":"m","subscribe":true,"tags":["b","a"]}',
      );
  });

  it('fills in no default: an optional field left out stays out', () => {
    expect(checkFormAnswer(SIGNUP, good)).toEqual({ ok: true, value: good });
  });

  it('must hold every required field, even one with a default', () => {
    expect(refused(SIGNUP, { email: 'ada@example.com' })).toEqual({ field: 'age', message: 'the field "age" is required' });
    expect(refused(one({ type: 'boolean', default: true }), {})).toEqual({ field: 'x', message: 'the field "x" is required' });
  });

  it('refuses a field the form lacks, naming it and the fields it has', () => {
    expect(refused(one({ type: 'boolean' }), { x: true, y: 1 })).toEqual({ field: 'y', message: 'the form has no field "y"; its fields are "x"' });
  });

  it.each([
    ['text', { type: 'string' }, 5, 'must be a text, not 5'],
    ['text under minLength', { type: 'string', minLength: 3 }, 'ab', 'is 2 characters long; it takes at least 3'],
    ['text over maxLength', { type: 'string', maxLength: 3 }, 'abcd', 'is 4 characters long; it takes at most 3'],
    [
      'text over the cap',
      { type: 'string' },
      'x'.repeat(MAX_FORM_TEXT_CHARS + 1),
      `is ${MAX_FORM_TEXT_CHARS + 1} characters long; it takes at most ${MAX_FORM_TEXT_CHARS}`,
    ],
    ['email', { type: 'string', format: 'email' }, 'ada at example.com', 'must be an email address, such as name@example.com'],
    ['email with two @', { type: 'string', format: 'email' }, 'a@b@c.com', 'must be an email address, such as name@example.com'],
    ['uri', { type: 'string', format: 'uri' }, '/relative/path', 'must be an absolute URI, such as https://example.com/page'],
    ['date', { type: 'string', format: 'date' }, '2026-02-30', 'must be a date as YYYY-MM-DD, such as 2026-12-31'],
    ['date-time', { type: 'string', format: 'date-time' }, '2026-12-31 09:30', 'must be a date and time as RFC 3339 gives it, such as 2026-12-31T09:30:00Z'],
    ['number', { type: 'number' }, '5', 'must be a number, not the text "5"'],
    ['number below minimum', { type: 'number', minimum: 0 }, -0.5, 'must be at least 0, not -0.5'],
    ['number above maximum', { type: 'number', maximum: 1 }, 1.5, 'must be at most 1, not 1.5'],
    ['integer', { type: 'integer' }, 1.5, 'must be a whole number, not 1.5'],
    ['NaN', { type: 'number' }, Number.NaN, 'must be a number, not a number JSON cannot hold'],
    ['Infinity', { type: 'integer' }, Number.POSITIVE_INFINITY, 'must be a whole number, not a number JSON cannot hold'],
    ['boolean', { type: 'boolean' }, 'true', 'must be true or false, not the text "true"'],
    ['boolean as 1', { type: 'boolean' }, 1, 'must be true or false, not 1'],
    ['enum', { type: 'string', enum: ['red', 'green'] }, 'blue', 'must be one of "red", "green", not "blue"'],
    ['enum by its label', { type: 'string', enum: ['s'], enumNames: ['Small'] }, 'Small', 'must be one of "s", not "Small"'],
    ['titled enum by its title', { type: 'string', oneOf: [{ const: 'pro', title: 'Pro' }] }, 'Pro', 'must be one of "pro", not "Pro"'],
    ['multi-select as a text', { type: 'array', items: { type: 'string', enum: ['a'] } }, 'a', 'must be a list of options ("a"), not the text "a"'],
    [
      'multi-select off its options',
      { type: 'array', items: { type: 'string', enum: ['a'] } },
      ['b'],
      'holds the text "b", which is none of its options ("a")',
    ],
    [
      'multi-select titled off its options',
      { type: 'array', items: { anyOf: [{ const: 'x', title: 'X' }] } },
      ['X'],
      'holds the text "X", which is none of its options ("x")',
    ],
    ['multi-select twice', { type: 'array', items: { type: 'string', enum: ['a', 'b'] } }, ['a', 'a'], 'holds an option twice'],
    ['multi-select under minItems', { type: 'array', minItems: 2, items: { type: 'string', enum: ['a', 'b'] } }, ['a'], 'holds 1 options; pick at least 2'],
    ['multi-select over maxItems', { type: 'array', maxItems: 1, items: { type: 'string', enum: ['a', 'b'] } }, ['a', 'b'], 'holds 2 options; pick at most 1'],
    ['a nested object for a text', { type: 'string' }, { value: 'x' }, 'must be a text, not an object'],
    ['a list for a scalar', { type: 'integer' }, [1], 'must be a whole number, not a list'],
    ['null', { type: 'string' }, null, 'must be a text, not null'],
  ])('refuses a wrong %s, naming the field', (_name, field, value, problem) => {
    expect(refused(one(field as Json), { x: value })).toEqual({ field: 'x', message: `the field "x" ${problem}` });
  });

  it.each([
    ['email', 'email', 'first.last+tag@mail.example.org'],
    ['uri', 'uri', 'urn:isbn:0451450523'],
    ['date in a leap year', 'date', '2024-02-29'],
    ['date-time with an offset', 'date-time', '2026-12-31T23:59:60.5+05:30'],
  ])('takes a good %s', (_name, format, value) => {
    expect(checkFormAnswer(one({ type: 'string', format }), { x: value }).ok).toBe(true);
  });

  it('takes a titled option by its value and a whole number for a number', () => {
    expect(checkFormAnswer(one({ type: 'string', oneOf: [{ const: 'pro', title: 'Pro' }] }), { x: 'pro' }).ok).toBe(true);
    expect(checkFormAnswer(one({ type: 'number' }), { x: 3 }).ok).toBe(true);
  });
});

describe("an attacker's answers", () => {
  it.each([
    ['text', 'yes', ''],
    ['a list', [{ email: 'a@b.co' }], ''],
    ['null', null, ''],
    ['a number', 7, ''],
  ])('refuses %s for the whole answer', (_name, answer, field) => {
    const why = refused(SIGNUP, answer);
    expect(why.field).toBe(field);
    expect(why.message).toMatch(/^the answer to a form must be a JSON object of its fields \("email", "age", /);
  });

  it.each([
    ['__proto__', '{"__proto__":{"polluted":true},"email":"a@b.co","age":20}'],
    ['constructor', '{"constructor":{"prototype":{"polluted":true}},"email":"a@b.co","age":20}'],
    ['prototype', '{"prototype":1,"email":"a@b.co","age":20}'],
    ['hasOwnProperty', '{"hasOwnProperty":"x","email":"a@b.co","age":20}'],
  ])('refuses a %s key as a field the form lacks, and pollutes nothing', (key, text) => {
    const why = refused(SIGNUP, JSON.parse(text));
    expect(why.field).toBe(key);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('finds no field through the prototype: a form without "toString" has none', () => {
    const f = one({ type: 'boolean' }, false);
    expect(refused(f, { toString: true }).field).toBe('toString');
    expect(refused(one({ type: 'boolean' }), Object.create({ x: true })).message).toBe('the field "x" is required');
  });

  it('refuses a huge text and a huge key without quoting either whole', () => {
    const huge = 'x'.repeat(1_000_000);
    const text = refused(one({ type: 'string', enum: ['a'] }), { x: huge });
    expect(text.message.length).toBeLessThan(200);
    const key = refused(one({ type: 'boolean' }), { [huge]: true });
    expect(key.message.length).toBeLessThan(200);
  });

  it('keeps nothing of the posted object: the value is a copy', () => {
    const tags = ['a'];
    const checked = checkFormAnswer(SIGNUP, { ...good, tags });
    tags.push('c');
    expect(checked.ok && checked.value.tags).toEqual(['a']);
  });
});
