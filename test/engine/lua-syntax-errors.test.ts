/**
 * A Lua syntax error carries its line and column: the compile check every way in uses
 * (upload, `runvil check`, the build) and the Engine's own load of a block at run time.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { luaSyntaxErrors } from '../../src/engine/lua/compile-check.ts';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { parsePrompt } from '../../src/prompt/parse.ts';
import { newPlatform, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const HEAD = '---\nname: test\ndescription: A test prompt.\nrunvil: 0\n---\n\n# Test\n\n## Only\n\n```lua\n';
/** The file line of a block's first line in `fileOf`'s prompt. */
const FIRST = HEAD.split('\n').length;

function fileOf(block: string, after = ''): string {
  return `${HEAD}${block}\n\`\`\`\n${after}`;
}

async function errorsOf(text: string): Promise<string[]> {
  const parsed = parsePrompt(text, 'test.md');
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join('\n'));
  const errors = await luaSyntaxErrors(platform, parsed.prompt, text);
  return errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`);
}

/** One block, its error as `line:column: message`, the line counted from the block's first. */
async function blockError(block: string): Promise<string> {
  const errors = await errorsOf(fileOf(block));
  expect(errors).toHaveLength(1);
  const match = /^test\.md:(\d+):(\d+): ([\s\S]*)$/.exec(errors[0]!)!;
  return `${Number(match[1]) - FIRST + 1}:${match[2]}: ${match[3]}`;
}

describe('the compile check places a syntax error at its line and column', () => {
  it.each([
    ['x = = 1', "1:5: unexpected symbol near '='"],
    ['local a = 1\nb = a +* 2', "2:8: unexpected symbol near '*'"],
    ["print('one)\nx = 1", "1:7: unfinished string near ''one)'"],
    // At the block's end Lua names no token: the error is placed there.
    ['s = "abc', '1:9: unfinished string near <eof>'],
    ['local t\nt.x', '2:4: syntax error near <eof>'],
    ['local = 3', "1:7: <name> expected near '='"],
    ['local x <const> 3', "1:17: unexpected symbol near '3'"],
    ['function f()\n  return 1', "2:11: 'end' expected (to close 'function' at line " + FIRST + ') near <eof>'],
    ['if x then\n  y = 1\nelse', "3:5: 'end' expected (to close 'if' at line " + FIRST + ') near <eof>'],
    ['while true do\n  x = 1\n  print(x)\nreturn', "4:7: 'end' expected (to close 'while' at line " + FIRST + ') near <eof>'],
    ['for i = 1 do end', "1:11: ',' expected near 'do'"],
    ['t = {a = 1 b = 2}', "1:12: '}' expected near 'b'"],
    ['f(1, 2', "1:7: ')' expected near <eof>"],
    ['x = 3x', "1:5: malformed number near '3x'"],
    ['x = 0x1p', "1:5: malformed number near '0x1p'"],
    ['x = "a\\qb"', "1:5: invalid escape sequence near '\"a\\q'"],
    ['x = [[abc\ndef', `2:4: unfinished long string (starting at line ${FIRST}) near <eof>`],
    ['return 1\nx = 2', "2:1: <eof> expected near 'x'"],
    ['local function f() end end', "1:24: <eof> expected near 'end'"],
  ])('%j', async (block, expected) => {
    expect(await blockError(block)).toBe(expected);
  });

  it('finds the token Lua stopped at when the same token comes more than once on the line', async () => {
    expect(await blockError('x = 1 = 2')).toBe("1:7: unexpected symbol near '='");
    expect(await blockError('x = a a a')).toBe("1:9: syntax error near 'a'");
    expect(await blockError("a = 'y' 'y' 'y'")).toBe("1:9: unexpected symbol near ''y''");
    expect(await blockError('x = { a = 1 } x y')).toBe("1:17: syntax error near 'y'");
  });

  it('skips strings and comments before the token', async () => {
    expect(await blockError("s = '= =' -- = =\nt = '=' = 1")).toBe("2:9: unexpected symbol near '='");
    expect(await blockError('--[[ x x\n x ]] x x = 1')).toBe("2:9: syntax error near 'x'");
    expect(await blockError('s = [==[ ]] = ]==] = 2')).toBe("1:20: unexpected symbol near '='");
    expect(await blockError('s = "a\\"=" = 2')).toBe("1:12: unexpected symbol near '='");
  });

  it('places an error on the first and on the last line of a block', async () => {
    expect(await blockError('= 1\nx = 1\ny = 2')).toBe("1:1: unexpected symbol near '='");
    expect(await blockError('x = 1\ny = 2\nz = )')).toBe("3:5: unexpected symbol near ')'");
  });

  it('counts a tab as one column', async () => {
    expect(await blockError('\tx = = 1')).toBe("1:6: unexpected symbol near '='");
    expect(await blockError('if x then\n\t\ty = = 1\nend')).toBe("2:7: unexpected symbol near '='");
  });

  it('counts characters, not bytes: a multi-byte character is one column', async () => {
    expect(await blockError("s = 'héllo' = 1")).toBe("1:13: unexpected symbol near '='");
    expect(await blockError("s = '😀😀' x x")).toBe("1:12: syntax error near 'x'");
    // Lua names a character outside ASCII by its first byte.
    expect(await blockError('x = 1 é = 2')).toBe("1:7: unexpected symbol near '<\\195>'");
  });

  it('places an error Lua gives no token (a goto with no label) at the line’s first character', async () => {
    expect(await blockError('x = 1\n  goto nowhere')).toBe(`2:3: no visible label 'nowhere' for <goto> at line ${FIRST + 1}`);
  });

  it('places an error at <eof> at the end of the block’s last text, after trailing blank lines', async () => {
    expect(await blockError('x = 1 +\n\n')).toBe('1:8: unexpected symbol near <eof>');
  });

  it('places an error of a prose expression in the file, at the expression’s column', async () => {
    const text = fileOf('x = 1', '\n## Next\n\nSay {{ x + }} and {{ 1 1 }}.\n');
    const line = text.split('\n').indexOf('Say {{ x + }} and {{ 1 1 }}.') + 1;
    expect(await errorsOf(text)).toEqual([
      `test.md:${line}:11: in the prose expression {{ x + }} of ## Next: unexpected symbol near <eof>`,
      `test.md:${line}:24: in the prose expression {{ 1 1 }} of ## Next: <eof> expected near '1'`,
    ]);
  });

  it('reports every block’s error in file order, and nothing for Lua that compiles', async () => {
    const text = `${HEAD}x = =\n\`\`\`\n\n## Two\n\n\`\`\`lua\nlocal ok = 'fine'\n\`\`\`\n\n\`\`\`lua\ny = (\n\`\`\`\n`;
    const errors = await errorsOf(text);
    expect(errors).toEqual([`test.md:${FIRST}:5: unexpected symbol near '='`, `test.md:${FIRST + 10}:6: unexpected symbol near <eof>`]);
    expect(await errorsOf(fileOf("local s = 'x = ='\nreturn s"))).toEqual([]);
  });
});

describe('a run whose block does not compile', () => {
  it.each([
    ['x = = 1', "test.md:FIRST:5: unexpected symbol near '='"],
    ['x = 1 = 2', "test.md:FIRST:7: unexpected symbol near '='"],
    ["local s = 'é' = 1", "test.md:FIRST:15: unexpected symbol near '='"],
    ['function f()\n  return 1', "test.md:SECOND:11: 'end' expected (to close 'function' at line FIRST) near <eof>"],
  ])('fails with the error at its line and column: %j', async (block, expected) => {
    const parsed = parsePrompt(fileOf(block), 'test.md');
    if (!parsed.ok) throw new Error('does not parse');
    const outcome = await run(platform, parsed.prompt);
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect(outcome.error.kind).toBe('Lua');
    expect(outcome.error.message).toBe(expected.replaceAll('SECOND', String(FIRST + 1)).replaceAll('FIRST', String(FIRST)));
  });
});
