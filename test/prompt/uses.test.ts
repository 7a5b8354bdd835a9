import { describe, expect, it } from 'vitest';
import { BASE_FRONTMATTER, frontmatterErrors, parseOk, promptText } from './helpers.ts';

const usesOf = (lines: readonly string[]) => parseOk(promptText([...BASE_FRONTMATTER, ...lines])).frontmatter.uses;
const messages = (lines: readonly string[]) => frontmatterErrors(lines).map((e) => e.message);
const EXPECTED = 'expected a Pack id, such as `web`, or vendor/name, such as `acme/web`';

describe('Declaring Packs under uses:', () => {
  it('accepts a YAML flow list and keeps the written order', () => {
    expect(usesOf(['uses: [web, user-input]']).map((u) => u.packId)).toEqual(['web', 'user-input']);
  });

  it('accepts a YAML block sequence the same way', () => {
    const uses = usesOf(['uses:', '  - web', '  - acme/poop']);
    expect(uses.map((u) => u.fqName)).toEqual(['runvil/web', 'acme/poop']);
  });

  it('reads a bare entry as the runvil Pack and vendor/name by its last segment', () => {
    expect(usesOf(['uses: [web, acme/poop]'])).toEqual([
      { text: 'web', vendor: 'runvil', packId: 'web', fqName: 'runvil/web', line: 5, column: 8 },
      { text: 'acme/poop', vendor: 'acme', packId: 'poop', fqName: 'acme/poop', line: 5, column: 13 },
    ]);
  });

  it('accepts a fully qualified name, so runvil/web is the same entry as web', () => {
    expect(usesOf(['uses: [runvil/web]'])[0]).toMatchObject({ packId: 'web', fqName: 'runvil/web', text: 'runvil/web' });
  });

  it('declares no Packs when uses: is left out', () => {
    expect(usesOf([])).toEqual([]);
  });
});

describe('Errors in the uses: key', () => {
  it('fails a three-segment entry with the exact message', () => {
    expect(messages(['uses: [acme/web/fetch]'])).toEqual([
      'invalid frontmatter: invalid uses entry `acme/web/fetch`: a uses entry is a Pack id, such as `web`, or vendor/name, such as `acme/web`',
    ]);
  });

  it('fails an uppercase letter or an @ version pin with the character-set reason', () => {
    const reason = "segments may contain only lowercase ASCII letters, digits, '-', '_', '.'";
    expect(messages(['uses: [Web]'])).toEqual([`invalid frontmatter: invalid uses entry \`Web\`: ${reason}`]);
    expect(messages(['uses: [web@1.2]'])).toEqual([`invalid frontmatter: invalid uses entry \`web@1.2\`: ${reason}`]);
  });

  it('fails a trailing or doubled / with the empty-segment reason', () => {
    expect(messages(['uses: [web/]'])).toEqual(['invalid frontmatter: invalid uses entry `web/`: segments must not be empty']);
    expect(messages(['uses: [acme//web]'])).toEqual(['invalid frontmatter: invalid uses entry `acme//web`: segments must not be empty']);
  });

  it('gives a malformed entry its own line and column', () => {
    const [flow] = frontmatterErrors(['uses: [web, Acme/web]']);
    expect(flow).toMatchObject({ kind: 'Frontmatter', line: 5, column: 13 });
    const [block] = frontmatterErrors(['uses:', '  - web', '  - acme/web/fetch']);
    expect(block).toMatchObject({ kind: 'Frontmatter', line: 7, column: 5 });
  });

  it('fails an entry that is not a string, such as a number or a map of settings', () => {
    const [number] = frontmatterErrors(['uses: [web, 3]']);
    expect(number?.message).toContain(EXPECTED);
    expect(number).toMatchObject({ line: 5, column: 13 });
    const [map] = frontmatterErrors(['uses:', '  - web: { version: 2 }']);
    expect(map?.message).toBe(`invalid frontmatter: invalid uses entry at index 0: ${EXPECTED}`);
  });

  it('fails a uses: that is not a list', () => {
    expect(messages(['uses: web'])).toEqual(['invalid frontmatter: `uses` must be a list of Pack ids, such as [web, user-input], got "web"']);
  });

  it('fails a repeated Pack id with no line or column', () => {
    const errors = frontmatterErrors(['uses: [web, web]']);
    expect(errors).toEqual([{ kind: 'Frontmatter', message: 'invalid frontmatter: Pack id web is declared more than once under uses', file: 'test.md' }]);
  });

  it('names web for [web, acme/web] and [web, runvil/web], because vendors do not matter', () => {
    for (const list of ['[web, acme/web]', '[web, runvil/web]']) {
      expect(messages([`uses: ${list}`])).toEqual(['invalid frontmatter: Pack id web is declared more than once under uses']);
    }
  });

  it('names the Pack id whose second appearance comes first: [web, user-input, user-input, web] names user-input', () => {
    expect(messages(['uses: [web, user-input, user-input, web]'])).toEqual(['invalid frontmatter: Pack id user-input is declared more than once under uses']);
  });

  it('reports every malformed entry, not only the first', () => {
    expect(messages(['uses: [Web, web/, ok]'])).toHaveLength(2);
  });
});
