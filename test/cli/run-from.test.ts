/**
 * `runvil run --from FILE.test.yaml --until N`: a fork of the run a test file records, on
 * the author's machine. The first N journal entries replay from the file; the rest runs
 * live (here on a --script Host); an edited prompt that cannot reproduce them is refused,
 * naming the step.
 */
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, luaPrompt, tempDir } from './helpers.ts';

const BODY = `local who = tools.call('user-input/ask', { question = 'Who?' })
store.write('who.txt', who)
local stats = tools.call('stats/stats', { text = who })
local when = tools.call('user-input/ask', { question = 'When?' })
return store.read('who.txt') .. '|' .. stats .. '|' .. when`;
const USES = 'uses: [user-input, acme/stats]\n';
const PROMPT = luaPrompt(BODY, USES);
const STATS = { 'acme/stats': { tools: [{ name: 'stats', parameters: { type: 'object', properties: { text: { type: 'string' } } } }] } };

let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir({
    // The journal it records: 1 ask (0-1), 2 store.write, 3 stats/stats, 4 ask, 5 store.read.
    'run.test.yaml': stringify({
      source: PROMPT,
      seed: 'abc',
      host: { packs: STATS },
      answers: ['Ada', 'Friday'],
      recorded: [{ tool: 'stats/stats', args: { text: 'Ada' }, section: 'Only', output: 'recorded stats' }],
      expect: { result: 'Ada|recorded stats|Friday' },
    }),
    'asks.test.yaml': stringify({
      source: luaPrompt(
        "return tools.call('user-input/ask', { question = 'Who?' }) .. '|' .. tools.call('user-input/ask', { question = 'When?' })",
        'uses: [user-input]\n',
      ),
      answers: ['Ada', 'Friday'],
      expect: { result: 'Ada|Friday' },
    }),
    'live.yaml': stringify({ host: { packs: { 'acme/stats': { tools: [{ ...STATS['acme/stats'].tools[0], returns: 'live stats' }] } } } }),
    'edited.md': luaPrompt(BODY.replace('{ text = who }', "{ text = 'someone' }"), USES),
    'bad.test.yaml': stringify({ source: PROMPT, recorded: [{ tool: 'stats', output: 'x', fails: 'y' }], expect: { result: 'x' } }),
  });
});
afterAll(() => dir.cleanup());

describe('runvil run --from FILE.test.yaml', () => {
  it('replays the whole recorded run by default, calling nothing', async () => {
    // The live script's tool would answer "live stats", and it has no operator answers left.
    expect(await cli(['run', '--from', dir.path('run.test.yaml'), '--script', dir.path('live.yaml')])).toEqual({
      status: 0,
      stdout: 'Ada|recorded stats|Friday\n',
      stderr: '',
    });
  });

  it('goes on live on the local Host (no --script), whose run has an id of its own', async () => {
    // The file's journal was rebuilt as run-1's; a real run's tool calls name the real run.
    expect(await cli(['run', '--from', dir.path('asks.test.yaml'), '--until', '1', '--answer', 'Monday'])).toEqual({
      status: 0,
      stdout: 'Ada|Monday\n',
      stderr: '',
    });
  });

  it('with --until 3, replays the ask, the write and the recorded tool output, then asks live', async () => {
    const result = await cli(['run', '--from', dir.path('run.test.yaml'), '--until', '3', '--script', dir.path('live.yaml'), '--answer', 'Monday']);
    expect(result).toEqual({ status: 0, stdout: 'Ada|recorded stats|Monday\n', stderr: '' });
  });

  it('with --until 2, calls the tool live, with the file the replayed write left', async () => {
    const result = await cli(['run', '--from', dir.path('run.test.yaml'), '--until', '2', '--script', dir.path('live.yaml'), '--answer', 'Monday']);
    expect(result).toEqual({ status: 0, stdout: 'Ada|live stats|Monday\n', stderr: '' });
  });

  it('with --until 0, runs the recorded prompt live from its start, with its seed', async () => {
    const result = await cli([
      'run',
      '--from',
      dir.path('run.test.yaml'),
      '--until',
      '0',
      '--script',
      dir.path('live.yaml'),
      '--answer',
      'Eve',
      '--answer',
      'Monday',
    ]);
    expect(result).toEqual({ status: 0, stdout: 'Eve|live stats|Monday\n', stderr: '' });
  });

  it('refuses an edited prompt that cannot reproduce the first N entries, naming the step and both calls', async () => {
    const result = await cli(['run', '--from', dir.path('run.test.yaml'), '--until', '3', dir.path('edited.md'), '--script', dir.path('live.yaml')]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error[Determinism]: the prompt cannot reproduce the first 3 journal entries of ${dir.path('run.test.yaml')}: the run diverged from its journal at effect 3 of chain 0, in section "## Only": the journal recorded a call of stats/stats with arguments {"text":"Ada"}; the prompt now asks for the same tool with arguments {"text":"someone"}\n`,
    );
  });

  it('runs an edited prompt that reproduces the first N entries, live after them', async () => {
    const result = await cli([
      'run',
      '--from',
      dir.path('run.test.yaml'),
      '--until',
      '2',
      dir.path('edited.md'),
      '--script',
      dir.path('live.yaml'),
      '--answer',
      'Monday',
    ]);
    expect(result).toEqual({ status: 0, stdout: 'Ada|live stats|Monday\n', stderr: '' });
  });

  it('refuses --until past the recorded journal, --until without --from, and --seed or --arg with --from', async () => {
    const past = await cli(['run', '--from', dir.path('run.test.yaml'), '--until', '6']);
    expect(past.status).toBe(2);
    expect(past.stderr).toContain(`--until 6 is past the end of the run ${dir.path('run.test.yaml')} records: it has 5 journal entries`);
    for (const argv of [
      ['run', dir.path('edited.md'), '--until', '2'],
      ['run', '--from', dir.path('run.test.yaml'), '--until', 'two'],
      ['run', '--from', dir.path('run.test.yaml'), '--until', '-1'],
      ['run', '--from', dir.path('run.test.yaml'), '--seed', 'x'],
      ['run', '--from', dir.path('run.test.yaml'), '--arg', 'a=b'],
    ]) {
      const result = await cli(argv);
      expect({ argv, status: result.status }).toEqual({ argv, status: 2 });
    }
  });

  it("refuses a test file whose recorded: does not fit the format, with each problem's place", async () => {
    const result = await cli(['run', '--from', dir.path('bad.test.yaml')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('`recorded[0].tool` must be a tool id, <pack id>/<tool name> (such as web/fetch); got "stats"');
    expect(result.stderr).toContain("`recorded[0]` holds the tool's `output` or its failure (`fails`), not both");
  });
});
