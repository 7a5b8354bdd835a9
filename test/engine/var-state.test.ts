/**
 * VarState keeps its size as writes land: after any sequence of writes it equals the UTF-8
 * length of the document's canonical JSON, which is what the var cap counts.
 */
import { describe, expect, it } from 'vitest';
import { VarState, type VarPath } from '../../src/engine/var-state.ts';
import type { Json } from '../../src/json/json.ts';

const bytes = (text: string) => new TextEncoder().encode(text).length;

/** A small deterministic generator, so a failure reproduces. */
function generator(seed: number) {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  return { next, pick };
}

const KEYS = ['a', 'b', '__proto__', 'constructor', 'toString', 'é', '"q"', '1'];
const SCALARS: Json[] = [null, true, false, 0, -1.5, 1e21, '', 'text', 'ünï', '😀', 'line\nbreak'];

describe('VarState size', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('matches the canonical JSON bytes after random writes (seed %i)', (seed) => {
    const { next, pick } = generator(seed);
    const state = new VarState();
    const paths: VarPath[] = [[]];
    const value = (depth: number): Json => {
      const r = next();
      if (depth > 2 || r < 0.5) return pick(SCALARS);
      if (r < 0.75) return Array.from({ length: Math.floor(next() * 3) }, () => value(depth + 1));
      const o: { [key: string]: Json } = {};
      for (let i = Math.floor(next() * 3); i > 0; i--)
        Object.defineProperty(o, pick(KEYS), { value: value(depth + 1), enumerable: true, configurable: true, writable: true });
      return o;
    };
    for (let step = 0; step < 400; step++) {
      const base = pick(paths);
      const container = state.get(base);
      const key = Array.isArray(container) ? 1 + Math.floor(next() * (container.length + 1)) : next() < 0.8 ? pick(KEYS) : 1;
      const path = [...base, key];
      const written = next() < 0.2 ? undefined : value(0);
      if (state.set(path, written) === null && written !== null && typeof written === 'object') paths.push(path);
      expect(state.size).toBe(bytes(state.json([])));
    }
  });

  it('refuses a write past its limit and leaves the document as it was', () => {
    const state = new VarState(20);
    expect(state.set(['a'], 'x'.repeat(10))).toBeNull();
    const before = state.json([]);
    expect(state.set(['b'], 'y'.repeat(10))).toEqual({ type: 'limit', message: "the run's var grew past its size limit of 20 bytes of JSON" });
    expect(state.json([])).toBe(before);
    expect(state.size).toBe(bytes(before));
  });

  it('holds __proto__ as an own key of a null-prototype object', () => {
    const state = new VarState();
    state.set(['__proto__'], JSON.parse('{"__proto__": {"X": 1}}') as Json);
    const doc = state.snapshot() as Record<string, unknown>;
    expect(Object.getPrototypeOf(doc)).toBeNull();
    expect(Object.keys(doc)).toEqual(['__proto__']);
    expect(state.json([])).toBe('{"__proto__":{"__proto__":{"X":1}}}');
    expect(({} as Record<string, unknown>).X).toBeUndefined();
  });
});
