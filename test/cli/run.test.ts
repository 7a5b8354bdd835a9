import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, luaPrompt, promptText, tempDir } from './helpers.ts';

let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir({
    'hello.md': luaPrompt("store.write('a.txt', 'stored')\nvar.n = 2\nreturn store.read('a.txt') .. '|' .. var.n"),
    'fails.md': luaPrompt("log('before')\nerror('boom')"),
    'raises.md': luaPrompt('local t = nil\nreturn t.field'),
    'empty.md': luaPrompt('local x = 1'),
    'random.md': luaPrompt('return tostring(math.random(1, 1000000))'),
    'loop.md': luaPrompt('while true do end'),
    'typed.md': luaPrompt(
      'return json.encode({ s = args.s, i = args.i, n = args.n, b = args.b, j = args.j, d = args.d })',
      'args:\n  s: string\n  i: integer\n  n: number\n  b: boolean\n  j: json\n  d: { type: string, default: dflt }\n',
    ),
    'needs.md': luaPrompt('return args.who', 'args:\n  who: string\n'),
    'broken.md': '---\nname: Broken\ndescription: d\nrunvil: 0\nextra: 1\n---\n# T\n\n## A\nx\n\n## A\ny\n',
    'ask.md': luaPrompt("return tools.call('user-input/ask', { question = 'Name?' }) .. '+' .. tools.call('user-input/ask')", 'uses: [user-input]\n'),
    'model.md': promptText('## Ask\nSay hi.\n'),
    'script.yaml': 'model:\n  - content: scripted hi\n',
    'bad-script.yaml': 'model:\n  - content: hi\n    tool_calls: []\nanswer: [x]\n',
  });
});
afterAll(() => dir.cleanup());

describe('runvil run', () => {
  it('prints the run result on stdout with a trailing newline and exits 0', async () => {
    const result = await cli(['run', dir.path('hello.md')]);
    expect(result).toEqual({ status: 0, stdout: 'stored|2\n', stderr: '' });
  });

  it('prints an empty result as an empty line', async () => {
    expect(await cli(['run', dir.path('empty.md')])).toEqual({ status: 0, stdout: '\n', stderr: '' });
  });

  it('prints error[Kind]: message on stderr and exits 1 when the run fails', async () => {
    const result = await cli(['run', dir.path('fails.md')]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('error[Lua]: fails.md:11: boom\n');
  });

  it('prints the Lua traceback only with --verbose', async () => {
    const quiet = await cli(['run', dir.path('raises.md')]);
    expect(quiet.stderr).not.toContain('stack traceback');
    const verbose = await cli(['run', dir.path('raises.md'), '--verbose']);
    expect(verbose.stderr).toMatch(/^error\[Lua\]: raises\.md:11: attempt to index a nil value/);
    expect(verbose.stderr).toContain('stack traceback');
  });

  it('prints every parse error as file:line:column: error[Kind]: message and exits 1', async () => {
    const file = dir.path('broken.md');
    const result = await cli(['run', file]);
    expect(result.status).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^${escape(file)}:2:7: error\\[Frontmatter\\]: invalid frontmatter: `));
    expect(lines[1]).toMatch(new RegExp(`^${escape(file)}:5:1: error\\[Frontmatter\\]: invalid frontmatter: unknown key`));
    expect(lines[2]).toMatch(new RegExp(`^${escape(file)}:12: error\\[Prompt\\]: two sections are headed`));
  });

  it('stops an endless loop at the --max-instructions budget', async () => {
    const result = await cli(['run', dir.path('loop.md'), '--max-instructions', '100000']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^error\[Limit\]: the run used its instruction budget of 100,000 Lua instructions/);
  });

  it('runs the same seed to the same result', async () => {
    const first = await cli(['run', dir.path('random.md'), '--seed', 'abc']);
    const second = await cli(['run', dir.path('random.md'), '--seed', 'abc']);
    const other = await cli(['run', dir.path('random.md'), '--seed', 'xyz']);
    expect(first.stdout).toBe(second.stdout);
    expect(other.stdout).not.toBe(first.stdout);
  });
});

describe('runvil run --json', () => {
  it('prints one object with status, result, a null error and the events', async () => {
    const result = await cli(['run', dir.path('hello.md'), '--json']);
    expect(result.status).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(Object.keys(printed)).toEqual(['status', 'result', 'error', 'events']);
    expect(printed).toMatchObject({ status: 'completed', result: 'stored|2', error: null });
    expect(printed.events.map((e: { type: string }) => e.type)).toEqual(['run_started', 'section_entered', 'run_completed']);
  });

  it('prints a null result and the error kind and message for a failed run, and exits 1', async () => {
    const result = await cli(['run', dir.path('fails.md'), '--json']);
    expect(result.status).toBe(1);
    const printed = JSON.parse(result.stdout);
    expect(printed).toMatchObject({ status: 'failed', result: null, error: { kind: 'Lua', message: 'fails.md:11: boom' } });
    expect(printed.events.at(-1).type).toBe('run_failed');
  });

  it('reports a prompt the parser refuses with its first error', async () => {
    const result = await cli(['run', dir.path('broken.md'), '--json']);
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', result: null, error: { kind: 'Frontmatter' }, events: [] });
  });
});

describe('runvil run --events', () => {
  it('streams each event to stderr as a JSON line, in order', async () => {
    const result = await cli(['run', dir.path('fails.md'), '--events']);
    const lines = result.stderr.trimEnd().split('\n');
    const events = lines.slice(0, -1).map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toEqual(['run_started', 'section_entered', 'log', 'run_failed']);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(events[2]).toMatchObject({ section: 'Only', message: 'before' });
    expect(lines.at(-1)).toBe('error[Lua]: fails.md:11: boom');
  });
});

describe('runvil run --arg', () => {
  it('coerces each value by the type the prompt declares and fills defaults', async () => {
    const result = await cli(['run', dir.path('typed.md'), '--arg', 's=42', '--arg', 'i=-7', '--arg', 'n=2.5', '--arg', 'b=true', '--arg', 'j={"k":[1,null]}']);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ s: '42', i: -7, n: 2.5, b: true, j: { k: [1, null] }, d: 'dflt' });
  });

  it.each([
    [['--arg', 'i=x'], /--arg i=x: i takes an integer, got "x"/],
    [['--arg', 'i=1.5'], /i takes an integer/],
    [['--arg', 'n=abc'], /n takes a number/],
    [['--arg', 'b=yes'], /b takes a boolean \(true or false\), got "yes"/],
    [['--arg', 'j={bad'], /j takes JSON, and "\{bad" is not JSON/],
    [['--arg', 'nope=1'], /unknown arg `nope`: the prompt declares `s`, `i`, `n`, `b`, `j`, `d`/],
    [['--arg', 's=a', '--arg', 's=b'], /--arg s is given twice/],
  ])('refuses %j as a usage error naming the arg and the file (exit 2)', async (extra, message) => {
    const all = ['--arg', 's=x', '--arg', 'i=1', '--arg', 'n=1', '--arg', 'b=false', '--arg', 'j=1'];
    const result = await cli(['run', dir.path('typed.md'), ...extra, ...all.slice(extra.length)]);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr.startsWith(`${dir.path('typed.md')}: `)).toBe(true);
  });

  it('refuses a missing required arg (exit 2)', async () => {
    const result = await cli(['run', dir.path('needs.md')]);
    expect(result).toMatchObject({ status: 2, stdout: '' });
    expect(result.stderr).toBe(`${dir.path('needs.md')}: missing required arg \`who\` (string); pass --arg who=VALUE\n`);
  });

  it('refuses an arg for a prompt that declares none (exit 2)', async () => {
    const result = await cli(['run', dir.path('hello.md'), '--arg', 'x=1']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown arg `x`: the prompt declares no args');
  });

  it('refuses an --arg that is not key=value, naming the prompt file (exit 2)', async () => {
    const result = await cli(['run', dir.path('needs.md'), '--arg', 'who']);
    expect(result).toEqual({ status: 2, stdout: '', stderr: `${dir.path('needs.md')}: --arg takes key=value, got "who"\n` });
  });

  it('refuses a prompt file that does not exist (exit 2)', async () => {
    const missing = dir.path('missing.md');
    const result = await cli(['run', missing]);
    expect(result).toEqual({ status: 2, stdout: '', stderr: `runvil: prompt file ${missing} does not exist\n` });
  });
});

describe('the operator of runvil run', () => {
  it('answers asks from --answer values in order', async () => {
    const result = await cli(['run', dir.path('ask.md'), '--answer', 'one', '--answer', 'two']);
    expect(result).toEqual({ status: 0, stdout: 'one+two\n', stderr: '' });
  });

  it("fails an ask past the last answer with the operator's window closed", async () => {
    const result = await cli(['run', dir.path('ask.md'), '--answer', 'one']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("the operator's window closed");
  });

  it('asks the person at the terminal, showing the question on stderr', async () => {
    const result = await cli(['run', dir.path('ask.md')], { terminal: ['Ada', 'Lovelace'] });
    expect(result.stdout).toBe('Ada+Lovelace\n');
    expect(result.stderr).toBe('Name?\n> The run asks for your answer.\n> ');
  });

  it('uses --answer values before the terminal', async () => {
    const result = await cli(['run', dir.path('ask.md'), '--answer', 'given'], { terminal: ['typed'] });
    expect(result.stdout).toBe('given+typed\n');
  });
});

describe('runvil run --script', () => {
  it('runs the model rounds on the scripted model', async () => {
    const result = await cli(['run', dir.path('model.md'), '--script', dir.path('script.yaml')]);
    expect(result).toEqual({ status: 0, stdout: 'scripted hi\n', stderr: '' });
  });

  it('says how to get a model when no provider is configured', async () => {
    const result = await cli(['run', dir.path('model.md')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('no model provider is configured for role');
    expect(result.stderr).toContain('--script FILE');
  });

  it('refuses a script file with an unknown key, naming its line (exit 2)', async () => {
    const result = await cli(['run', dir.path('model.md'), '--script', dir.path('bad-script.yaml')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`${dir.path('bad-script.yaml')}:4:1: unknown key \`answer\` in the script file\n`);
  });

  it('refuses a script file that does not exist (exit 2)', async () => {
    const result = await cli(['run', dir.path('model.md'), '--script', dir.path('nope.yaml')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('script file');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
