/**
 * Helpers for the command line's tests: a temporary directory of files, the command line
 * called in-process with a recording io (fast), and the real `bin/runvil.mjs` spawned as a
 * child process (for what only the process shows: the shebang, tsx, exit statuses).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.ts';

/** The project's root directory. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** What a command printed and how it exited. */
export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** A temporary directory holding `files` (path → text); removed by `cleanup`. */
export async function tempDir(files: Record<string, string> = {}): Promise<{ dir: string; path: (name: string) => string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'runvil-cli-'));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return { dir, path: (name) => join(dir, name), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Runs the command line in this process; standard input is not a terminal unless `stdin` lines say so. */
export async function cli(argv: string[], options: { env?: Record<string, string>; terminal?: string[] } = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const stdin = new PassThrough();
  if (options.terminal) stdin.end(options.terminal.map((line) => `${line}\n`).join(''));
  const status = await main(argv, {
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    stdin,
    stdinIsTerminal: options.terminal !== undefined,
    env: options.env ?? {},
  });
  return { status, stdout, stderr };
}

/**
 * Runs the command line in this process with `cwd` as the working directory (where it looks
 * for ./runvil.yaml and resolves relative paths), restored after. Vitest's forks pool runs
 * each file's tests one at a time in a process of its own, so changing directory is safe.
 */
export async function cliIn(cwd: string, argv: string[], options: { env?: Record<string, string>; terminal?: string[] } = {}): Promise<CliResult> {
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    return await cli(argv, options);
  } finally {
    process.chdir(previous);
  }
}

/** Spawns `node bin/runvil.mjs ...argv` in `cwd`, with standard input closed. */
export function spawnCli(argv: string[], cwd: string, env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [join(ROOT, 'bin/runvil.mjs'), ...argv],
      { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } },
      (error, stdout, stderr) => {
        const code = error && typeof error.code === 'number' ? error.code : error ? 1 : 0;
        done({ status: code, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

/** A prompt file's text: the frontmatter lines (after name, description, runvil) and a body. */
export function promptText(body: string, frontmatter = '', name = 'test'): string {
  return `---\nname: ${name}\ndescription: A prompt under test.\nrunvil: 0\n${frontmatter}---\n# Test\n\n${body}`;
}

/** A prompt whose one section `## Only` holds one Lua block. */
export function luaPrompt(block: string, frontmatter = ''): string {
  return promptText(`## Only\n\`\`\`lua\n${block}\n\`\`\`\n`, frontmatter);
}
