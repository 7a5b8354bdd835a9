/**
 * `bin/runvil.mjs` as a user runs it: a child process, TypeScript loaded through tsx.
 */
import { describe, expect, it } from 'vitest';
import { ROOT, spawnCli } from './helpers.ts';

// Each case starts Node and tsx afresh, some twice; allow for a machine whose cores are busy
// (the limit is for a hang: at 30 s, a case timed out while npm test shared the machine).
describe('bin/runvil.mjs', { timeout: 120_000 }, () => {
  it('runs examples/hello.md and prints its result', async () => {
    expect(await spawnCli(['run', 'examples/hello.md'], ROOT)).toEqual({
      status: 0,
      stdout: 'Hello, world! Your name has 5 letters (visit 1).\n',
      stderr: '',
    });
  });

  it('passes --arg to the prompt', async () => {
    const result = await spawnCli(['run', 'examples/hello.md', '--arg', 'name=Ada'], ROOT);
    expect(result.stdout).toBe('Hello, Ada! Your name has 3 letters (visit 1).\n');
  });

  it('answers an ask from --answer, and fails it with standard input closed', async () => {
    expect((await spawnCli(['run', 'examples/ask.md', '--answer', 'Ada'], ROOT)).stdout).toBe('Nice to meet you, Ada!\n');
    const closed = await spawnCli(['run', 'examples/ask.md'], ROOT);
    expect(closed.status).toBe(1);
    expect(closed.stderr).toMatch(/^error\[Tool\]: tool call failure: the operator's window closed: .*--answer TEXT.*\n$/);
  });

  it('runs the research example on its script', async () => {
    const result = await spawnCli(['run', 'examples/research.md', '--script', 'examples/research.script.yaml'], ROOT);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Lua 5.4.7');
  });

  it('checks the examples', async () => {
    const result = await spawnCli(['check', 'examples/hello.md', 'examples/ask.md', 'examples/research.md'], ROOT);
    expect(result).toEqual({ status: 0, stdout: 'ok: examples/hello.md\nok: examples/ask.md\nok: examples/research.md\n', stderr: '' });
  });

  it('exits 2 for a usage error and 0 for help', async () => {
    expect(await spawnCli(['run', 'examples/nope.md'], ROOT)).toEqual({
      status: 2,
      stdout: '',
      stderr: 'runvil: prompt file examples/nope.md does not exist\n',
    });
    expect((await spawnCli(['help'], ROOT)).status).toBe(0);
  });
});
