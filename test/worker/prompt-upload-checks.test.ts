/**
 * The upload is the front door: a prompt whose Lua does not compile gets 400 with the
 * block's file:line:column and Lua's message, and nothing is stored; a prompt that declares
 * a Pack the deployment does not have is stored, with a warning naming the Pack and its line.
 */
import { describe, expect, it } from 'vitest';
import { call, json, testEnv } from './app/client.ts';

const frontmatter = (name: string, extra = '') => `---\nname: ${name}\ndescription: An upload check.\nrunvil: 0\n${extra}---\n`;
const block = (code: string) => '```lua\n' + code + '\n```\n';

interface CompileError {
  error: { message: string; file: string; line: number; column: number; errors: { kind: string; message: string; line: number; column: number }[] };
}

describe('PUT /prompts/:name with Lua that does not compile', () => {
  it.each([
    ['a block', `# T\n\n## A\n\n${block('local x = 1\nx = = 2')}`, 13, 5, "unexpected symbol near '='"],
    ['the H1 block', `# T\n\n${block("print('open)\nx = 1")}`, 10, 7, "unfinished string near ''open)'"],
    ['a function never closed', `# T\n\n## A\n\n${block('function f()\n  return 1')}`, 13, 11, "'end' expected (to close 'function' at line 12) near <eof>"],
    ['a repeated token', `# T\n\n## A\n\n${block('x = 1 = 2')}`, 12, 7, "unexpected symbol near '='"],
    ['a multi-byte character before the error', `# T\n\n## A\n\n${block("s = 'é😀' x x")}`, 12, 12, "syntax error near 'x'"],
    ['a prose expression', `# T\n\n## A\n\nSay {{ 1 + }} now.\n`, 11, 11, 'in the prose expression {{ 1 + }} of ## A: unexpected symbol near <eof>'],
  ])('%s: 400 with file:line:column and Lua’s message, nothing stored', async (_what, body, line, column, message) => {
    const name = `broken-${line}-${column}`;
    const response = await call('PUT', `/prompts/${name}`, { body: frontmatter(name) + '\n' + body });
    const { error } = await json<CompileError>(response, 400);
    expect(error.message).toBe(`the prompt's Lua does not compile: ${name}.md:${line}:${column}: ${message}; fix it and upload the prompt again`);
    expect(error).toMatchObject({ file: `${name}.md`, line, column });
    expect(error.errors[0]).toEqual({ kind: 'Lua', message, line, column });
    expect(await testEnv.RUNVIL_KV.get(`prompts/${name}`)).toBeNull();
    expect((await json<{ prompts: { name: string }[] }>(await call('GET', '/prompts'), 200)).prompts.map((p) => p.name)).not.toContain(name);
  });

  it('lists every error, and leaves a stored prompt of the same name as it was', async () => {
    const good = `${frontmatter('kept')}\n# T\n\n## A\n\n${block("return 'fine'")}`;
    expect(await json(await call('PUT', '/prompts/kept', { body: good }), 201)).toEqual({ name: 'kept', description: 'An upload check.', origin: 'uploaded' });
    const broken = `${frontmatter('kept')}\n# T\n\n## A\n\n${block('x = =')}\n## B\n\n${block('y = (')}`;
    const { error } = await json<CompileError>(await call('PUT', '/prompts/kept', { body: broken }), 400);
    expect(error.errors.map((e) => `${e.line}:${e.column}`)).toEqual(['12:5', '18:6']);
    expect(await testEnv.RUNVIL_KV.get('prompts/kept')).toBe(good);
  });
});

describe('a run of a prompt that does not compile (stored before the upload checked it)', () => {
  it.each([
    ['x = = 1', "legacy.md:12:5: unexpected symbol near '='"],
    ["local s = 'é' s s", "legacy.md:12:17: syntax error near 's'"],
    ['function f()\n  return 1', "legacy.md:13:11: 'end' expected (to close 'function' at line 12) near <eof>"],
  ])('fails with Lua’s message at the line and column: %j', async (code, message) => {
    await testEnv.RUNVIL_KV.put('prompts/legacy', `${frontmatter('legacy')}\n# T\n\n## A\n\n${block(code)}`);
    const view = await json<{ status: string; error: { kind: string; message: string } }>(
      await call('POST', '/prompts/legacy/runs?wait=10', { body: { args: {} } }),
      200,
    );
    expect(view.status).toBe('failed');
    expect(view.error).toMatchObject({ kind: 'Lua', message });
  });
});

describe('PUT /prompts/:name with a Pack the deployment does not have', () => {
  it('stores the prompt (201) with a warning naming each such Pack and its line', async () => {
    const body = `${frontmatter('packs-later', 'uses:\n  - web\n  - acme/crm\n  - shelf\n')}\n# T\n\n## A\n\n${block("return 'ok'")}`;
    const answer = await json<{ warnings: { pack: string; line: number; column: number; message: string }[] }>(
      await call('PUT', '/prompts/packs-later', { body }),
      201,
    );
    expect(answer).toMatchObject({ name: 'packs-later', origin: 'uploaded' });
    expect(answer.warnings.map(({ pack, line, column }) => ({ pack, line, column }))).toEqual([
      { pack: 'acme/crm', line: 7, column: 5 },
      { pack: 'runvil/shelf', line: 8, column: 5 },
    ]);
    expect(answer.warnings[0]!.message).toContain('acme/crm');
    expect(answer.warnings[0]!.message).toContain('packs:');
    expect(await testEnv.RUNVIL_KV.get('prompts/packs-later')).toBe(body);
  });
});
