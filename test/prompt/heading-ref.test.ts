import { describe, expect, it } from 'vitest';
import { findSection, parseHeadingRef } from '../../src/prompt/index.ts';
import { parseOk, withBody } from './helpers.ts';

describe('heading references', () => {
  it('read ## Name as the section name, compared after trimming', () => {
    expect(parseHeadingRef('## Ask')).toEqual({ ok: true, name: 'Ask' });
    expect(parseHeadingRef('  ##   Ask me  ')).toEqual({ ok: true, name: 'Ask me' });
  });

  it('refuse anything that is not ## followed by a name', () => {
    for (const ref of ['Ask', '# Ask', '### Ask', '##Ask', '##', '##   ']) {
      expect(parseHeadingRef(ref), ref).toEqual({
        ok: false,
        message: `invalid heading reference ${JSON.stringify(ref)}: expected "## Name", such as "## Ask"`,
      });
    }
  });

  it('find a section case-sensitively and name an unknown heading', () => {
    const prompt = parseOk(withBody(['# T', '## Ask', 'a', '## Plain', 'b']));
    const found = findSection(prompt, ' ## Plain ');
    expect(found.ok && found.section.prose).toBe('b');
    expect(findSection(prompt, '## plain')).toEqual({ ok: false, message: 'unknown heading "## plain"' });
  });
});
