/**
 * `runvil run` of a prompt whose Lua does not compile fails with Lua's message at the
 * block's line and column, as `runvil check` reports it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, promptText, tempDir } from './helpers.ts';

let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir({
    'broken.md': promptText('## A\n```lua\nlocal t = {}\nt.x = = 1\n```\n'),
    'unclosed.md': promptText('## A\n```lua\nif true then\n\treturn "é"\n```\n'),
  });
});
afterAll(() => dir.cleanup());

describe('runvil run of a prompt that does not compile', () => {
  it.each([
    ['broken.md', "broken.md:11:7: unexpected symbol near '='"],
    ['unclosed.md', "unclosed.md:11:12: 'end' expected (to close 'if' at line 10) near <eof>"],
  ])('%s: exit 1, Lua’s message at file:line:column', async (file, message) => {
    const result = await cli(['run', dir.path(file)]);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`error[Lua]: ${message}\n`);
    const check = await cli(['check', dir.path(file)]);
    expect(check.stderr).toBe(`${dir.path(file)}:${message.slice(file.length + 1).replace(/: /, ': error[Lua]: ')}\n`);
  });
});
