/**
 * Text crossing between JS and a Lua VM (src/engine/lua/vm.ts): short text goes byte by
 * byte, longer text through TextEncoder and TextDecoder. Either way Lua holds the text's
 * UTF-8 bytes, and what comes back is the text that went in, whatever its length or script.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform, LuaVm } from '../../src/engine/lua/vm.ts';
import { newPlatform } from './helpers.ts';

let platform: LuaPlatform;
let vm: LuaVm;
beforeAll(async () => {
  platform = await newPlatform();
  vm = await platform.newVm();
});
afterAll(() => vm.close());

/** Every length from 0 to 40, around both short-text limits, and texts with multi-byte characters at the start, middle and end. */
const texts = [
  ...Array.from({ length: 41 }, (_, n) => 'abcdefghijklmnopqrstuvwxyz0123456789ABCDE'.slice(0, n)),
  'é',
  'héllo',
  'abcdefghijklmnoé',
  'éabcdefghijklmno',
  `${'x'.repeat(31)}é`,
  '日本語',
  '😀 grin',
  'a\u0000b',
  'x'.repeat(15) + '\u0000',
  '\u007f\u0080',
  `grabbed ${'ü'.repeat(30)}`,
];

describe('text passed into Lua and back', () => {
  it('arrives as its UTF-8 bytes and comes back unchanged, at every length', () => {
    const echo = {
      name: 'echo',
      source: 'local out = {}\nfor i, text in ipairs({ ... }) do out[#out + 1] = text; out[#out + 1] = #text end\nreturn table.unpack(out)',
    };
    const back = vm.runChunk(echo, texts);
    const expected = texts.flatMap((text) => [text, new TextEncoder().encode(text).length]);
    expect(back).toEqual(expected);
  });

  it('reads bytes Lua made that are not UTF-8 as the replacement character, short or long', () => {
    const made = { name: 'made', source: "return '\\255', 'ab\\192', string.rep('a', 20) .. '\\255'" };
    expect(vm.runChunk(made)).toEqual(['\ufffd', 'ab\ufffd', `${'a'.repeat(20)}\ufffd`]);
  });
});
