import { describe, expect, it } from 'vitest';
import {
  ALIAS_PATTERN,
  REASON_CHARSET,
  REASON_CONTROL,
  REASON_EMPTY,
  REASON_PACK_ID_SEGMENTS,
  REASON_TOOL_ID_SEGMENTS,
  REASON_USES_SEGMENTS,
  checkAlias,
  formatNameList,
  isValidWireName,
  parseName,
  parsePackId,
  parseToolId,
  parseUsesEntry,
  wireName,
} from '../../src/prompt/index.ts';

const reason = (result: { ok: boolean; reason?: string }) => (result.ok ? 'ok' : result.reason);

describe('One name form for Packs and tools', () => {
  it('accepts one segment or any number of slash-separated segments', () => {
    expect(parseName('web')).toEqual({ ok: true, segments: ['web'] });
    expect(parseName('web/fetch')).toEqual({ ok: true, segments: ['web', 'fetch'] });
    expect(parseName('a/b/c/d')).toEqual({ ok: true, segments: ['a', 'b', 'c', 'd'] });
  });

  it('has no rule about a segment’s first or last character: 1, -x, _, . and .. are valid', () => {
    for (const name of ['1', '-x', '_', '.', '..', 'user-input', 'a.b_c-d9']) {
      expect(parseName(name), name).toEqual({ ok: true, segments: [name] });
    }
  });

  it('keeps names exactly as written, with no trimming', () => {
    expect(reason(parseName(' web'))).toBe(REASON_CHARSET);
    expect(reason(parseName('web '))).toBe(REASON_CHARSET);
  });
});

describe('Name errors and their reasons', () => {
  it('gives the empty-segment reason for an empty name, a leading, trailing or doubled /', () => {
    for (const name of ['', '/web', 'web/', 'web//fetch', '/']) {
      expect(reason(parseName(name)), JSON.stringify(name)).toBe(REASON_EMPTY);
    }
  });

  it('gives the control-character reason for a tab, a newline, DEL and every byte below 0x20', () => {
    for (const name of ['we\tb', 'web\n', 'w\x7feb', '\x00', 'a\x1fb']) {
      expect(reason(parseName(name)), JSON.stringify(name)).toBe(REASON_CONTROL);
    }
  });

  it('gives the character-set reason for uppercase, @, a space, :, and non-ASCII such as é', () => {
    for (const name of ['Web', 'web@1.0', 'we b', 'web:fetch', 'café', 'web/Fetch', 'web/fétch']) {
      expect(reason(parseName(name)), name).toBe(REASON_CHARSET);
    }
  });

  it('reports only the first failure, segments left to right: Web/ gets the character-set reason', () => {
    expect(reason(parseName('Web/'))).toBe(REASON_CHARSET);
    expect(reason(parseName('/Web'))).toBe(REASON_EMPTY);
    expect(reason(parseName('web//Fetch'))).toBe(REASON_EMPTY);
  });

  it('checks characters left to right, so the first bad character decides between control and charset', () => {
    expect(reason(parseName('A\t'))).toBe(REASON_CHARSET);
    expect(reason(parseName('\tA'))).toBe(REASON_CONTROL);
    expect(reason(parseName('ok/x\x7fY'))).toBe(REASON_CONTROL);
  });

  it('checks every segment before the segment count, so web/ as a Pack id gets the empty-segment reason', () => {
    expect(reason(parsePackId('web/'))).toBe(REASON_EMPTY);
    expect(reason(parsePackId('Web/'))).toBe(REASON_CHARSET);
    expect(reason(parsePackId('web/fetch'))).toBe(REASON_PACK_ID_SEGMENTS);
    expect(reason(parseUsesEntry('acme/web/'))).toBe(REASON_EMPTY);
    expect(reason(parseUsesEntry('acme/web/fetch'))).toBe(REASON_USES_SEGMENTS);
  });

  it('quotes the reasons byte for byte', () => {
    expect(REASON_EMPTY).toBe('segments must not be empty');
    expect(REASON_CONTROL).toBe('segments must not contain a control character');
    expect(REASON_CHARSET).toBe("segments may contain only lowercase ASCII letters, digits, '-', '_', '.'");
    expect(REASON_PACK_ID_SEGMENTS).toBe("a Pack id is one segment, such as `web`, with no '/'");
    expect(REASON_USES_SEGMENTS).toBe('a uses entry is a Pack id, such as `web`, or vendor/name, such as `acme/web`');
  });
});

describe('Pack ids', () => {
  it('is exactly one segment', () => {
    expect(parsePackId('user-input')).toEqual({ ok: true, id: 'user-input' });
    expect(reason(parsePackId('runvil/web'))).toBe(REASON_PACK_ID_SEGMENTS);
  });
});

describe('Declaring Packs under uses:', () => {
  it('reads a bare entry as the runvil Pack of that id', () => {
    expect(parseUsesEntry('web')).toEqual({ ok: true, vendor: 'runvil', packId: 'web', fqName: 'runvil/web' });
  });

  it('reads vendor/name with the last segment as the Pack id', () => {
    expect(parseUsesEntry('acme/poop')).toEqual({ ok: true, vendor: 'acme', packId: 'poop', fqName: 'acme/poop' });
    expect(parseUsesEntry('runvil/web')).toEqual({ ok: true, vendor: 'runvil', packId: 'web', fqName: 'runvil/web' });
  });
});

describe('Tool ids', () => {
  it('names the Pack by the first segment and the tool by the last', () => {
    expect(parseToolId('web/fetch')).toEqual({ ok: true, id: 'web/fetch', segments: ['web', 'fetch'], packId: 'web', name: 'fetch' });
    const grouped = parseToolId('pack/group/tool.v2');
    expect(grouped.ok && [grouped.packId, grouped.name]).toEqual(['pack', 'tool.v2']);
  });

  it('has at least two segments, so a bare tool name is not a tool id', () => {
    expect(reason(parseToolId('fetch'))).toBe(REASON_TOOL_ID_SEGMENTS);
    expect(REASON_TOOL_ID_SEGMENTS).toBe('a tool id has two or more segments, such as `web/fetch`');
  });

  it('applies the segment rules first', () => {
    expect(reason(parseToolId('Fetch'))).toBe(REASON_CHARSET);
    expect(reason(parseToolId('web/'))).toBe(REASON_EMPTY);
    expect(reason(parseToolId('web/fetch@2'))).toBe(REASON_CHARSET);
  });
});

describe('Wire names', () => {
  it('turns every / and . of the tool id into _ and keeps -', () => {
    expect(wireName('web/fetch')).toBe('web_fetch');
    expect(wireName('user-input/ask')).toBe('user-input_ask');
    expect(wireName('pack/group/tool.v2')).toBe('pack_group_tool_v2');
  });

  it('accepts only non-empty [A-Za-z0-9_.-] names for the model', () => {
    expect(isValidWireName('web_fetch')).toBe(true);
    expect(isValidWireName('My-tool.v1')).toBe(true);
    expect(isValidWireName('')).toBe(false);
    expect(isValidWireName('web/fetch')).toBe(false);
    expect(isValidWireName('web fetch')).toBe(false);
  });
});

describe('Local tool aliases', () => {
  it('follows [A-Za-z][A-Za-z0-9_-]{0,63}', () => {
    expect(ALIAS_PATTERN.test('grab')).toBe(true);
    expect(ALIAS_PATTERN.test('G_1-x')).toBe(true);
    expect(ALIAS_PATTERN.test('a'.repeat(64))).toBe(true);
    expect(ALIAS_PATTERN.test('a'.repeat(65))).toBe(false);
    expect(ALIAS_PATTERN.test('1grab')).toBe(false);
    expect(ALIAS_PATTERN.test('web/fetch')).toBe(false);
    expect(ALIAS_PATTERN.test('grab\n')).toBe(false);
  });

  it('raises invalid alias "<alias>": expected [A-Za-z][A-Za-z0-9_-]{0,63}', () => {
    expect(checkAlias('grab')).toEqual({ ok: true });
    expect(checkAlias('web/fetch')).toEqual({
      ok: false,
      message: 'invalid alias "web/fetch": expected [A-Za-z][A-Za-z0-9_-]{0,63}',
    });
  });
});

describe('Lists in messages (spec notes, item 1)', () => {
  it('quotes each name and separates them with a comma and a space', () => {
    expect(formatNameList(['a', 'b'])).toBe('["a", "b"]');
    expect(formatNameList(['say "hi"'])).toBe('["say \\"hi\\""]');
    expect(formatNameList([])).toBe('[]');
  });
});
