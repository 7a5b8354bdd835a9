import { describe, expect, it } from 'vitest';
import { compileArgPath, readArgPath } from '../../src/config/trigger-paths.ts';
import { compileIRegexp } from '../../src/json/i-regexp.ts';
import type { Json } from '../../src/json/json.ts';

function read(path: string, payload: Json): Json | undefined {
  const compiled = compileArgPath(path);
  if (!compiled.ok) throw new Error(compiled.message);
  return readArgPath(compiled.path, payload);
}

/** Patterns that take exponential or polynomial time on a backtracking engine, each with a text that makes them. */
const CATASTROPHIC: [string, string][] = [
  ['(a|a)*b', 'a'.repeat(100_000)],
  ['(a+)+b', 'a'.repeat(100_000)],
  ['(a*)*b', 'a'.repeat(100_000)],
  ['(a|aa)+b', 'a'.repeat(100_000)],
  ['(.*a){20}b', 'a'.repeat(50_000)],
  ['(x+x+)+y', 'x'.repeat(100_000)],
  ['([a-z]+)*[0-9]', 'abcdefghij'.repeat(10_000)],
  ['(\\p{L}|\\p{Ll})*0', 'z'.repeat(100_000)],
  ['.*.*.*.*.*=', 'q'.repeat(50_000)],
];

describe('match() and search() in a trigger path', () => {
  it('match is a whole-text match and search finds the pattern anywhere (RFC 9485 I-Regexp)', () => {
    const payload = { l: ['abc', 'xabcx', 'ab'] };
    expect(read('$.l[?match(@, "a.c")]', payload)).toEqual(['abc']);
    expect(read('$.l[?search(@, "a.c")]', payload)).toEqual(['abc', 'xabcx']);
    expect(read('$.l[?match(@, "ab|abc")]', payload)).toEqual(['abc', 'ab']);
  });

  it("takes I-Regexp's meanings: ^ and $ are characters, . is no line break, \\p{..} categories", () => {
    expect(read('$.l[?match(@, "a$")]', { l: ['a$', 'a'] })).toEqual(['a$']);
    expect(read('$.l[?match(@, "^a")]', { l: ['^a', 'a'] })).toEqual(['^a']);
    expect(read('$.l[?match(@, "a.b")]', { l: ['a\nb', 'a\rb', 'a b', 'a😀b'] })).toEqual(['a b', 'a😀b']);
    expect(read('$.l[?match(@, "\\\\p{Lu}\\\\p{Ll}+")]', { l: ['Élan', 'élan', 'Ab'] })).toEqual(['Élan', 'Ab']);
    expect(read('$.l[?match(@, "[^0-9-]+")]', { l: ['abc', 'a-b', 'a1'] })).toEqual(['abc']);
    expect(read('$.l[?match(@, "a{2,3}")]', { l: ['a', 'aa', 'aaa', 'aaaa'] })).toEqual(['aa', 'aaa']);
  });

  it('is false for a value that is not a string, and for a pattern the payload gives that is no I-Regexp', () => {
    expect(read('$.l[?match(@, "1")]', { l: [1, '1', null, true, ['1'], { a: '1' }] })).toEqual(['1']);
    const rows = [
      { t: 'ab', p: 'a.' },
      { t: 'ab', p: '(a' },
      { t: 'ab', p: '(?=a)ab' },
      { t: '11', p: '\\d+' },
      { t: 'ab', p: 5 },
    ];
    expect(read('$.r[?match(@.t, @.p)].p', { r: rows })).toEqual(['a.']);
    expect(read('$.r[?search(@.t, @.p)].p', { r: rows })).toEqual(['a.']);
  });

  it('answers at once for catastrophic patterns written in the path, on long payload strings', () => {
    for (const [pattern, text] of CATASTROPHIC) {
      for (const how of ['match', 'search']) {
        const path = `$.l[?${how}(@, ${JSON.stringify(pattern)})]`;
        expect(read(path, { l: [text, `${text}!`] }), `${how} ${pattern}`).toBeUndefined();
      }
    }
    expect(read('$.l[?search(@, "(a|a)*b")]', { l: [`${'a'.repeat(100_000)}b`] })).toEqual([`${'a'.repeat(100_000)}b`]);
  });

  it('answers at once for catastrophic patterns the payload itself brings', () => {
    const rows = CATASTROPHIC.map(([p, t]) => ({ p, t }));
    expect(read('$.r[?match(@.t, @.p)]', { r: rows })).toBeUndefined();
    expect(read('$.r[?search(@.t, @.p)]', { r: rows })).toBeUndefined();
  });

  it('holds a payload’s patterns to a tighter size than a path’s own', () => {
    const text = 'a'.repeat(300);
    expect(read('$.l[?match(@, "a{300}")]', { l: [text] })).toEqual([text]);
    expect(read('$.r[?match(@.t, @.p)].t', { r: [{ t: text, p: 'a{299}a' }] })).toBeUndefined();
    expect(read('$.r[?match(@.t, @.p)].t', { r: [{ t: 'a'.repeat(200), p: 'a{200}' }] })).toEqual(['a'.repeat(200)]);
    expect(read('$.r[?search(@.t, @.p)].t', { r: [{ t: text, p: '\\p{L}{1000}' }] })).toBeUndefined();
  });

  it('compiles at most 32 new patterns from a payload in one reading', () => {
    const rows = Array.from({ length: 100 }, (_, i) => ({ t: `row${i}`, p: `row${i}` }));
    const first = read('$.r[?match(@.t, @.p)].t', { r: rows }) as string[];
    expect(first).toEqual(rows.slice(0, 32).map((row) => row.t));
  });

  it('refuses a payload pattern RE2 cannot take or one too long, as false', () => {
    const rows = [
      { t: 'a', p: 'a{1001}' },
      { t: 'a', p: `a${'|a'.repeat(600)}` },
      { t: 'a', p: '((a{100}){100}){100}' },
    ];
    expect(read('$.r[?match(@.t, @.p)]', { r: rows })).toBeUndefined();
  });
});

describe('compileArgPath', () => {
  it('refuses a path too long or nested too deep to compile, as a value, never an exception', () => {
    expect(compileArgPath(`$${'.a'.repeat(2100)}`)).toEqual({ ok: false, message: 'the path is longer than 4096 characters' });
    // How deep json-p3's parser can go depends on the stack: the outcome is a path or a refusal, never a crash.
    for (const path of [`$[?${'!'.repeat(4090)}@]`, `$[?${'('.repeat(2045)}@${')'.repeat(2045)}]`, `$[?${'length(@)==1 && '.repeat(220)}@]`]) {
      const outcome = compileArgPath(path);
      if (!outcome.ok) expect(outcome.message).toMatch(/^"\$\[\?.{37}"\.\.\. is nested too deeply to compile$/);
    }
    expect(compileArgPath(`$[?${'('.repeat(1000)}@${')'.repeat(1000)}]`).ok).toBe(true);
  });
});

describe('descendants of a deep payload', () => {
  /** `{ a: { a: ... { x: depth } } }`, `depth` levels deep. */
  function nested(depth: number): Json {
    let value: Json = { x: depth };
    for (let i = 1; i < depth; i++) value = { a: value };
    return value;
  }

  it('reads through every level a Worker body may have (64) and more', () => {
    for (const depth of [10, 51, 64, 100, 200]) {
      expect(read('$..x', nested(depth)), `depth ${depth}`).toEqual([depth]);
      expect(read('$[?@..x]..x', [nested(depth)]), `depth ${depth}`).toEqual([depth]);
    }
  });

  it('finds nothing, rather than throwing, past its limit', () => {
    expect(read('$..x', nested(400))).toBeUndefined();
    expect(read('$.a.a.a', nested(400))).toEqual(expect.objectContaining({ a: expect.anything() }));
  });
});

describe('compileIRegexp', () => {
  it('refuses a pattern whose repeats make it larger than its bound, counting each copy', () => {
    expect(compileIRegexp('\\p{L}{1000}').ok).toBe(true);
    expect(compileIRegexp('(ab){500}').ok).toBe(true);
    expect(compileIRegexp('((a{10}){10}){11}')).toEqual({
      ok: false,
      reason: 'is too large: it has 1100 characters and classes to match, repeats counted, more than 1000',
    });
    for (const source of ['(a{100}){11}', '(ab){501}', '(a|b){501}', '[a-z]{1000}b', 'x{2,}{3}']) expect(compileIRegexp(source).ok, source).toBe(false);
    const sized = compileIRegexp('(a{10}b){30}', 300);
    expect(sized).toEqual({ ok: false, reason: 'is too large: it has 330 characters and classes to match, repeats counted, more than 300' });
    expect(compileIRegexp('(a{9}b){30}', 300).ok).toBe(true);
  });

  it('refuses what RFC 9485 does not have, saying why', () => {
    const refused: [string, RegExp][] = [
      ['a**', /cannot have \* here/],
      ['a*?', /cannot have \? here/],
      ['(?:a)', /cannot have \? here/],
      ['(?<n>a)', /cannot have \? here/],
      ['(a', /unclosed group/],
      ['a)', /closes no group/],
      ['[a', /unclosed \[/],
      ['[]', /cannot have \] here/],
      ['[a-b-c]', /cannot have - here/],
      ['\\d', /\\d, which I-Regexp does not have/],
      ['\\w', /I-Regexp does not have/],
      ['\\b', /I-Regexp does not have/],
      ['\\1', /I-Regexp does not have/],
      ['\\k<a>', /I-Regexp does not have/],
      ['\\u0041', /I-Regexp does not have/],
      ['\\p{Greek}', /names no general category/],
      ['a{', /without its number/],
      ['a{,2}', /without its number/],
      ['a{2', /not closed/],
      ['{', /cannot have \{ here/],
      ['\\', /ends with \\/],
      ['\uD800', /lone surrogate/],
      ['a'.repeat(1025), /longer than 1024/],
    ];
    for (const [source, reason] of refused) {
      const outcome = compileIRegexp(source);
      expect(outcome.ok, source).toBe(false);
      if (!outcome.ok) expect(outcome.reason).toMatch(reason);
    }
  });

  it('takes the escapes, classes and categories RFC 9485 has', () => {
    const taken: [string, string][] = [
      ['\\(\\)\\*\\+\\-\\.\\?\\[\\\\\\]\\^\\{\\|\\}', '()*+-.?[\\]^{|}'],
      ['\\n\\r\\t', '\n\r\t'],
      ['[-a]+', '-a-'],
      ['[a-]+', 'a-'],
      ['[\\]\\-]+', ']-'],
      ['[\\p{Nd}x]+', '1x2'],
      ['\\P{L}+', '123'],
      ['', ''],
      ['a|', ''],
      ['😀+', '😀😀'],
    ];
    for (const [source, text] of taken) {
      const outcome = compileIRegexp(source);
      if (!outcome.ok) throw new Error(`${source}: ${outcome.reason}`);
      expect(outcome.regexp.match(text), source).toBe(true);
    }
  });
});

describe('member names are the payload’s own', () => {
  const names = ['constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'];

  it('finds nothing for an inherited name, whatever the way it is asked', () => {
    for (const name of names) {
      for (const path of [`$.${name}`, `$['${name}']`, `$.a.${name}`, `$..${name}`, `$.a[?@.${name}]`, `$[?length(@.${name}) > 0]`, `$.s.${name}`]) {
        expect(read(path, { a: { b: 1 }, s: 'text', l: [1] }), path).toBeUndefined();
      }
    }
    expect(read('$.length', 'abc')).toBeUndefined();
    expect(read('$.l.length', { l: [1, 2] })).toBeUndefined();
    expect(read('$.*', Object.create({ inherited: 1 }) as Json)).toBeUndefined();
  });

  it('finds a payload’s own member of such a name, as JSON.parse makes it', () => {
    const payload = JSON.parse('{"__proto__": {"x": 1}, "constructor": "c", "a": {"toString": 5}}') as Json;
    expect(read('$.__proto__.x', payload)).toBe(1);
    expect(read('$.constructor', payload)).toBe('c');
    expect(read('$.a.toString', payload)).toBe(5);
    expect(read('$..toString', payload)).toEqual([5]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});
