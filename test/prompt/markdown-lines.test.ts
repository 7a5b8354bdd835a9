import { describe, expect, it } from 'vitest';
import { atxHeading, closesFence, fenceOpening, stripComments } from '../../src/prompt/markdown-lines.ts';

describe('fence lines', () => {
  it('open with 3 or more backticks or tildes after at most 3 spaces', () => {
    expect(fenceOpening('```lua')).toEqual({ char: '`', length: 3, indent: 0, info: 'lua' });
    expect(fenceOpening('   ~~~~ lua ')).toEqual({ char: '~', length: 4, indent: 3, info: 'lua' });
    expect(fenceOpening('    ```lua')).toBeUndefined();
    expect(fenceOpening('``lua')).toBeUndefined();
  });

  it('do not open when a backtick fence’s info string holds a backtick (that is inline code)', () => {
    expect(fenceOpening('``` a`b')).toBeUndefined();
    expect(fenceOpening('~~~ a`b')?.info).toBe('a`b');
  });

  it('close with the same character, at least as long, and nothing but spaces after', () => {
    const fence = { char: '`' as const, length: 4, indent: 0, info: '' };
    expect(closesFence('````', fence)).toBe(true);
    expect(closesFence('`````  ', fence)).toBe(true);
    expect(closesFence('```', fence)).toBe(false);
    expect(closesFence('~~~~', fence)).toBe(false);
    expect(closesFence('```` x', fence)).toBe(false);
  });
});

describe('ATX headings', () => {
  it('need a space or tab after the #s, or nothing', () => {
    expect(atxHeading('## Ask')).toEqual({ level: 2, text: 'Ask' });
    expect(atxHeading('##')).toEqual({ level: 2, text: '' });
    expect(atxHeading('##Ask')).toBeUndefined();
    expect(atxHeading('####### seven')).toBeUndefined();
  });
});

describe('comment stripping', () => {
  it('closes <!--> and <!---> at once, as CommonMark does', () => {
    expect(stripComments('a<!-->b', false)).toEqual({ text: 'ab', open: false, hadComment: true });
    expect(stripComments('a<!--->b', false)).toEqual({ text: 'ab', open: false, hadComment: true });
  });

  it('reports a comment left open at the end of the line', () => {
    expect(stripComments('keep <!-- and more', false)).toEqual({ text: 'keep ', open: true, hadComment: true });
    expect(stripComments('still inside', true)).toEqual({ text: '', open: true, hadComment: true });
  });

  it('leaves a code span alone, and treats an unmatched backtick run as text', () => {
    expect(stripComments('``<!--`` x', false).text).toBe('``<!--`` x');
    expect(stripComments('` <!-- c --> y', false).text).toBe('`  y');
  });
});
