/**
 * An exception in a JS leaf becomes a Lua error whose text may reach a client as the run's
 * error: the Engine's own words for a broken invariant, only the kind of a runtime's
 * exception (its text, a TypeError's or a wasm RuntimeError's, is not ours to show).
 */
import { describe, expect, it } from 'vitest';
import { newPlatform } from './helpers.ts';

const platform = await newPlatform();

async function errorOfLeaf(leaf: () => never): Promise<string> {
  const vm = await platform.newVm();
  try {
    vm.defineLeaf('leaf', 0);
    vm.bind({ countHook: () => 'go', overflow: () => {} }, [leaf]);
    const [message] = vm.runChunk({ name: 'leaf-call', source: 'local ok, e = pcall(leaf) return e' });
    return String(message);
  } finally {
    vm.close();
  }
}

describe('an exception in a leaf', () => {
  it('keeps the words of an Error the Engine threw', async () => {
    expect(
      await errorOfLeaf(() => {
        throw new Error('the Lua runtime asked for an unknown operation x');
      }),
    ).toBe('internal error in the Engine: the Lua runtime asked for an unknown operation x');
  });

  it("names a runtime's exception by its kind, without its text", async () => {
    const message = await errorOfLeaf(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'chain')");
    });
    expect(message).toBe('internal error in the Engine: a TypeError was thrown in a leaf');
  });

  it('says a value was thrown when it was no Error', async () => {
    expect(
      await errorOfLeaf(() => {
        throw 'a string';
      }),
    ).toBe('internal error in the Engine: a value was thrown in a leaf');
  });
});
