import { describe, expect, it } from 'vitest';
import { argsFromCommandLine, argsFromData } from '../../src/prompt/run-args.ts';
import { BASE_FRONTMATTER, frontmatterErrors, parseOk, promptText } from './helpers.ts';
import { inputSchemaOf } from '../../src/worker/mcp/served-tools.ts';

const messages = (lines: readonly string[]) => frontmatterErrors([...lines]).map((e) => e.message);
const argsOf = (lines: readonly string[]) => parseOk(promptText([...BASE_FRONTMATTER, ...lines])).frontmatter.args;

const ADDRESS = [
  'args:',
  '  name: { type: string, default: "" }',
  '  address:',
  '    type: json',
  '    description: Where to write',
  '    schema:',
  '      $schema: https://json-schema.org/draft/2020-12/schema',
  '      $defs:',
  '        address:',
  '          type: object',
  '          properties: { street: { type: string }, city: { type: string } }',
  '          required: [city]',
  '          additionalProperties: false',
  '      $ref: "#/$defs/address"',
];

describe("a json arg's schema:", () => {
  it('is read as written', () => {
    expect(argsOf(ADDRESS).address).toEqual({
      type: 'json',
      description: 'Where to write',
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $defs: {
          address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        },
        $ref: '#/$defs/address',
      },
    });
  });

  it('checks a value given as data or on the command line, naming the arg and the place', () => {
    const args = argsOf(ADDRESS);
    expect(argsFromData(args, { address: { city: 'Oslo' } })).toEqual({ ok: true, args: { name: '', address: { city: 'Oslo' } } });
    expect(argsFromData(args, { address: { street: 'Main' } })).toMatchObject({
      ok: false,
      arg: 'address',
      message: expect.stringMatching(/^args\.address: address does not fit its schema: .*city/),
    });
    expect(argsFromData(args, { address: { city: 'Oslo', zip: 1 } })).toMatchObject({
      ok: false,
      arg: 'address',
      message: expect.stringMatching(/does not fit its schema/),
    });
    expect(argsFromData(args, { address: 'Oslo' })).toMatchObject({ ok: false, arg: 'address' });
    expect(argsFromCommandLine(args, [{ key: 'address', value: '{"city": 7}' }])).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^--arg address=\{"city": 7\}: address does not fit its schema at \/city: /),
    });
    expect(argsFromCommandLine(args, [{ key: 'address', value: '{"city": "Rome"}' }])).toMatchObject({ ok: true });
  });

  it.each([
    [
      'a string arg with a schema',
      ['args:', '  n: { type: string, schema: { type: string } }'],
      /`args\.n\.schema`: only a json arg takes a schema \(this one is string\)/,
    ],
    [
      'another dialect',
      ['args:', '  j: { type: json, schema: { $schema: "http://json-schema.org/draft-07/schema#" } }'],
      /says \$schema .*draft-07.*JSON Schema 2020-12/,
    ],
    ['a pattern', ['args:', '  j: { type: json, schema: { type: string, pattern: "^(a+)+$" } }'], /has pattern: an arg's schema holds no regular expression/],
    ['patternProperties', ['args:', '  j: { type: json, schema: { patternProperties: { "^x": {} } } }'], /has patternProperties/],
    ['a remote $ref', ['args:', '  j: { type: json, schema: { $ref: "https://example.com/s.json" } }'], /refers only to its own \$defs/],
    ['a $ref to nothing', ['args:', '  j: { type: json, schema: { $ref: "#/$defs/none" } }'], /names no entry of its \$defs/],
    ['an $id', ['args:', '  j: { type: json, schema: { $id: "urn:x", type: object } }'], /has \$id/],
    ['a default that does not fit', ['args:', '  j: { type: json, default: 3, schema: { type: object } }'], /`args\.j\.default` does not fit its schema/],
    ['a schema nested past the bound', ['args:', `  j: { type: json, schema: ${'{ items: '.repeat(40)}{}${' }'.repeat(40)} }`], /nested deeper than 32 levels/],
  ])('refuses %s', (_, lines, message) => {
    const found = messages(lines);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(message);
  });

  it('takes a property named like a keyword', () => {
    expect(
      argsOf(['args:', '  j: { type: json, schema: { type: object, properties: { pattern: { type: string }, $ref: { type: string } } } }']).j?.schema,
    ).toBeDefined();
  });

  it("refuses two args' schemas defining one $defs name two ways, and takes the same definition twice", () => {
    const def = (type: string) => `{ type: json, schema: { $defs: { point: { type: ${type} } }, $ref: "#/$defs/point" } }`;
    expect(messages(['args:', `  a: ${def('object')}`, `  b: ${def('array')}`])).toEqual([
      "invalid frontmatter: `args.b.schema` defines $defs.point, which `args.a.schema` defines otherwise: a tool's input schema has one $defs, so give one of them another name",
    ]);
    expect(Object.keys(argsOf(['args:', `  a: ${def('object')}`, `  b: ${def('object')}`]))).toEqual(['a', 'b']);
  });

  it("is served as it stands in the prompt's MCP inputSchema, its $defs at the top", () => {
    expect(inputSchemaOf(argsOf(ADDRESS))).toEqual({
      type: 'object',
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: {
        address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      },
      properties: { name: { type: 'string', default: '' }, address: { $ref: '#/$defs/address', description: 'Where to write' } },
      required: ['address'],
      additionalProperties: false,
    });
  });
});
