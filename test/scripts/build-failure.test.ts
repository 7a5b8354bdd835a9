/**
 * The build refuses a bundled prompt that does not parse or compile, and a runvil.yaml that
 * does not fit: one message (file:line:column: error[Kind]: message, no stack trace, not
 * repeated) and exit status 1; under `npm start`'s rebuilds the last good build stays and the
 * message is printed once. And `npm start` itself stops at once on a broken bundled prompt.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/server-process.ts';

const ROOT = join(import.meta.dirname, '../..');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runvil-build-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const prompt = (name: string, block: string) =>
  `---\nname: ${name}\ndescription: A bundled prompt.\nrunvil: 0\n---\n# T\n\n## A\n\n\`\`\`lua\n${block}\n\`\`\`\n`;

/** A fresh prompts directory holding `files`, and a path for the generated module. */
async function promptsDir(files: Record<string, string>): Promise<{ prompts: string; out: string }> {
  const base = await mkdtemp(join(dir, 'case-'));
  const prompts = join(base, 'prompts');
  await mkdir(prompts);
  for (const [name, text] of Object.entries(files)) await writeFile(join(prompts, name), text);
  return { prompts, out: join(base, 'bundled-prompts.generated.ts') };
}

/** Runs a bundle script as the build does. */
function bundle(script: string, env: Record<string, string>, out: string): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts', script), '--out', out],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } },
      (error, stdout, stderr) => done({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('bundling prompts/ into the Worker', { timeout: 60_000 }, () => {
  it('writes the bundle of prompts that compile', async () => {
    const { prompts, out } = await promptsDir({ 'good.md': prompt('good', "return 'fine'") });
    expect(await bundle('bundle-prompts.mjs', { RUNVIL_PROMPTS_DIR: prompts }, out)).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(await readFile(out, 'utf8')).toContain('"good": ');
  });

  it('fails on a prompt whose Lua does not compile: one line, file:line:column and Lua’s message, exit 1, nothing written', async () => {
    const { prompts, out } = await promptsDir({ 'good.md': prompt('good', "return 'fine'"), 'broken.md': prompt('broken', 'local x = 1\nx = = 2') });
    const result = await bundle('bundle-prompts.mjs', { RUNVIL_PROMPTS_DIR: prompts }, out);
    expect(result).toEqual({ status: 1, stdout: '', stderr: `${join(prompts, 'broken.md')}:12:5: error[Lua]: unexpected symbol near '='\n` });
    await expect(readFile(out, 'utf8')).rejects.toThrow();
  });

  it('fails on a prompt that does not parse, and on one whose frontmatter name is not its file name, one line each', async () => {
    const { prompts, out } = await promptsDir({
      'bad-yaml.md': '---\nname: bad-yaml\ndescription: [unclosed\nrunvil: 0\n---\n# T\n',
      'renamed.md': prompt('other', "return 'x'"),
    });
    const result = await bundle('bundle-prompts.mjs', { RUNVIL_PROMPTS_DIR: prompts }, out);
    expect(result.status).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${escape(join(prompts, 'bad-yaml.md'))}:\\d+:\\d+: error\\[Frontmatter\\]: `));
    expect(lines[1]).toBe(
      `${join(prompts, 'renamed.md')}:2:7: error[Frontmatter]: the frontmatter names the prompt "other", but it is bundled from renamed.md and served as "renamed": rename the file or the prompt so the two match`,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('while npm start serves (RUNVIL_KEEP_LAST_GOOD_BUILD=1): keeps the last good bundle, says so once, and builds again once fixed', async () => {
    const { prompts, out } = await promptsDir({ 'p.md': prompt('p', "return 'one'") });
    const env = { RUNVIL_PROMPTS_DIR: prompts, RUNVIL_KEEP_LAST_GOOD_BUILD: '1' };
    expect((await bundle('bundle-prompts.mjs', env, out)).status).toBe(0);
    const good = await readFile(out, 'utf8');

    await writeFile(join(prompts, 'p.md'), prompt('p', 'return = 1'));
    const message = `${join(prompts, 'p.md')}:11:8: error[Lua]: unexpected symbol near '='\n(not rebuilt: the server keeps serving the last good build until this is fixed)\n`;
    expect(await bundle('bundle-prompts.mjs', env, out)).toEqual({ status: 0, stdout: '', stderr: message });
    expect(await readFile(out, 'utf8')).toBe(good);
    // The same problem again (an editor's save fires several changes) is not printed again.
    expect(await bundle('bundle-prompts.mjs', env, out)).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(await readFile(out, 'utf8')).toBe(good);

    await writeFile(join(prompts, 'p.md'), prompt('p', "return 'two'"));
    expect(await bundle('bundle-prompts.mjs', env, out)).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(await readFile(out, 'utf8')).toContain('two');
    // Broken again after a good build: said again.
    await writeFile(join(prompts, 'p.md'), prompt('p', 'return = 1'));
    expect((await bundle('bundle-prompts.mjs', env, out)).stderr).toBe(message);
  });
});

describe('bundling runvil.yaml into the Worker', { timeout: 60_000 }, () => {
  it('fails on a file that does not parse: one line, file:line:column, exit 1, nothing written', async () => {
    const file = join(dir, 'broken-runvil.yaml');
    await writeFile(file, 'packs:\n  acme/x: [\n');
    const out = join(dir, 'never-config.ts');
    const result = await bundle('bundle-config.mjs', { RUNVIL_CONFIG: file }, out);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^${escape(file)}:\\d+:\\d+: error\\[Config\\]: [^\\n]+\\n$`));
    await expect(readFile(out, 'utf8')).rejects.toThrow();
  });
});

describe('npm start with a broken bundled prompt', () => {
  it('exits 1 at once with the one message, and never serves', { timeout: 120_000 }, async () => {
    const { prompts } = await promptsDir({ 'broken.md': prompt('broken', 'if x then\n  y = 1') });
    const state = await mkdtemp(join(dir, 'state-'));
    const port = await freePort();
    const child = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(port),
        RUNVIL_STATE_DIR: state,
        RUNVIL_PROMPTS_DIR: prompts,
        RUNVIL_API_TOKEN: 't',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const status = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Were it still running (it must not be), its group is stopped by its pid.
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    const line = `${join(prompts, 'broken.md')}:12:8: error[Lua]: 'end' expected (to close 'if' at line 11) near <eof>`;
    expect(status).toBe(1);
    expect(stderr.split(line).length - 1).toBe(1);
    expect(stdout.split(line).length - 1).toBe(0);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout + stderr).not.toContain('serving on');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
