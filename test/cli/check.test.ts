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
    'tabbed.md': promptText('## A\n```lua\nlocal s = "é"\n\tif s == \'é\' then x = = 1 end\n```\n'),
    'uses.md': '---\nname: uses\ndescription: d\nrunvil: 0\nuses:\n  - web\n  - acme/crm\n  - acme/other\n  - shelf\n---\n# T\n\n## A\nhi\n',
    'deploy.yaml': 'packs:\n  acme/other:\n    mcp: { url: "http://127.0.0.1:9/mcp" }\n',
    'broken.yaml': 'packs: [\n',
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

  it('places a syntax error after a tab and a multi-byte character at its column in characters', async () => {
    const result = await cli(['check', dir.path('tabbed.md')]);
    expect(result).toEqual({ status: 1, stdout: '', stderr: `${dir.path('tabbed.md')}:11:23: error[Lua]: unexpected symbol near '='\n` });
  });

  it('with --config, reports each Pack a prompt declares that the deployment does not have, at its uses: line', async () => {
    const result = await cli(['check', dir.path('uses.md'), dir.path('good.md'), '--config', dir.path('deploy.yaml')]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(`ok: ${dir.path('good.md')}\n`);
    expect(result.stderr).toBe(
      `${dir.path('uses.md')}:7:5: error[RequirementsUnmet]: the prompt declares the Pack acme/crm (uses: \`acme/crm\`), which this deployment does not have: configure it under \`packs:\` in ${dir.path('deploy.yaml')}; a run of this prompt fails until it has it\n` +
        `${dir.path('uses.md')}:9:5: error[RequirementsUnmet]: the prompt declares the Pack runvil/shelf (uses: \`shelf\`), which this deployment does not have: runvil's own Packs are web, user-input, subagents; a run of this prompt fails until it has it\n`,
    );
  });

  it('without --config, does not judge uses: (the deployment is not known)', async () => {
    expect(await cli(['check', dir.path('uses.md')])).toEqual({ status: 0, stdout: `ok: ${dir.path('uses.md')}\n`, stderr: '' });
  });

  it('with a --config that does not fit the format, stops with its problems (exit 2)', async () => {
    const result = await cli(['check', dir.path('uses.md'), '--config', dir.path('broken.yaml')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(dir.path('broken.yaml'));
    expect(result.stdout).toBe('');
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
