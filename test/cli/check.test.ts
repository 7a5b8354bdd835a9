import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, luaPrompt, promptText, tempDir } from './helpers.ts';

let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir({
    'good.md': luaPrompt("return 'fine'"),
    'also-good.md': promptText('## Step\nSay {{ args and 1 or 2 }} things.\n'),
    'no-frontmatter.md': '# Title\n\n## A\nhi\n',
    'no-title.md': '---\nname: t\ndescription: d\nrunvil: 0\n---\n## A\nhi\n',
    'twice.md': promptText('## A\nx\n\n## B\ny\n\n## A\nz\n'),
    'bad-lua.md': promptText('## A\n```lua\nlocal x = = 1\n```\n\n## B\nHello {{ 1 + }}\n'),
    'several.md': '---\nname: Bad\ndescription: d\nrunvil: 1\n---\n# T\n\n## A\nx\n\n## A\ny\n',
  });
});
afterAll(() => dir.cleanup());

describe('runvil check', () => {
  it('prints ok: FILE for each good file and exits 0', async () => {
    const result = await cli(['check', dir.path('good.md'), dir.path('also-good.md')]);
    expect(result).toEqual({ status: 0, stdout: `ok: ${dir.path('good.md')}\nok: ${dir.path('also-good.md')}\n`, stderr: '' });
  });

  it('reports a file with no frontmatter, with its line', async () => {
    const result = await cli(['check', dir.path('no-frontmatter.md')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^${escape(dir.path('no-frontmatter.md'))}:1(:1)?: error\\[Frontmatter\\]: `));
  });

  it('reports a file with no # Title', async () => {
    const result = await cli(['check', dir.path('no-title.md')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`${dir.path('no-title.md')}`);
    expect(result.stderr).toContain('error[Prompt]: ');
  });

  it('reports two sections with the same heading at the second one', async () => {
    const result = await cli(['check', dir.path('twice.md')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^${escape(dir.path('twice.md'))}:14: error\\[Prompt\\]: two sections are headed \`## A\``));
  });

  it('reports every error of a file, each with file:line:column', async () => {
    const result = await cli(['check', dir.path('several.md')]);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.map((line) => line.slice(dir.path('several.md').length))).toEqual([
      expect.stringMatching(/^:2:7: error\[Frontmatter\]: invalid frontmatter: /),
      expect.stringMatching(/^:4:9: error\[Frontmatter\]: invalid frontmatter: /),
      expect.stringMatching(/^:11: error\[Prompt\]: two sections are headed/),
    ]);
  });

  it('compiles Lua blocks and prose expressions, reporting syntax errors at their lines and columns', async () => {
    const result = await cli(['check', dir.path('bad-lua.md')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `${dir.path('bad-lua.md')}:10:11: error[Lua]: unexpected symbol near '='\n` +
        `${dir.path('bad-lua.md')}:14:13: error[Lua]: in the prose expression {{ 1 + }} of ## B: unexpected symbol near <eof>\n`,
    );
  });

  it('checks every file even after a bad one, and exits 1', async () => {
    const result = await cli(['check', dir.path('twice.md'), dir.path('good.md')]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(`ok: ${dir.path('good.md')}\n`);
  });

  it('names a missing file and exits 2, still checking the others', async () => {
    const result = await cli(['check', dir.path('missing.md'), dir.path('good.md')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`runvil: prompt file ${dir.path('missing.md')} does not exist\n`);
    expect(result.stdout).toBe(`ok: ${dir.path('good.md')}\n`);
  });

  it('needs at least one file', async () => {
    expect(await cli(['check'])).toMatchObject({ status: 2, stderr: 'runvil: runvil check needs at least one prompt file (or runvil.yaml)\n' });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
