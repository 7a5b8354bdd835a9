import { describe, expect, it } from 'vitest';
import { formatResults, MISSING_QUERY, SEARCH_PROVIDER_SERVICE, WEB_MANIFEST, webPack, type SearchProvider } from '../../packs/web/index.ts';
import type { Json } from '../../src/json/json.ts';
import { toolContext } from './helpers.ts';

/** A provider that answers from a list and remembers what it was asked. */
function fakeProvider(results: { title: string; url: string; description: string }[]) {
  const asked: { query: string; count: number; signal: AbortSignal | undefined }[] = [];
  const provider: SearchProvider = {
    async search(query, count, signal) {
      asked.push({ query, count, signal });
      return { ok: true, results: results.slice(0, count) };
    },
  };
  return { provider, asked };
}

const LUA_RESULTS = [
  { title: 'The Programming Language Lua', url: 'https://www.lua.org/', description: 'Lua is a powerful, efficient scripting language.' },
  { title: 'Lua 5.4 Reference Manual', url: 'https://www.lua.org/manual/5.4/', description: '' },
];

const search = (args: { [key: string]: Json }, provider: SearchProvider | undefined, signal?: AbortSignal) =>
  webPack().call('web/search', args, toolContext({ services: provider ? { [SEARCH_PROVIDER_SERVICE]: provider } : {}, ...(signal ? { signal } : {}) }));

describe('web/search', () => {
  it('formats the provider results as numbered text', async () => {
    const { provider } = fakeProvider(LUA_RESULTS);
    expect(await search({ query: 'lua' }, provider)).toEqual({
      ok: true,
      output: [
        '1. The Programming Language Lua',
        '   https://www.lua.org/',
        '   Lua is a powerful, efficient scripting language.',
        '',
        '2. Lua 5.4 Reference Manual',
        '   https://www.lua.org/manual/5.4/',
      ].join('\n'),
    });
  });

  it('asks the provider for five results unless the call names a count', async () => {
    const { provider, asked } = fakeProvider(LUA_RESULTS);
    await search({ query: 'lua' }, provider);
    await search({ query: 'lua', count: 1 }, provider);
    expect(asked.map((a) => [a.query, a.count])).toEqual([
      ['lua', 5],
      ['lua', 1],
    ]);
  });

  it('keeps the count between 1 and 20', async () => {
    const { provider, asked } = fakeProvider([]);
    await search({ query: 'lua', count: 500 }, provider);
    await search({ query: 'lua', count: 0 }, provider);
    expect(asked.map((a) => a.count)).toEqual([20, 1]);
  });

  it('refuses a count that is not a whole number', async () => {
    const { provider, asked } = fakeProvider([]);
    for (const count of [2.5, '3']) {
      expect(await search({ query: 'lua', count }, provider)).toEqual({
        ok: false,
        message: 'web_search: count must be a whole number from 1 to 20',
      });
    }
    expect(asked).toEqual([]);
  });

  it('fails with its own text when the query is missing, blank or not a string', async () => {
    const { provider, asked } = fakeProvider(LUA_RESULTS);
    expect(MISSING_QUERY).toBe('web_search: missing query argument');
    for (const args of [{}, { query: ' ' }, { query: 7 }] as { [key: string]: Json }[]) {
      expect(await search(args, provider)).toEqual({ ok: false, message: 'web_search: missing query argument' });
    }
    expect(asked).toEqual([]);
  });

  it('answers no results when the provider finds nothing', async () => {
    expect(await search({ query: 'zzzz' }, fakeProvider([]).provider)).toEqual({ ok: true, output: 'no results' });
  });

  it('answers the provider failure text as it is', async () => {
    const failing: SearchProvider = { search: async () => ({ ok: false, message: 'web_search: the search provider failed (HTTP 500)' }) };
    expect(await search({ query: 'lua' }, failing)).toEqual({ ok: false, message: 'web_search: the search provider failed (HTTP 500)' });
  });

  it('hides the cause when the provider throws', async () => {
    const throwing: SearchProvider = {
      search: async () => {
        throw new Error('ECONNRESET 10.0.0.7');
      },
    };
    expect(await search({ query: 'lua' }, throwing)).toEqual({ ok: false, message: 'web_search: the search failed' });
  });

  it('hands the call signal to the provider', async () => {
    const { provider, asked } = fakeProvider([]);
    const controller = new AbortController();
    await search({ query: 'lua' }, provider, controller.signal);
    expect(asked[0]?.signal).toBe(controller.signal);
  });

  it('fails with the unavailable reason when called on a Host with no provider', async () => {
    expect(await search({ query: 'lua' }, undefined)).toEqual({
      ok: false,
      message: 'web_search: web needs runvil/search-provider, and this host provides none',
    });
  });
});

describe('formatResults', () => {
  it('keeps every result on its own three lines even when a field holds line breaks', () => {
    expect(formatResults([{ title: 'A\ntitle', url: 'https://a.example/', description: 'one\n\ntwo  three' }])).toBe(
      '1. A title\n   https://a.example/\n   one two three',
    );
  });

  it('shows the url as the title when a result has none', () => {
    expect(formatResults([{ title: '', url: 'https://a.example/', description: '' }])).toBe('1. https://a.example/\n   https://a.example/');
  });
});

describe('runvil/web availability', () => {
  const services = (record: Record<string, unknown>) => ({ get: <T>(name: string) => record[name] as T | undefined });

  it('reports itself unavailable with the chapter text when the Host has no search provider', () => {
    expect(webPack().unavailableReason?.(services({}))).toBe('web needs runvil/search-provider, and this host provides none');
  });

  it('can serve when the Host provides runvil/search-provider', () => {
    expect(webPack().unavailableReason?.(services({ 'runvil/search-provider': fakeProvider([]).provider }))).toBeNull();
  });

  it('lists the search provider as a service it needs, so the Host names it at prepare', () => {
    expect(WEB_MANIFEST.services).toEqual(['runvil/search-provider']);
  });
});

describe('the runvil/web manifest', () => {
  it('names the Pack and its two untrusted plain tools', () => {
    expect(WEB_MANIFEST.fqName).toBe('runvil/web');
    expect(WEB_MANIFEST.description).toBe('Search the web and fetch pages');
    expect(WEB_MANIFEST.tools.map((tool) => [tool.id, tool.output, tool.trusted])).toEqual([
      ['web/fetch', 'plain', false],
      ['web/search', 'plain', false],
    ]);
  });

  it('describes web/search as a list of results with title, url and description', () => {
    expect(WEB_MANIFEST.tools[1]?.description).toBe('Search the web and return a list of results (title, url, description).');
  });

  it('requires a string url for web/fetch and a string query with an optional integer count for web/search', () => {
    expect(WEB_MANIFEST.tools[0]?.parameters).toMatchObject({
      type: 'object',
      properties: { url: { type: 'string' } },
      required: ['url'],
    });
    expect(WEB_MANIFEST.tools[1]?.parameters).toMatchObject({
      type: 'object',
      properties: { query: { type: 'string' }, count: { type: 'integer' } },
      required: ['query'],
    });
  });

  it('refuses a tool id it does not have', async () => {
    expect(await webPack().call('web/crawl', {}, toolContext())).toEqual({ ok: false, message: 'web/crawl: runvil/web has no such tool' });
  });
});
