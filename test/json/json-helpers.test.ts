/**
 * The shared JSON helpers: canonical text, equality, the digests replays and ids rely on, and
 * fields defined from names that came from outside.
 * The FNV digests a replay compares are pinned in test/engine/replay.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameJson } from '../../src/json/canonical-json.ts';
import { hexOf, sha256 } from '../../src/json/digest.ts';
import { defineField, type Json } from '../../src/json/json.ts';

describe('canonical JSON', () => {
  it('writes object keys in bytewise order at every depth, so key order never changes the text', () => {
    expect(canonicalJson({ b: { z: 1, a: [true, null] }, B: 'x', a: 1.5 })).toBe('{"B":"x","a":1.5,"b":{"a":[true,null],"z":1}}');
    expect(canonicalJson({ a: 1.5, B: 'x', b: { a: [true, null], z: 1 } })).toBe(canonicalJson({ b: { z: 1, a: [true, null] }, B: 'x', a: 1.5 }));
  });

  it('leaves out fields that are undefined and writes an undefined array item as null, as JSON.stringify does', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson([undefined, 2] as unknown as object)).toBe('[null,2]');
  });

  it('escapes keys and strings as JSON.stringify does', () => {
    expect(canonicalJson({ 'q"\n': 'é\u0000' })).toBe(JSON.stringify({ 'q"\n': 'é\u0000' }));
  });

  it('counts values equal whatever their key order, and not when one side has a field more', () => {
    expect(sameJson({ a: [1, { c: 2, d: 3 }] }, { a: [1, { d: 3, c: 2 }] })).toBe(true);
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: null })).toBe(false);
  });
});

describe('SHA-256 in hex', () => {
  it('gives the FIPS 180-2 digest of "abc"', async () => {
    expect(hexOf(await sha256('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('writes every byte as two lower-case digits', () => {
    expect(hexOf(new Uint8Array([0, 1, 0x0f, 0xa0, 0xff]))).toBe('00010fa0ff');
  });
});

describe('defineField', () => {
  for (const name of ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
    it(`makes ${name} an own, enumerable field, the object's prototype and Object.prototype untouched`, () => {
      const object: { [key: string]: Json } = {};
      defineField(object, name, { polluted: true });
      expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
      expect(Object.hasOwn(object, name)).toBe(true);
      expect(JSON.parse(JSON.stringify(object))).toEqual(JSON.parse(`{"${name}": {"polluted": true}}`));
      expect({ ...object }[name]).toEqual({ polluted: true });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  }

  it('keeps the order fields were defined in, as JSON.parse would', () => {
    const object: { [key: string]: Json } = {};
    for (const [key, value] of [
      ['b', 1],
      ['__proto__', 2],
      ['a', 3],
    ] as const)
      defineField(object, key, value);
    expect(JSON.stringify(object)).toBe('{"b":1,"__proto__":2,"a":3}');
  });
});
