import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../src/cli/args.ts';
import { argsFromCommandLine, argsFromData } from '../../src/prompt/run-args.ts';
import type { ArgSpec } from '../../src/prompt/types.ts';
import { cli } from './helpers.ts';

function usageMessage(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`expected a usage error for ${argv.join(' ')}`);
}

describe('the command line grammar', () => {
  it('reads runvil run with every option', () => {
    const command = parseCommandLine([
      'run',
      'p.md',
      '--arg',
      'a=1',
      '--arg=b=x=y',
      '--script',
      's.yaml',
      '--seed',
      '7',
      '--json',
      '--events',
      '--answer',
      'one',
      '--answer',
      'two',
      '--max-instructions',
      '5000',
      '--verbose',
    ]);
    expect(command).toEqual({
      command: 'run',
      file: 'p.md',
      args: [
        { key: 'a', value: '1' },
        { key: 'b', value: 'x=y' },
      ],
      script: 's.yaml',
      seed: '7',
      json: true,
      events: true,
      verbose: true,
      quiet: false,
      answers: ['one', 'two'],
      maxInstructions: 5000,
      entryTimeoutSeconds: 60,
    });
  });

  it('reads runvil test with no paths as the current directory', () => {
    expect(parseCommandLine(['test'])).toEqual({ command: 'test', paths: ['.'], entryTimeoutSeconds: 60 });
    expect(parseCommandLine(['test', 'a', 'b'])).toEqual({ command: 'test', paths: ['a', 'b'], entryTimeoutSeconds: 60 });
  });

  it('reads help in every spelling', () => {
    expect(parseCommandLine([])).toEqual({ command: 'help' });
    expect(parseCommandLine(['--help'])).toEqual({ command: 'help' });
    expect(parseCommandLine(['help'])).toEqual({ command: 'help' });
    expect(parseCommandLine(['help', 'run'])).toEqual({ command: 'help', topic: 'run' });
    expect(parseCommandLine(['test', '--help'])).toEqual({ command: 'help', topic: 'test' });
  });

  it.each([
    [['frob'], 'unknown command "frob"; the commands are run, check, test, keys, packs and deploy-check'],
    [['help', 'frob'], 'unknown command "frob"; the commands are run, check, test, keys, packs and deploy-check'],
    [['--frob'], 'unknown option --frob (a command comes first: run, check, test, keys, packs or deploy-check)'],
    [['run', 'p.md', '--frob'], 'unknown option --frob for runvil run'],
    [['check', 'p.md', '-x'], 'unknown option -x for runvil check'],
    [['run'], 'runvil run needs a prompt file: runvil run PROMPT.md'],
    [['run', 'a.md', 'b.md'], 'runvil run takes one prompt file, got 2: a.md b.md'],
    [['run', 'p.md', '--seed'], 'option --seed needs a value'],
    [['run', 'p.md', '--json=yes'], 'option --json takes no value'],
    [['run', 'p.md', '--arg', 'novalue'], '--arg takes key=value, got "novalue"'],
    [['run', 'p.md', '--arg', '=x'], '--arg takes key=value, got "=x"'],
    [['run', 'p.md', '--max-instructions', '0'], '--max-instructions takes a positive whole number, got "0"'],
  ])('refuses %j: %s', (argv, message) => {
    expect(usageMessage(argv)).toBe(message);
  });
});

describe('runvil exit statuses for usage errors', () => {
  it('prints the help and exits 0', async () => {
    const result = await cli(['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('runvil run PROMPT.md');
    expect((await cli(['help', 'run'])).stdout).toContain('--max-instructions N');
  });

  it('exits 2 naming the problem for an unknown command or option', async () => {
    expect(await cli(['frob'])).toEqual({
      status: 2,
      stdout: '',
      stderr: 'runvil: unknown command "frob"; the commands are run, check, test, keys, packs and deploy-check\n',
    });
    expect((await cli(['test', '--frob'])).status).toBe(2);
  });
});

describe('run arguments against the args: declaration', () => {
  const declared: Record<string, ArgSpec> = {
    topic: { type: 'string' },
    count: { type: 'integer', default: 3 },
    ratio: { type: 'number', default: 0.5 },
    deep: { type: 'boolean', default: false },
    extra: { type: 'json', default: null },
  };

  it('coerces command-line text by type and fills every default', () => {
    expect(
      argsFromCommandLine(declared, [
        { key: 'topic', value: 'lua' },
        { key: 'count', value: '12' },
        { key: 'extra', value: '[1,"a"]' },
      ]),
    ).toEqual({
      ok: true,
      args: { topic: 'lua', count: 12, ratio: 0.5, deep: false, extra: [1, 'a'] },
    });
  });

  it('checks typed values from a test file, reading strings as the command line would', () => {
    expect(argsFromData(declared, { topic: 'lua', count: '4', deep: true, extra: { a: 1 } })).toEqual({
      ok: true,
      args: { topic: 'lua', count: 4, ratio: 0.5, deep: true, extra: { a: 1 } },
    });
    expect(argsFromData(declared, { topic: 'lua', count: 1.5 })).toEqual({ ok: false, arg: 'count', message: 'args.count: count takes an integer, got 1.5' });
    expect(argsFromData(declared, { topic: 7 })).toEqual({ ok: false, arg: 'topic', message: 'args.topic: topic takes a string, got 7' });
  });

  it('names a missing required arg', () => {
    expect(argsFromData(declared, {})).toEqual({ ok: false, arg: 'topic', message: 'missing required arg `topic` (string)' });
  });
});
