/**
 * `--entry-timeout SECONDS` (default 60): a section entry that computes longer ends the run
 * with Limit. In this process the count hook ends it; through bin/runvil.mjs the command runs
 * in a worker thread, and its supervisor also stops an entry stuck in C, whose loop of long
 * C calls runs too few Lua instructions to reach the hook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENTRY_TIMEOUT_SECONDS, parseCommandLine } from '../../src/cli/args.ts';
import { cli, luaPrompt, spawnCli, tempDir } from './helpers.ts';

let dir: Awaited<ReturnType<typeof tempDir>>;

/** Loops of C calls that each take a while and run few instructions between them. */
const STUCK_IN_C: Record<string, string> = {
  'rep.md': "local n = 0\nfor k = 1, 100000 do n = n + #string.rep('ab', 3000000) end\nreturn tostring(n)",
  'concat.md': "local t = {}\nfor i = 1, 400000 do t[i] = 'x' end\nfor k = 1, 100000 do local s = table.concat(t, ',') end",
  'gsub.md': "local s = string.rep('a', 1000000)\nfor k = 1, 100000 do local r = s:gsub('a', 'b') end",
  'sort.md': 'local t = {}\nfor i = 1, 300000 do t[i] = (i * 7919) % 300007 end\nfor k = 1, 100000 do table.sort(t) end',
};

const message = (seconds: number) =>
  `section "Only" computed for more than ${seconds} s of wall clock in one entry (the entry time limit, --entry-timeout; waits on tools, models and the operator do not count)`;

beforeAll(async () => {
  dir = await tempDir({
    ...Object.fromEntries(Object.entries(STUCK_IN_C).map(([name, block]) => [name, luaPrompt(block)])),
    'loop.md': luaPrompt('while true do end'),
    'quick.md': luaPrompt("return 'quick'"),
    'stuck.test.yaml': `prompt: ./rep.md\nexpect:\n  result: never\n`,
    'quick.test.yaml': `prompt: ./quick.md\nexpect:\n  result: quick\n`,
  });
});
afterAll(() => dir.cleanup());

describe('--entry-timeout on the command line', () => {
  it(`defaults to ${DEFAULT_ENTRY_TIMEOUT_SECONDS} s for run and test, takes seconds with a fraction, and 0 for none`, () => {
    expect(parseCommandLine(['run', 'p.md'])).toMatchObject({ entryTimeoutSeconds: 60 });
    expect(parseCommandLine(['test'])).toMatchObject({ entryTimeoutSeconds: 60 });
    expect(parseCommandLine(['run', 'p.md', '--entry-timeout', '2.5'])).toMatchObject({ entryTimeoutSeconds: 2.5 });
    expect(parseCommandLine(['test', 'dir', '--entry-timeout', '0'])).toMatchObject({ entryTimeoutSeconds: 0 });
  });

  for (const bad of ['abc', '-1', '1e3', '', '1.', '.5', '10s', 'Infinity', '0x10']) {
    it(`refuses --entry-timeout ${JSON.stringify(bad)} as a usage error`, async () => {
      const result = await cli(['run', 'p.md', `--entry-timeout=${bad}`]);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain(`--entry-timeout takes a number of seconds (0 for no limit), got ${JSON.stringify(bad)}`);
    });
  }

  it('is in the help of run and test', async () => {
    expect((await cli(['help', 'run'])).stdout).toContain('--entry-timeout SECONDS');
    expect((await cli(['help', 'test'])).stdout).toContain('--entry-timeout SECONDS');
  });

  it('ends an endless loop with Limit before the instruction budget does', async () => {
    const result = await cli(['run', dir.path('loop.md'), '--entry-timeout', '0.3', '--max-instructions', '10000000000000']);
    expect(result).toEqual({ status: 1, stdout: '', stderr: `error[Limit]: ${message(0.3)}\n` });
  });
});

// Each case starts Node, tsx and a worker thread afresh; allow for a busy machine.
describe('the supervisor of bin/runvil.mjs', { timeout: 60_000 }, () => {
  for (const name of Object.keys(STUCK_IN_C)) {
    it(`stops ${name}, stuck in C, within seconds of the limit`, async () => {
      const result = await spawnCli(['run', name, '--entry-timeout', '1'], dir.dir);
      expect(result.status).toBe(1);
      expect(result.stdout).toBe('');
      // Stopped by the supervisor (its message says so) or, if Lua got control back in time, by the hook.
      expect(result.stderr).toMatch(new RegExp(`^error\\[Limit\\]: ${escape(message(1))}(; it did not give Lua control back, so its thread was stopped)?\\n$`));
    });
  }

  it('prints the --json object with the events so far and run_failed last', async () => {
    const result = await spawnCli(['run', 'rep.md', '--entry-timeout', '1', '--json'], dir.dir);
    expect(result.status).toBe(1);
    const printed = JSON.parse(result.stdout);
    expect(printed).toMatchObject({ status: 'failed', result: null, error: { kind: 'Limit' } });
    expect(printed.error.message).toContain(message(1));
    const types = printed.events.map((event: { type: string }) => event.type);
    expect(types[0]).toBe('run_started');
    expect(types.at(-1)).toBe('run_failed');
    expect(printed.events.map((event: { seq: number }) => event.seq)).toEqual(types.map((_: string, i: number) => i + 1));
  });

  it('fails the test in flight in runvil test and says the rest did not run', async () => {
    const result = await spawnCli(['test', 'stuck.test.yaml', '--entry-timeout', '1'], dir.dir);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('FAIL');
    expect(result.stdout).toContain(message(1));
    expect(result.stderr).toBe('runvil: the tests after it did not run\n');
  });

  it('leaves a quick run and a passing test alone', async () => {
    expect(await spawnCli(['run', 'quick.md'], dir.dir)).toEqual({ status: 0, stdout: 'quick\n', stderr: '' });
    expect(await spawnCli(['test', 'quick.test.yaml'], dir.dir)).toEqual({ status: 0, stdout: 'ok   quick.test.yaml\n1 passed, 0 failed\n', stderr: '' });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
