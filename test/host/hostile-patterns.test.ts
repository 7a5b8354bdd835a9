/**
 * Hostile schemas (issue 25): the regular expressions of a tool's parameter schema run on a
 * linear-time engine (RE2), so a pattern built to backtrack (`^(a|a)*$`: 12 s against 30
 * characters on V8) answers at once, whether the argument comes from a model or a script;
 * ECMAScript's common patterns keep their meaning; what RE2 cannot match in linear time, and
 * a schema past the bounds on depth and size, are refused with a message naming why.
 *
 * A backtracking engine would take hours on these inputs: each test's timeout bounds a
 * regression (the check is synchronous, so the test ends late, and fails).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { ToolManifest } from '../../src/host/pack.ts';
import { checkToolArguments } from '../../src/host/tool-arguments.ts';
import type { Json } from '../../src/json/json.ts';
import { MAX_SCHEMA_CHARS, MAX_SCHEMA_DEPTH, parameterSchemaProblem } from '../../src/json/parameter-schema-limits.ts';
import { lua, newPlatform } from '../engine/helpers.ts';
import { WRITER, eventsOf, resultOf, runFixture } from '../engine/fixture-run.ts';

function tool(parameters: Json, id = 'acme/probe'): ToolManifest {
  return { id, description: 'A test tool.', parameters, output: 'plain', trusted: true };
}

/** Patterns that backtrack exponentially on V8, each with a text that makes them. */
const CATASTROPHIC: [pattern: string, attack: string][] = [
  ['^(a|a)*$', `${'a'.repeat(40)}!`],
  ['^(a+)+$', `${'a'.repeat(40)}!`],
  ['(x+x+)+y', 'x'.repeat(5_000)],
  ['^(\\w+\\s?)*$', `${'word '.repeat(2_000)}!`],
  ['^(a|aa)+$', `${'a'.repeat(80)}b`],
  ['^([a-zA-Z0-9]+\\.?)+@example\\.com$', `${'a'.repeat(60)}!`],
  ['^(.*a){20}$', `${'a'.repeat(40)}b`],
  ['^(\\d+)*[a-z]$', `${'1'.repeat(60)}!`],
];

describe('a catastrophic pattern in a parameter schema', () => {
  it('answers a `pattern` at once, with the message the pattern check gives', { timeout: 10_000 }, () => {
    for (const [pattern, attack] of CATASTROPHIC) {
      const probe = tool({ type: 'object', properties: { v: { type: 'string', pattern } } });
      expect(checkToolArguments(probe, { v: attack })).toBe(`acme_probe: argument "v" must match the pattern ${JSON.stringify(pattern)}`);
    }
  });

  it('answers a `patternProperties` key at once, and still checks the fields it matches', { timeout: 10_000 }, () => {
    for (const [pattern, attack] of CATASTROPHIC) {
      const probe = tool({ type: 'object', patternProperties: { [pattern]: { type: 'integer' } } });
      expect(checkToolArguments(probe, { [attack]: 'not an integer' })).toBeNull();
    }
    const ages = tool({ type: 'object', patternProperties: { '^(a+)+$': { type: 'integer' } } });
    expect(checkToolArguments(ages, { aaaa: 'x' })).toBe('acme_probe: argument "aaaa" must be an integer');
  });

  it('answers `propertyNames` at once, naming the field it refuses', { timeout: 10_000 }, () => {
    for (const [pattern, attack] of CATASTROPHIC) {
      const probe = tool({ type: 'object', propertyNames: { pattern } });
      expect(checkToolArguments(probe, { [attack]: 1 })).toMatch(/^acme_probe: unexpected argument "/);
    }
  });

  it('answers at once where the pattern sits under items, $defs and anyOf', { timeout: 10_000 }, () => {
    const probe = tool({
      type: 'object',
      $defs: { word: { type: 'string', pattern: '^(a|a)*$' } },
      properties: { list: { type: 'array', items: { $ref: '#/$defs/word' } }, either: { anyOf: [{ type: 'integer' }, { pattern: '^(a+)+$' }] } },
    });
    expect(checkToolArguments(probe, { list: ['aa', `${'a'.repeat(40)}!`] })).toBe('acme_probe: argument "list[1]" must match the pattern "^(a|a)*$"');
    expect(checkToolArguments(probe, { either: `${'a'.repeat(40)}!` })).toBe('acme_probe: argument "either" does not match any of the forms the tool accepts');
    expect(checkToolArguments(probe, { list: ['aaa'], either: 'aaaa' })).toBeNull();
  });

  it('leaves the global RegExp as it was, after a match and after a failure', () => {
    const native = globalThis.RegExp;
    checkToolArguments(tool({ type: 'object', properties: { v: { pattern: '^a$' } } }), { v: 'b' });
    expect(globalThis.RegExp).toBe(native);
    expect(/^a$/.test('a') && new RegExp('(?<=a)b').test('ab')).toBe(true);
  });
});

describe('a common pattern', () => {
  /** Pattern, text, whether ECMAScript matches. */
  const COMMON: [string, string, boolean][] = [
    ['^[A-Z]{3}$', 'ABC', true],
    ['^[A-Z]{3}$', 'abc', false],
    ['^\\d{4}-\\d{2}-\\d{2}$', '2026-12-03', true],
    ['^\\d+$', '١٢', false],
    ['^\\w+$', 'snake_case_1', true],
    ['^\\w+$', 'café', false],
    ['\\bcat\\b', 'a cat sat', true],
    ['^\\s*$', ' \t\v\u00a0\u2028\ufeff', true],
    ['^\\S+$', 'a\u00a0b', false],
    ['^[^\\s]+$', 'a\u3000b', false],
    ['^.$', '\r', false],
    ['^.$', '😀', true],
    ['^\\p{L}+$', 'héllo', true],
    ['^\\p{Lu}', 'Élan', true],
    ['^(?<year>\\d{4})-(?<month>\\d{2})$', '2026-12', true],
    ['^\\u00e9$', 'é', true],
    ['^\\u{1F600}$', '😀', true],
    ['^a$', 'a\n', false],
    ['^https?://[^/]+/', 'https://example.com/x', true],
    ['^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$', 'ada@example.org', true],
    ['^[[:alpha:]+$', ':a[', true],
    ['^(?:red|green|blue)$', 'green', true],
    ['^[^]$', '\n', true],
    ['^[\\-+]?\\d+(\\.\\d+)?$', '-3.14', true],
    ['^/api/v[0-9]+/', '/api/v2/users', true],
  ];

  it('means what it means in ECMAScript', () => {
    for (const [pattern, text, matches] of COMMON) {
      expect(new RegExp(pattern, 'u').test(text), `ECMAScript: ${pattern} against ${JSON.stringify(text)}`).toBe(matches);
      const probe = tool({ type: 'object', properties: { v: { type: 'string', pattern } } });
      expect(checkToolArguments(probe, { v: text }), `${pattern} against ${JSON.stringify(text)}`).toBe(
        matches ? null : `acme_probe: argument "v" must match the pattern ${JSON.stringify(pattern)}`,
      );
    }
  });
});

describe('a pattern RE2 cannot match in linear time', () => {
  const refused: [string, string][] = [
    ['^(?=.*\\d).{8,}$', 'cannot be matched in linear time (it has a lookahead or lookbehind)'],
    ['^(?!admin).*$', 'cannot be matched in linear time (it has a lookahead or lookbehind)'],
    ['(?<=\\$)\\d+', 'cannot be matched in linear time (it has a lookahead or lookbehind)'],
    ['(?<!x)y', 'cannot be matched in linear time (it has a lookahead or lookbehind)'],
    ['^(a)\\1$', 'cannot be matched in linear time (it has a backreference)'],
    ['^(?<q>["\'])\\w+\\k<q>$', 'cannot be matched in linear time (it has a backreference)'],
    ['^\\p{Letter}+$', 'is one RE2 cannot take (invalid character class range: `\\p{Letter}`)'],
    ['^a{1001}$', 'is one RE2 cannot take (invalid repeat count: `{1001}`)'],
    ['(', 'is not a regular expression'],
    ['a'.repeat(5_000), 'is longer than 4096 characters'],
  ];

  it("refuses the tool's schema, naming the pattern and why, before any argument is matched", () => {
    for (const [pattern, why] of refused) {
      const quoted = JSON.stringify(pattern);
      const shown = quoted.length > 80 ? `${quoted.slice(0, 80)}...` : quoted;
      for (const parameters of <Json[]>[
        { type: 'object', properties: { v: { type: 'string', pattern } } },
        { type: 'object', patternProperties: { [pattern]: {} } },
        { type: 'object', propertyNames: { pattern } },
        { type: 'object', properties: { v: { type: 'array', items: { anyOf: [{ pattern }] } } } },
      ]) {
        expect(checkToolArguments(tool(parameters), {})).toBe(
          `acme_probe: the tool's parameter schema has the pattern ${shown}, which ${why}, so its arguments cannot be checked`,
        );
      }
    }
  });

  it('is no pattern inside enum, const, default or examples, which hold data', () => {
    const probe = tool({ type: 'object', properties: { v: { enum: [{ pattern: '(?=x)' }], default: { pattern: '(a)\\1' } } } });
    expect(checkToolArguments(probe, { v: { pattern: '(?=x)' } })).toBeNull();
  });
});

describe('the bounds on a parameter schema', () => {
  function nested(depth: number): Json {
    let schema: Json = { type: 'string' };
    for (let level = 1; level < depth; level++) schema = { type: 'object', properties: { a: schema } };
    return schema;
  }

  it(`takes a schema ${MAX_SCHEMA_DEPTH} levels deep and refuses one deeper`, () => {
    expect(parameterSchemaProblem(nested(MAX_SCHEMA_DEPTH / 2))).toBeNull();
    expect(parameterSchemaProblem(nested(MAX_SCHEMA_DEPTH * 4))).toBe(`is nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
    expect(checkToolArguments(tool(nested(100_000)), {})).toBe(
      `acme_probe: the tool's parameter schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels, so its arguments cannot be checked`,
    );
  });

  it(`refuses a schema longer than ${MAX_SCHEMA_CHARS} characters of JSON`, () => {
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`field_${i}`, { type: 'string' }])) };
    expect(checkToolArguments(tool(wide), {})).toBe(
      "acme_probe: the tool's parameter schema is longer than 65,536 characters of JSON, so its arguments cannot be checked",
    );
  });
});

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

describe('a catastrophic pattern in a run', () => {
  const host = {
    packs: {
      'acme/names': {
        tools: [{ name: 'greet', parameters: { type: 'object', properties: { name: { type: 'string', pattern: '^(\\w+\\s?)*$' } } }, returns: 'hello' }],
      },
    },
  };
  const attack = `${'word '.repeat(2_000)}!`;

  it('fails the call a model makes with a text built to backtrack, and the loop goes on', { timeout: 20_000 }, async () => {
    const outcome = await runFixture(
      platform,
      lua(
        ["models.use('writer')", "tools.offer('names/greet')", "messages:user('Greet.')", 'return models.loop()'].join('\n'),
        `uses: [acme/names]\n${WRITER}`,
      ),
      {
        host,
        model: [
          {
            tool_calls: [
              { id: 'c1', name: 'names_greet', arguments: { name: attack } },
              { id: 'c2', name: 'names_greet', arguments: { name: 'Ada Lovelace' } },
            ],
          },
          { content: 'done' },
        ],
      },
    );
    expect(resultOf(outcome)).toBe('done');
    expect(eventsOf(outcome, 'tool_call_failed')).toMatchObject([
      { tool_call_id: 'c1', error: 'names_greet: argument "name" must match the pattern "^(\\\\w+\\\\s?)*$"' },
    ]);
    expect(eventsOf(outcome, 'tool_call_succeeded')).toMatchObject([{ tool_call_id: 'c2' }]);
  });

  it("fails a script's call with the same text as a tool failure it can catch", { timeout: 20_000 }, async () => {
    const outcome = await runFixture(
      platform,
      lua(
        `local ok, err = pcall(tools.call, 'names/greet', { name = string.rep('word ', 2000) .. '!' })\nreturn tostring(ok) .. '|' .. err.kind .. '|' .. tools.call('names/greet', { name = 'Ada' })`,
        'uses: [acme/names]\n',
      ),
      { host },
    );
    expect(resultOf(outcome)).toMatch(/^false\|tool\|.*hello/s);
  });
});
