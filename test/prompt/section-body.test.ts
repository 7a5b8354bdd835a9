import { describe, expect, it } from 'vitest';
import { parseOk, withBody } from './helpers.ts';

const FENCE = '```';
const lua = (source: string) => [FENCE + 'lua', source, FENCE];
const section = (body: readonly string[]) => {
  const [first] = parseOk(withBody(['# T', '## S', ...body])).sections;
  if (!first) throw new Error('no section');
  return { prologue: first.prologue.map((b) => b.source), prose: first.prose, epilogue: first.epilogue.map((b) => b.source) };
};

describe('prologue, prose and epilogue', () => {
  it('puts Lua blocks before the first prose in the prologue and later ones in the epilogue', () => {
    expect(section([...lua('a()'), '', ...lua('b()'), '', 'Hello {{ name }}.', '', ...lua('c()')])).toEqual({
      prologue: ['a()', 'b()'],
      prose: 'Hello {{ name }}.',
      epilogue: ['c()'],
    });
  });

  it('makes a body of only prose a model step: no epilogue', () => {
    expect(section(['', 'Summarize the page.', ''])).toEqual({ prologue: [], prose: 'Summarize the page.', epilogue: [] });
  });

  it('makes a body of only Lua all prologue, with empty prose', () => {
    expect(section([...lua('a()'), ...lua('b()')])).toEqual({ prologue: ['a()', 'b()'], prose: '', epilogue: [] });
  });

  it('collects prose from both sides of an epilogue block, separated like paragraphs', () => {
    expect(section(['One.', ...lua('x()'), 'Two.'])).toEqual({ prologue: [], prose: 'One.\n\nTwo.', epilogue: ['x()'] });
  });

  it('keeps the prose’s inner text verbatim, trimmed at its ends', () => {
    expect(section(['', '  - item', '    - nested', '', '', 'Last  ', '']).prose).toBe('- item\n    - nested\n\n\nLast');
  });

  it('does not let blank lines or comments count as prose', () => {
    expect(section(['', '<!-- note -->', ...lua('a()')])).toEqual({ prologue: ['a()'], prose: '', epilogue: [] });
  });
});

describe('HTML comments', () => {
  it('are cut from prose, inline or over several lines, leaving no blank line behind', () => {
    expect(section(['Before <!-- hidden --> after.', '<!--', 'many', 'lines', '-->', 'Next <!-- open', 'still --> line.']).prose).toBe(
      'Before  after.\nNext  line.',
    );
  });

  it('hide the headings and fences inside them, so a section can be commented out', () => {
    const prompt = parseOk(withBody(['# T', '## A', 'a', '<!--', '## Old', FENCE + 'lua', 'old()', FENCE, '-->', '## B', 'b']));
    expect(prompt.sections.map((s) => [s.name, s.prose, s.prologue.length])).toEqual([
      ['A', 'a', 0],
      ['B', 'b', 0],
    ]);
  });

  it('stay verbatim inside fenced blocks and code spans', () => {
    expect(section([FENCE + 'html', '<!-- kept -->', FENCE, 'Write `<!--` to open a comment.']).prose).toBe(
      '```html\n<!-- kept -->\n```\nWrite `<!--` to open a comment.',
    );
  });

  it('are cut from the H1 body, whose prose is the system message', () => {
    const prompt = parseOk(withBody(['# T', 'You are terse. <!-- for readers only -->', '## S', 'x']));
    expect(prompt.h1.prose).toBe('You are terse.');
  });

  it('are cut from headings', () => {
    expect(parseOk(withBody(['# T <!-- draft -->', '## Ask <!-- first step -->'])).sections[0]?.name).toBe('Ask');
  });

  it('must be closed', () => {
    const result = parseOk.bind(null, withBody(['# T', '## S', '<!-- open', 'text']));
    expect(result).toThrow('this HTML comment is never closed; end it with -->');
  });
});
