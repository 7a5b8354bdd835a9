/**
 * JSON Schema validation inside workerd (issue 3): workerd refuses code generation from
 * strings, so ajv cannot compile a schema at run time here. The schemas Runvil owns are
 * compiled ahead of time (ajv standalone, scripts/gen-validators.mjs), and a tool's
 * parameters, which arrive at run time, are interpreted by @cfworker/json-schema through
 * the Harness's check (src/host/tool-arguments.ts). Both run here.
 *
 * The workers pool lets its own module runner generate code by replacing the global
 * `Function` with a proxy over its unsafe-eval binding; workerd's own constructor (still
 * reachable as any function's `constructor`) refuses. Each check below runs with that
 * constructor put back as the global `Function`, as a deployed Worker has it.
 */
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { WEB_MANIFEST } from '../../packs/web/manifest.ts';
import { USER_INPUT_MANIFEST } from '../../packs/user-input/manifest.ts';
import validateFrontmatter from '../../src/prompt/frontmatter-validator.generated.js';
import validateManifest from '../../src/host/pack-manifest-validator.generated.js';
import { checkPackManifest } from '../../src/host/pack-manifest.ts';
import type { ToolManifest } from '../../src/host/pack.ts';
import { checkToolArguments } from '../../src/host/tool-arguments.ts';

const [FETCH, SEARCH] = WEB_MANIFEST.tools as [ToolManifest, ToolManifest];

/** workerd's own Function constructor, which the pool's proxy wraps. */
const WORKERD_FUNCTION = function () {}.constructor as FunctionConstructor;

/** Runs `check` with workerd's own Function as the global, as in a deployed Worker. */
function withoutCodeGeneration<T>(check: () => T): T {
  const pooled = globalThis.Function;
  globalThis.Function = WORKERD_FUNCTION;
  try {
    return check();
  } finally {
    globalThis.Function = pooled;
  }
}

describe('workerd refuses code generation', () => {
  it('refuses new Function, and so ajv compiling a schema at run time', () => {
    withoutCodeGeneration(() => {
      expect(() => new Function('return 1')).toThrow(/Code generation from strings disallowed/);
      expect(() => new Ajv({ logger: false }).compile({ type: 'object', properties: { a: { type: 'string' } } })).toThrow(
        /Code generation from strings disallowed/,
      );
    });
  });
});

describe('validators generated ahead of time', () => {
  it('check a frontmatter', () =>
    withoutCodeGeneration(() => {
      expect(validateFrontmatter({ name: 'ok', description: 'Fine.', runvil: 0, uses: ['web'] })).toBe(true);
      expect(validateFrontmatter({ name: 'Not OK', description: 'Fine.', runvil: 1 })).toBe(false);
      expect(validateFrontmatter.errors?.map((error) => error.instancePath)).toEqual(['/name', '/runvil']);
    }));

  it('check a Pack manifest', () =>
    withoutCodeGeneration(() => {
      expect(validateManifest(WEB_MANIFEST)).toBe(true);
      expect(checkPackManifest(USER_INPUT_MANIFEST)).toEqual([]);
      expect(checkPackManifest({ fqName: 'acme/stats', description: 'd', tools: [{ ...FETCH, output: 'json' }] })).toEqual([
        '`tools[0].output` must be "plain" or "structured"',
      ]);
    }));
});

describe("a tool's arguments checked against its run-time schema (@cfworker/json-schema)", () => {
  it('pass arguments that fit', () =>
    withoutCodeGeneration(() => {
      expect(checkToolArguments(FETCH, { url: 'https://www.lua.org/' })).toBeNull();
      expect(checkToolArguments(SEARCH, { query: 'lua', count: 3 })).toBeNull();
    }));

  it('name the bad field of arguments that do not', () =>
    withoutCodeGeneration(() => {
      expect(checkToolArguments(FETCH, {})).toBe('web_fetch: missing url argument');
      expect(checkToolArguments(FETCH, { url: 42 })).toBe('web_fetch: argument "url" must be a string');
      expect(checkToolArguments(SEARCH, { query: 'lua', count: 0 })).toBe('web_search: argument "count" must be at least 1');
      const strict: ToolManifest = {
        id: 'acme/lookup',
        description: 'Look a term up.',
        parameters: {
          type: 'object',
          $defs: { positive: { type: 'integer', minimum: 1 } },
          properties: { term: { type: 'string', pattern: '^[a-z]+$' }, limit: { $ref: '#/$defs/positive' } },
          required: ['term'],
          additionalProperties: false,
        },
        output: 'plain',
        trusted: true,
      };
      expect(checkToolArguments(strict, { term: 'lua', limit: 0 })).toBe('acme_lookup: argument "limit" must be at least 1');
      expect(checkToolArguments(strict, { term: 'Lua' })).toBe('acme_lookup: argument "term" must match the pattern "^[a-z]+$"');
      expect(checkToolArguments(strict, { term: 'lua', extra: true })).toBe('acme_lookup: unexpected argument "extra"');
    }));
});

describe('patterns of a run-time schema in workerd (RE2, issue 25)', () => {
  const probe = (parameters: ToolManifest['parameters']): ToolManifest => ({
    id: 'acme/probe',
    description: 'A probe.',
    parameters,
    output: 'plain',
    trusted: true,
  });

  it('answer arguments built to backtrack at once, in pattern, patternProperties and propertyNames', { timeout: 10_000 }, () =>
    withoutCodeGeneration(() => {
      const attack = `${'a'.repeat(40)}!`;
      for (const pattern of ['^(a|a)*$', '^(a+)+$', '^(\\w+\\s?)*$']) {
        expect(checkToolArguments(probe({ type: 'object', properties: { v: { type: 'string', pattern } } }), { v: attack })).toBe(
          `acme_probe: argument "v" must match the pattern ${JSON.stringify(pattern)}`,
        );
        expect(checkToolArguments(probe({ type: 'object', patternProperties: { [pattern]: { type: 'integer' } } }), { [attack]: 'x' })).toBeNull();
        expect(checkToolArguments(probe({ type: 'object', propertyNames: { pattern } }), { [attack]: 1 })).toMatch(/^acme_probe: unexpected argument "a+/);
      }
      expect(checkToolArguments(probe({ type: 'object', properties: { v: { pattern: '(x+x+)+y' } } }), { v: 'x'.repeat(5_000) })).toBe(
        'acme_probe: argument "v" must match the pattern "(x+x+)+y"',
      );
    }),
  );

  it("keep ECMAScript's meaning of common patterns, and refuse what RE2 cannot match in linear time", () =>
    withoutCodeGeneration(() => {
      const check = (pattern: string, value: string) =>
        checkToolArguments(probe({ type: 'object', properties: { v: { type: 'string', pattern } } }), { v: value });
      expect(check('^\\d{4}-\\d{2}$', '2026-12')).toBeNull();
      expect(check('^\\s+$', '\v\u00a0')).toBeNull();
      expect(check('^\\p{L}+$', 'héllo')).toBeNull();
      expect(check('^(?<y>\\d{4})$', '2026')).toBeNull();
      expect(check('^.$', '\u2028')).toBe('acme_probe: argument "v" must match the pattern "^.$"');
      expect(check('^(?=x)', 'x')).toBe(
        `acme_probe: the tool's parameter schema has the pattern "^(?=x)", which cannot be matched in linear time (it has a lookahead or lookbehind), so its arguments cannot be checked`,
      );
      expect(globalThis.RegExp).toBe(/x/.constructor);
    }));
});
