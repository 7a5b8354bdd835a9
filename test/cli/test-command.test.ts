import { afterEach, describe, expect, it } from 'vitest';
import { cli, luaPrompt, tempDir } from './helpers.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A temporary directory of test files; answers its path helper. */
async function files(contents: Record<string, string>) {
  const dir = await tempDir(contents);
  cleanups.push(dir.cleanup);
  return dir;
}

/** An inline `source:` block holding a one-block Lua prompt. */
function source(block: string, frontmatter = ''): string {
  return `source: |\n${luaPrompt(block, frontmatter).replace(/^/gm, '  ')}\n`;
}

const STORE_PROMPT = luaPrompt("store.write('n.txt', tostring(args.n * 2))\nreturn 'n=' .. store.read('n.txt')", 'args:\n  n: { type: integer, default: 1 }\n');

describe('runvil test: running and reporting', () => {
  it('prints ok for each passing test and ends with N passed, N failed', async () => {
    const dir = await files({
      'store.md': STORE_PROMPT,
      'a.test.yaml': 'prompt: ./store.md\nargs: { n: 21 }\nexpect:\n  result: n=42\n',
      'b.test.yaml': `${source("return 'inline'")}expect:\n  result: inline\n`,
    });
    const result = await cli(['test', dir.dir]);
    expect(result).toEqual({
      status: 0,
      stdout: `ok   ${dir.path('a.test.yaml')}\nok   ${dir.path('b.test.yaml')}\n2 passed, 0 failed\n`,
      stderr: '',
    });
  });

  it('prints FAIL with what was expected and what came back, and exits 1', async () => {
    const dir = await files({
      'store.md': STORE_PROMPT,
      'a.test.yaml': 'prompt: ./store.md\nexpect:\n  result: n=3\n',
      'b.test.yaml': 'prompt: ./store.md\nexpect:\n  result: n=2\n',
    });
    const result = await cli(['test', dir.dir]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(
      `FAIL ${dir.path('a.test.yaml')}\n` +
        '  expected result "n=3"\n' +
        '  got a completed run with result "n=2"\n' +
        `ok   ${dir.path('b.test.yaml')}\n` +
        '1 passed, 1 failed\n',
    );
  });

  it('shows the error that came back and the event types when events were expected', async () => {
    const dir = await files({ 'a.test.yaml': `${source("error('boom', 0)")}expect:\n  result: x\n  events: [run_started, run_completed]\n` });
    const result = await cli(['test', dir.dir]);
    expect(result.stdout).toBe(
      `FAIL ${dir.path('a.test.yaml')}\n` +
        '  expected result "x"\n' +
        '  expected events in this order: run_started, run_completed\n' +
        '  got a failed run with error[Lua]: "boom"\n' +
        '  got events: run_started, section_entered, run_failed\n' +
        '0 passed, 1 failed\n',
    );
  });

  it('finds *.test.yaml files recursively, in sorted order, skipping node_modules and hidden directories', async () => {
    const passing = `${source("return 'x'")}expect:\n  result: x\n`;
    const dir = await files({
      'b/z.test.yaml': passing,
      'a.test.yaml': passing,
      'b/a.test.yaml': passing,
      'node_modules/pkg/x.test.yaml': 'broken: [',
      '.hidden/x.test.yaml': 'broken: [',
      'notes.yaml': 'broken: [',
    });
    const result = await cli(['test', dir.dir]);
    expect(result.stdout.split('\n').slice(0, 3)).toEqual([
      `ok   ${dir.path('a.test.yaml')}`,
      `ok   ${dir.path('b/a.test.yaml')}`,
      `ok   ${dir.path('b/z.test.yaml')}`,
    ]);
    expect(result.stdout).toMatch(/\n3 passed, 0 failed\n$/);
  });

  it('runs a test file named directly', async () => {
    const dir = await files({ 'one.test.yaml': `${source("return 'x'")}expect:\n  result: x\n` });
    expect((await cli(['test', dir.path('one.test.yaml')])).stdout).toMatch(/1 passed, 0 failed/);
  });

  it('refuses a path that does not exist (exit 2)', async () => {
    const dir = await files({});
    expect(await cli(['test', dir.path('nowhere')])).toEqual({ status: 2, stdout: '', stderr: `runvil: ${dir.path('nowhere')} does not exist\n` });
  });

  it('seeds every run with "0" unless the test says otherwise', async () => {
    const block = 'return tostring(math.random(1, 1000000))';
    const first = await files({ 'a.test.yaml': `${source(block)}expect:\n  result: placeholder\n` });
    const seeded = await files({ 'a.test.yaml': `${source(block)}seed: "0"\nexpect:\n  result: placeholder\n` });
    const other = await files({ 'a.test.yaml': `${source(block)}seed: other\nexpect:\n  result: placeholder\n` });
    const resultOf = async (dir: string) => /result "(\d+)"/.exec((await cli(['test', dir])).stdout)![1];
    expect(await resultOf(first.dir)).toBe(await resultOf(seeded.dir));
    expect(await resultOf(other.dir)).not.toBe(await resultOf(first.dir));
  });

  it('fails a test whose args do not fit the prompt, naming the arg', async () => {
    const dir = await files({ 'store.md': STORE_PROMPT, 'a.test.yaml': 'prompt: ./store.md\nargs: { n: many }\nexpect:\n  result: x\n' });
    const result = await cli(['test', dir.dir]);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(`  ${dir.path('a.test.yaml')}:2:12: args.n: n takes an integer, got "many"\n`);
  });

  it('treats a prompt the parser refuses as a failed run with its first error', async () => {
    const dir = await files({
      'a.test.yaml':
        'source: |\n  ---\n  name: Bad\n  description: d\n  runvil: 0\n  ---\n  # T\nexpect:\n  error: { kind: Frontmatter, contains: "`name` must be" }\n',
    });
    expect((await cli(['test', dir.dir])).stdout).toMatch(/^ok {3}/);
  });
});

describe('runvil test: each expect form', () => {
  const cases: [string, string, string, boolean][] = [
    ['result, met', "return 'exact'", 'result: exact', true],
    ['result, unmet', "return 'exact '", 'result: exact', false],
    ['result_contains, met', "return 'a needle here'", 'result_contains: needle', true],
    ['result_contains, unmet', "return 'hay'", 'result_contains: needle', false],
    ['result_matches, met', "return 'abc123'", 'result_matches: "^[a-z]+[0-9]{3}$"', true],
    ['result_matches, unmet', "return 'abc12'", 'result_matches: "^[a-z]+[0-9]{3}$"', false],
    ['error kind and message, met', "error('exact failure', 0)", 'error: { kind: Lua, message: exact failure }', true],
    ['error kind and message, unmet message', "error('other failure', 0)", 'error: { kind: Lua, message: exact failure }', false],
    ['error kind and message, unmet kind', "store.read('missing.txt')", 'error: { kind: Lua, contains: missing.txt }', false],
    ['error kind and contains, met', "store.read('missing.txt')", 'error: { kind: Store, contains: missing.txt }', true],
    ['error, when the run completed', "return 'fine'", 'error: { kind: Lua }', false],
    ['a result, when the run failed', "error('x', 0)", 'result_contains: x', false],
    ['events as a subsequence, met', "log('a')\nreturn 'x'", 'events: [run_started, log, run_completed]', true],
    ['events out of order, unmet', "log('a')\nreturn 'x'", 'events: [log, section_entered]', false],
    ['several expectations, all met', "log('a')\nreturn 'xyz'", 'result: xyz\n  result_contains: y\n  events: [log]', true],
    ['several expectations, one unmet', "return 'xyz'", 'result: xyz\n  result_contains: q', false],
  ];
  it.each(cases)('%s', async (_name, block, expectation, passes) => {
    const dir = await files({ 'a.test.yaml': `${source(block)}expect:\n  ${expectation}\n` });
    const result = await cli(['test', dir.dir]);
    expect(result.status).toBe(passes ? 0 : 1);
    expect(result.stdout).toMatch(passes ? /\n1 passed, 0 failed\n$/ : /\n0 passed, 1 failed\n$/);
  });
});

describe('runvil test: a test file that does not fit the format', () => {
  const cases: [string, string, number, number, string][] = [
    ['the top level', 'prompt: ./p.md\nexpectt: {}\nexpect: { result: x }\n', 2, 1, 'unknown key `expectt` in the test file'],
    ['host', 'prompt: ./p.md\nhost:\n  webb: false\nexpect: { result: x }\n', 3, 3, 'unknown key `webb` in `host`'],
    ['host.web', 'prompt: ./p.md\nhost:\n  web:\n    page: {}\nexpect: { result: x }\n', 4, 5, 'unknown key `page` in `host.web`'],
    ['a Pack', 'prompt: ./p.md\nhost:\n  packs:\n    acme/x:\n      tool: []\nexpect: { result: x }\n', 5, 7, 'unknown key `tool` in `host.packs["acme/x"]`'],
    [
      'a tool',
      'prompt: ./p.md\nhost:\n  packs:\n    acme/x:\n      tools:\n        - name: t\n          return: x\nexpect: { result: x }\n',
      7,
      11,
      'unknown key `return` in `host.packs["acme/x"].tools[0]`',
    ],
    ['a model reply', 'prompt: ./p.md\nmodel:\n  - content: a\n  - text: b\nexpect: { result: x }\n', 4, 5, 'unknown key `text` in `model[1]`'],
    ['expect', 'prompt: ./p.md\nexpect:\n  results: x\n', 3, 3, 'unknown key `results` in `expect`'],
    ['expect.error', 'prompt: ./p.md\nexpect:\n  error: { kind: Lua, msg: x }\n', 3, 23, 'unknown key `msg` in `expect.error`'],
  ];
  it.each(cases)('refuses an unknown key in %s with its line and column (exit 2)', async (_where, text, line, column, message) => {
    const dir = await files({ 'p.md': luaPrompt("return 'x'"), 'a.test.yaml': text });
    const result = await cli(['test', dir.dir]);
    expect(result).toEqual({ status: 2, stdout: '', stderr: `${dir.path('a.test.yaml')}:${line}:${column}: ${message}\n` });
  });

  it('runs no test when any file does not fit, and lists every problem', async () => {
    const dir = await files({
      'p.md': luaPrompt("return 'x'"),
      'a.test.yaml': 'prompt: ./p.md\nexpect: { result: x }\n',
      'b.test.yaml': 'prompt: ./p.md\nbogus: 1\nexpect: { result: x, other: 2 }\n',
    });
    const result = await cli(['test', dir.dir]);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `${dir.path('b.test.yaml')}:2:1: unknown key \`bogus\` in the test file\n` + `${dir.path('b.test.yaml')}:3:22: unknown key \`other\` in \`expect\`\n`,
    );
  });

  it.each([
    ['a missing prompt file', 'prompt: ./absent.md\nexpect: { result: x }\n', /:1:9: the prompt file \.\/absent\.md does not exist/],
    ['neither prompt nor source', 'expect: { result: x }\n', /:1:1: a test needs `prompt:` \(the prompt file\) or `source:`/],
    ['no expect', 'prompt: ./p.md\n', /:1:1: a test needs `expect:`/],
    ['an empty expect', 'prompt: ./p.md\nexpect: {}\n', /:2:9: `expect` needs one or more of/],
    ['a bad regular expression', 'prompt: ./p.md\nexpect: { result_matches: "(" }\n', /:2:27: `expect.result_matches` is not a regular expression/],
    ['a value of the wrong kind', 'prompt: ./p.md\nanswers: hi\nexpect: { result: x }\n', /:2:10: `answers` must be a list of answers/],
    ['invalid YAML', 'prompt: [\n', /:2:1: invalid YAML: /],
    ['a result and an error both', 'prompt: ./p.md\nexpect: { result: x, error: { kind: Lua } }\n', /a test expects a result or an error, not both/],
    [
      'recorded: that is not a list',
      'prompt: ./p.md\nrecorded: { tool: web/fetch }\nexpect: { result: x }\n',
      /:2:11: `recorded` must be a list of recorded tool calls/,
    ],
    [
      'a recorded call with an unknown key',
      'prompt: ./p.md\nrecorded:\n  - { tool: web/fetch, output: x, result: y }\nexpect: { result: x }\n',
      /:3:35: unknown key `result` in `recorded\[0\]`/,
    ],
    [
      'a recorded call with no tool',
      'prompt: ./p.md\nrecorded:\n  - { output: x }\nexpect: { result: x }\n',
      /:3:5: `recorded\[0\]` needs a `tool`: the tool id the run called/,
    ],
    [
      'a recorded call that is no tool id',
      'prompt: ./p.md\nrecorded:\n  - { tool: fetch, output: x }\nexpect: { result: x }\n',
      /:3:13: `recorded\[0\].tool` must be a tool id, <pack id>\/<tool name>/,
    ],
    [
      'a recorded call with neither output nor fails',
      'prompt: ./p.md\nrecorded:\n  - { tool: web/fetch, args: { url: x } }\nexpect: { result: x }\n',
      /:3:5: `recorded\[0\]` needs the tool's `output` or its failure text \(`fails`\)/,
    ],
    [
      'a recorded call with both output and fails',
      'prompt: ./p.md\nrecorded:\n  - { tool: web/fetch, output: x, fails: y }\nexpect: { result: x }\n',
      /`recorded\[0\]` holds the tool's `output` or its failure \(`fails`\), not both/,
    ],
    [
      'recorded args that are not a map',
      'prompt: ./p.md\nrecorded:\n  - { tool: web/fetch, args: [x], output: x }\nexpect: { result: x }\n',
      /:3:30: `recorded\[0\].args` must be a map of argument name to value/,
    ],
    [
      'a recorded task that is no chain id',
      'prompt: ./p.md\nrecorded:\n  - { tool: web/fetch, task: main, output: x }\nexpect: { result: x }\n',
      /`recorded\[0\].task` must be a chain id such as 0/,
    ],
    [
      'a model reply whose task is no chain id',
      'prompt: ./p.md\nmodel:\n  - { content: hi, task: "arm 1" }\nexpect: { result: x }\n',
      /:3:\d+: `model\[0\].task` must be a chain id such as 0 \(the run's main chain\) or 0.1 \(a task\); got "arm 1"/,
    ],
    [
      'a clock reading with no time',
      'prompt: ./p.md\nclock:\n  - { task: "0.1" }\nexpect: { result: x }\n',
      /:3:5: `clock\[0\]` needs `now`: the time the run read, in milliseconds since 1970-01-01T00:00:00Z/,
    ],
    [
      'a clock reading that is no number',
      'prompt: ./p.md\nclock:\n  - { now: soon }\nexpect: { result: x }\n',
      /:3:12: `clock\[0\].now` must be a number of milliseconds/,
    ],
    [
      'a clock reading that is no finite number',
      'prompt: ./p.md\nclock:\n  - { now: .inf }\nexpect: { result: x }\n',
      /:3:12: `clock\[0\].now` must be a number of milliseconds/,
    ],
    [
      'a clock reading of a task that is no chain id',
      'prompt: ./p.md\nclock:\n  - { now: 1, task: main }\nexpect: { result: x }\n',
      /`clock\[0\].task` must be a chain id such as 0/,
    ],
    [
      'task events keyed by something other than a chain id',
      'prompt: ./p.md\nexpect:\n  task_events: { __proto__: [task_started] }\n',
      /`expect.task_events` is keyed by chain ids such as 0.1 \(a task\) or 0.f0.2 \(a fanout arm\); got "__proto__"/,
    ],
    [
      'task events that are no list',
      'prompt: ./p.md\nexpect:\n  task_events: { "0.1": task_started }\n',
      /:3:25: `expect.task_events\["0.1"\]` must be a list of event types/,
    ],
    [
      'a model reply that both replies and fails',
      'prompt: ./p.md\nmodel:\n  - { content: hi, fails: down }\nexpect: { result: x }\n',
      /`model\[0\]` either replies \(content, tool_calls\) or `fails`, not both/,
    ],
  ])('refuses %s (exit 2)', async (_what, text, message) => {
    const dir = await files({ 'p.md': luaPrompt("return 'x'"), 'a.test.yaml': text });
    const result = await cli(['test', dir.dir]);
    expect(result.status).toBe(2);
    expect(result.stderr.startsWith(dir.path('a.test.yaml'))).toBe(true);
    expect(result.stderr).toMatch(message);
  });
});
