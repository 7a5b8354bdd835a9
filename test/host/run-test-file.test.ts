/**
 * A run's test file (host/run-test-file.ts) carries every recorded value exactly: text a
 * hostile tool or operator gave (control characters, YAML syntax, line separators, a
 * comment marker in a question) reads back the same, and the journal's comment lines cannot
 * be broken out of.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readTestText } from '../../src/cli/test-file.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import { runTestFile, splitJournal } from '../../src/host/run-test-file.ts';

const HOSTILE = [
  '\u0000\u0007 nul and bell',
  'line\u2028separator\u2029para',
  '--- !!js/function "x"',
  '# not a comment: [a, {b}]',
  '  leading and trailing  \n\n',
  '\'"\\',
  'émoji 🎉',
];

const call = (seq: number, tool: string, args: object, answer: JournalEntry['answer'], chain = '0'): JournalEntry => ({
  chain,
  seq,
  request: {
    op: 'tool.call',
    tool,
    name: tool.replace('/', '_'),
    args: args as never,
    origin: { execution: 'r1', section: 'S', caller: 'script' },
    call_id: null,
  },
  answer,
});

const journal: JournalEntry[] = [
  call(1, 'user-input/ask', { question: 'Who?\nInjected: yes #' }, { ok: true, value: HOSTILE[1]! }),
  ...HOSTILE.map((text, index) => call(index + 2, 'web/fetch', { url: text }, { ok: true, value: text })),
  call(20, 'web/fetch', { url: 'x' }, { ok: false, error: { kind: 'tool', message: HOSTILE[0]! } }),
  {
    chain: '0',
    seq: 21,
    request: { op: 'model.round', role: 'default', digest: 'd', request: null },
    answer: { ok: true, value: { content: HOSTILE[2]!, tool_calls: [{ id: 'c1', name: 'web_fetch', arguments: { url: HOSTILE[3]! } }], usage: null } },
  },
  {
    chain: '0',
    seq: 22,
    request: { op: 'model.round', role: 'default', digest: 'e', request: null },
    answer: { ok: false, error: { kind: 'model', message: 'the provider answered 500' } },
  },
];

const text = runTestFile({
  run_id: 'r1',
  prompt: 'p',
  source: `---\nname: p\ndescription: d\nrunvil: 0\n---\n# P\n\n## S\nProse with trailing spaces   \n\ttabbed\n`,
  args: { who: HOSTILE[4]! },
  seed: '0x10',
  journal,
  ending: { status: 'failed', error: { kind: 'Model', message: HOSTILE[5]! } },
  events: [
    { type: 'run_started', task: '0' },
    { type: 'run_failed', task: '0' },
  ],
  packs: [],
});

describe('a run as a test file', () => {
  it('reads back every value exactly as the run recorded it', () => {
    const file = parse(text);
    const split = splitJournal(journal);
    expect(file.answers).toEqual(split.answers);
    expect(file.answers).toEqual([HOSTILE[1]]);
    expect(file.recorded).toEqual(split.recorded);
    expect(file.recorded.map((entry: { output?: string }) => entry.output).slice(0, HOSTILE.length)).toEqual(HOSTILE);
    expect(file.recorded.at(-1)).toEqual({ tool: 'web/fetch', args: { url: 'x' }, section: 'S', fails: HOSTILE[0] });
    expect(file.model).toEqual([
      { content: HOSTILE[2], tool_calls: [{ id: 'c1', name: 'web_fetch', arguments: { url: HOSTILE[3] } }] },
      { fails: 'the provider answered 500' },
    ]);
    expect(file.args).toEqual({ who: HOSTILE[4] });
    expect(file.seed).toBe('0x10');
    expect(file.source).toContain('Prose with trailing spaces   \n\ttabbed\n');
    expect(file.expect).toEqual({ error: { kind: 'Model', message: HOSTILE[5] }, events: ['run_started', 'run_failed'] });
  });

  it('keeps each journal comment on its one line, whatever the arguments hold', () => {
    const comments = text.split('\n').filter((line) => line.startsWith('#'));
    expect(comments.filter((line) => /^# {3}\d+\. /.test(line))).toHaveLength(journal.length);
    expect(text.split('\n').find((line) => line.startsWith('Injected'))).toBeUndefined();
  });

  it('fits the test file format', async () => {
    const read = await readTestText(text, 'r1.test.yaml', async () => 'no files');
    expect(read.ok).toBe(true);
    if (read.ok)
      expect(read.value.recorded[0]).toEqual({
        tool: 'web/fetch',
        args: { url: HOSTILE[0] },
        task: '0',
        section: 'S',
        outcome: { ok: true, output: HOSTILE[0] },
      });
  });
});

describe("a form ask's answer in a run's test file", () => {
  const form = { type: 'object', properties: { email: { type: 'string' }, guests: { type: 'integer' } }, required: ['email'] };
  const asked: JournalEntry[] = [call(1, 'user-input/ask', { question: 'Who?', form }, { ok: true, value: '{"email":"ada@example.com","guests":2}' })];

  it('is written as the map it is, which the test file reads back as the answer', async () => {
    expect(splitJournal(asked).answers).toEqual([{ email: 'ada@example.com', guests: 2 }]);
    const file = runTestFile({
      run_id: 'r2',
      prompt: 'p',
      source: `---\nname: p\ndescription: d\nrunvil: 0\n---\n# P\n\n## S\n`,
      args: {},
      seed: '0x10',
      journal: asked,
      ending: { status: 'completed', result: 'ok' },
      events: [],
      packs: [],
    });
    expect(parse(file).answers).toEqual([{ email: 'ada@example.com', guests: 2 }]);
    const read = await readTestText(file, 'r2.test.yaml', async () => 'no files');
    expect(read.ok && read.value.answers).toEqual([{ email: 'ada@example.com', guests: 2 }]);
  });
});
