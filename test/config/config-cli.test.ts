import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliIn, luaPrompt, ROOT, tempDir } from '../cli/helpers.ts';

const GOOD = `packs:
  everything/demo:
    mcp:
      url: http://127.0.0.1:9/mcp
`;
const BAD = `packs:
  demo:
    mcp: { url: http://127.0.0.1:9/mcp }
  acme/deploy:
    http: { url: https://x }
    tools: [{ name: start }]
`;

let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir({
    'runvil.yaml': GOOD,
    'bad/runvil.yaml': BAD,
    'other.yml': 'packs: 3\n',
    'hello.md': luaPrompt("return 'hello'"),
    'bad/hello.md': luaPrompt("return 'hello'"),
  });
});
afterAll(() => dir.cleanup());

/** Runs scripts/bundle-config.mjs as wrangler's build does, writing to `out`. */
function bundle(env: Record<string, string>, out: string): Promise<{ status: number; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts/bundle-config.mjs'), '--out', out],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } },
      (error, _stdout, stderr) => done({ status: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
}

describe('runvil check runvil.yaml', () => {
  it('prints ok for a good configuration beside good prompts', async () => {
    const result = await cli(['check', dir.path('runvil.yaml'), dir.path('hello.md')]);
    expect(result).toEqual({ status: 0, stdout: `ok: ${dir.path('runvil.yaml')}\nok: ${dir.path('hello.md')}\n`, stderr: '' });
  });

  it('prints every problem as file:line:column: error[Config]: message, and exits 1', async () => {
    const file = dir.path('bad/runvil.yaml');
    const result = await cli(['check', file]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `${file}:2:3: error[Config]: \`packs.demo\`: a Pack is named vendor/name, such as acme/deploy, with exactly one '/'\n` +
        `${file}:5:11: error[Config]: \`packs["acme/deploy"].http\` needs a \`secret\` (\${NAME} of a whsec_... secret): an http Pack signs every call with it\n`,
    );
  });

  it('checks a .yml file as a configuration too', async () => {
    const result = await cli(['check', dir.path('other.yml')]);
    expect(result.stderr).toBe(`${dir.path('other.yml')}:1:8: error[Config]: \`packs\` must be a map of Pack name (vendor/name) to Pack\n`);
  });

  it('names a configuration file that does not exist', async () => {
    const result = await cli(['check', dir.path('missing/runvil.yaml')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`runvil: configuration file ${dir.path('missing/runvil.yaml')} does not exist\n`);
  });
});

describe('runvil run and the configuration', () => {
  it('reads ./runvil.yaml when present, and refuses to run with a bad one (exit 2, file:line:column)', async () => {
    const result = await cliIn(join(dir.dir, 'bad'), ['run', 'hello.md']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('runvil.yaml:2:3: `packs.demo`: a Pack is named vendor/name');
    expect(result.stderr).toContain('runvil.yaml:5:11: `packs["acme/deploy"].http` needs a `secret`');
  });

  it('reads --config FILE instead of ./runvil.yaml', async () => {
    const bad = await cli(['run', dir.path('hello.md'), '--config', dir.path('bad/runvil.yaml')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr.split('\n')[0]).toBe(
      `${dir.path('bad/runvil.yaml')}:2:3: \`packs.demo\`: a Pack is named vendor/name, such as acme/deploy, with exactly one '/'`,
    );
  });

  it('names a --config file that does not exist', async () => {
    const result = await cli(['run', dir.path('hello.md'), '--config', dir.path('nope.yaml')]);
    expect(result).toMatchObject({ status: 2, stderr: `runvil: configuration file ${dir.path('nope.yaml')} does not exist\n` });
  });

  it('runs a prompt with a good ./runvil.yaml', async () => {
    const script = dir.path('script.yaml');
    await import('node:fs/promises').then((fs) => fs.writeFile(script, 'model: []\n'));
    const result = await cliIn(dir.dir, ['run', 'hello.md', '--script', script]);
    expect(result).toMatchObject({ status: 0, stdout: 'hello\n' });
  });
});

describe('bundling runvil.yaml into the Worker', () => {
  it('writes the checked file into the bundle module', async () => {
    const out = dir.path('bundled.ts');
    const result = await bundle({ RUNVIL_CONFIG: dir.path('runvil.yaml') }, out);
    expect(result).toEqual({ status: 0, stderr: '' });
    const text = await readFile(out, 'utf8');
    expect(text).toContain(
      `export const BUNDLED_CONFIG: { file: string; text: string } | null = ${JSON.stringify({ file: dir.path('runvil.yaml'), text: GOOD })};`,
    );
  });

  it('fails the build on a file that does not fit, with file:line:column for each problem', async () => {
    const out = dir.path('never.ts');
    const file = dir.path('bad/runvil.yaml');
    const result = await bundle({ RUNVIL_CONFIG: file }, out);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `${file}:2:3: error[Config]: \`packs.demo\`: a Pack is named vendor/name, such as acme/deploy, with exactly one '/'\n` +
        `${file}:5:11: error[Config]: \`packs["acme/deploy"].http\` needs a \`secret\` (\${NAME} of a whsec_... secret): an http Pack signs every call with it\n`,
    );
    await expect(readFile(out, 'utf8')).rejects.toThrow();
  });

  it('fails the build when RUNVIL_CONFIG names a file that does not exist', async () => {
    const result = await bundle({ RUNVIL_CONFIG: dir.path('nope.yaml') }, dir.path('never.ts'));
    expect(result).toEqual({ status: 1, stderr: `RUNVIL_CONFIG names ${dir.path('nope.yaml')}, which does not exist\n` });
  });
});
