import { describe, expect, it } from 'vitest';
import { parsePrompt } from '../../src/prompt/index.ts';
import { parseErrors, parseOk, withBody } from './helpers.ts';

// withBody puts the body's first line on file line 6.
const FENCE = '```';
const bodyErrors = (body: readonly string[]) => parseErrors(withBody(body)).map((e) => ({ kind: e.kind, message: e.message, line: e.line }));

describe('the prompt in the spec’s first example', () => {
  it('parses Ask once into its title, one section and one Lua block', () => {
    const text = [
      '---',
      'name: ask-once',
      'description: Calls one Pack tool from Lua.',
      'runvil: 0',
      'uses: [user-input]',
      '---',
      '',
      '# Ask once',
      '',
      '## Call',
      '',
      FENCE + 'lua',
      "return tools.call('user-input/ask')",
      FENCE,
      '',
    ].join('\n');
    const prompt = parseOk(text);
    expect(prompt.title).toBe('Ask once');
    expect(prompt.h1).toEqual({ prologue: [], prose: '', epilogue: [] });
    expect(prompt.sections).toEqual([
      { name: 'Call', line: 10, prologue: [{ source: "return tools.call('user-input/ask')", line: 13 }], prose: '', epilogue: [] },
    ]);
    expect(prompt.file).toBe('test.md');
  });

  it('names the file <inline> when none is given', () => {
    const result = parsePrompt(withBody(['# T']));
    expect(result.ok && result.prompt.file).toBe('<inline>');
  });
});

describe('the # Title', () => {
  it('may follow blank lines and HTML comments', () => {
    const prompt = parseOk(withBody(['', '<!-- a note', 'for readers -->', '<!-- another -->', '# Title here  ']));
    expect(prompt.title).toBe('Title here');
  });

  it('drops a closing sequence of #s, as CommonMark does', () => {
    expect(parseOk(withBody(['# Title #', '## Ask ##'])).sections[0]?.name).toBe('Ask');
    expect(parseOk(withBody(['# C#'])).title).toBe('C#');
  });

  it('refuses any other text before it', () => {
    expect(bodyErrors(['intro', '# T'])).toEqual([
      { kind: 'Prompt', message: 'only blank lines and HTML comments may come before the `# Title` heading', line: 6 },
    ]);
    expect(bodyErrors([FENCE + 'lua', 'x = 1', FENCE, '# T'])[0]?.line).toBe(6);
  });

  it('is required', () => {
    expect(bodyErrors(['## Ask', 'hi'])).toEqual([{ kind: 'Prompt', message: 'the prompt has no `# Title` heading', line: undefined }]);
  });

  it('is not #Title without a space, which stays text', () => {
    expect(bodyErrors(['#Title']).map((e) => e.message)).toEqual(['the prompt has no `# Title` heading']);
  });

  it('appears once: a second # heading is an error naming the first', () => {
    expect(bodyErrors(['# One', '## Ask', '# Two'])).toEqual([
      {
        kind: 'Prompt',
        message: 'a second `# ` heading; a prompt has exactly one `# Title` heading (the first is on line 6)',
        line: 8,
      },
    ]);
  });

  it('comes before every section', () => {
    expect(bodyErrors(['## Ask', '# T'])).toEqual([
      { kind: 'Prompt', message: 'the `# Title` heading must come before every `##` section (the first is on line 6)', line: 7 },
    ]);
  });

  it('is not empty', () => {
    expect(bodyErrors(['#', '## A']).map((e) => e.message)).toEqual(["the `# Title` heading is empty; write the prompt's title after `# `"]);
  });
});

describe('## sections', () => {
  it('start at each ## heading, keep file order, and are named by the trimmed heading text', () => {
    const prompt = parseOk(withBody(['# T', '##   Ask  ', 'a', '##\tAnswer', 'b']));
    expect(prompt.sections.map((s) => [s.name, s.line, s.prose])).toEqual([
      ['Ask', 7, 'a'],
      ['Answer', 9, 'b'],
    ]);
  });

  it('refuses two sections with the same heading, naming both lines', () => {
    expect(bodyErrors(['# T', '## Ask', 'a', '## Ask', 'b', '## Ask'])).toEqual([
      { kind: 'Prompt', message: 'two sections are headed `## Ask` (lines 7 and 9); headings must be unique', line: 9 },
      { kind: 'Prompt', message: 'two sections are headed `## Ask` (lines 7 and 11); headings must be unique', line: 11 },
    ]);
  });

  it('compares headings case-sensitively', () => {
    expect(parseOk(withBody(['# T', '## Ask', '## ask'])).sections).toHaveLength(2);
  });

  it('refuses an empty heading', () => {
    expect(bodyErrors(['# T', '##   '])).toEqual([{ kind: 'Prompt', message: 'a `##` heading needs a section name, such as `## Ask`', line: 7 }]);
  });

  it('keeps ### and deeper headings in the prose', () => {
    expect(parseOk(withBody(['# T', '## Ask', '### Details', 'text'])).sections[0]?.prose).toBe('### Details\ntext');
  });
});

describe('fences', () => {
  it('hide # and ## lines inside any fenced block, whatever its info string or character', () => {
    const prompt = parseOk(withBody(['# T', '## Ask', FENCE + 'md', '# not a title', '## not a section', FENCE, '~~~', '## nor this', '~~~']));
    expect(prompt.sections).toHaveLength(1);
    expect(prompt.sections[0]?.prose).toBe('```md\n# not a title\n## not a section\n```\n~~~\n## nor this\n~~~');
  });

  it('hide ## lines inside a Lua block', () => {
    const prompt = parseOk(withBody(['# T', '## Ask', FENCE + 'lua', '-- ## not a section', '## still Lua', FENCE]));
    expect(prompt.sections[0]?.prologue[0]?.source).toBe('-- ## not a section\n## still Lua');
  });

  it('close only on the same character, at least as long, with nothing after it', () => {
    const prompt = parseOk(withBody(['# T', '## Ask', '````lua', 'a = "```"', '```', '~~~~', '`````  ', 'after']));
    expect(prompt.sections[0]?.prologue[0]?.source).toBe('a = "```"\n```\n~~~~');
    expect(prompt.sections[0]?.prose).toBe('after');
  });

  it('make a Lua block only of a fence whose info string is exactly lua', () => {
    const prompt = parseOk(withBody(['# T', '## Ask', FENCE + 'lua  ', 'a()', FENCE, FENCE + 'Lua', 'b()', FENCE, FENCE + 'luau', 'c()', FENCE]));
    const [section] = prompt.sections;
    expect(section?.prologue.map((b) => b.source)).toEqual(['a()']);
    expect(section?.prose).toBe('```Lua\nb()\n```\n```luau\nc()\n```');
  });

  it('remove the opening fence’s indentation from Lua lines', () => {
    const prompt = parseOk(withBody(['# T', '## Ask', '  ```lua', '  x = 1', '    y = 2', 'z = 3', '  ```']));
    expect(prompt.sections[0]?.prologue[0]?.source).toBe('x = 1\n  y = 2\nz = 3');
  });

  it('refuse an unclosed Lua block at its opening line', () => {
    expect(bodyErrors(['# T', '## Ask', FENCE + 'lua', 'x = 1', '## Later'])).toEqual([
      { kind: 'Prompt', message: 'this ```lua block is never closed; end it with a ``` line', line: 8 },
    ]);
  });

  it('refuse an unclosed fenced block of any kind, since it would swallow the sections after it', () => {
    expect(bodyErrors(['# T', '## Ask', '~~~', '## Later'])).toEqual([
      { kind: 'Prompt', message: 'this fenced code block is never closed; end it with a ~~~ line', line: 8 },
    ]);
  });
});

describe('Lua block line numbers', () => {
  it('give the file line of the block’s first source line', () => {
    const prompt = parseOk(withBody(['# T', FENCE + 'lua', 'h1()', FENCE, '## A', '', FENCE + 'lua', 'first()', 'second()', FENCE]));
    expect(prompt.h1.prologue).toEqual([{ source: 'h1()', line: 8 }]);
    expect(prompt.sections[0]?.prologue).toEqual([{ source: 'first()\nsecond()', line: 13 }]);
  });

  it('count an empty block from the line after its opening fence', () => {
    const prompt = parseOk(withBody(['# T', '## A', FENCE + 'lua', FENCE]));
    expect(prompt.sections[0]?.prologue).toEqual([{ source: '', line: 9 }]);
  });
});

describe('errors together', () => {
  it('are all reported, frontmatter errors first, then body errors in line order', () => {
    const text = ['---', 'name: x', 'description: d', 'runvil: 1', '---', 'stray', '# T', '## A', '## A', '# U'].join('\n');
    expect(parseErrors(text).map((e) => [e.kind, e.line])).toEqual([
      ['Frontmatter', 4],
      ['Prompt', 6],
      ['Prompt', 9],
      ['Prompt', 10],
    ]);
  });

  it('still reads the body of a file without frontmatter', () => {
    const errors = parseErrors('# T\n## A\n## A\n');
    expect(errors.map((e) => e.kind)).toEqual(['Frontmatter', 'Prompt']);
  });
});
