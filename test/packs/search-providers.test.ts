import { afterEach, describe, expect, it } from 'vitest';
import { BRAVE_BASE_URL, braveSearchProvider, searchProviderFromEnv, TAVILY_BASE_URL, tavilySearchProvider } from '../../packs/web/index.ts';
import { startServer, type TestServer } from './helpers.ts';

// Shaped like a real Brave web search answer, trimmed to a few fields per result.
const BRAVE_ANSWER = {
  query: { original: 'lua tables', show_strict_warning: false, is_navigational: false },
  mixed: { type: 'mixed', main: [{ type: 'web', index: 0, all: false }] },
  type: 'search',
  web: {
    type: 'search',
    family_friendly: true,
    results: [
      {
        title: 'Programming in <strong>Lua</strong> : 2.5',
        url: 'https://www.lua.org/pil/2.5.html',
        is_source_local: false,
        description: 'The table type implements associative arrays &amp; more. A <strong>table</strong> is an array that can be indexed&#x2026;',
        page_age: '2023-01-10T00:00:00',
        profile: { name: 'Lua', url: 'https://www.lua.org/pil/2.5.html', long_name: 'lua.org' },
        language: 'en',
        family_friendly: true,
        type: 'search_result',
        subtype: 'generic',
        meta_url: { scheme: 'https', netloc: 'lua.org', hostname: 'www.lua.org', path: '› pil › 2.5.html' },
      },
      {
        title: 'lua-users wiki: Tables Tutorial',
        url: 'http://lua-users.org/wiki/TablesTutorial',
        description: 'Tables are the only &quot;container&quot; type in Lua.',
        type: 'search_result',
      },
    ],
  },
};

// Shaped like a real Tavily search answer.
const TAVILY_ANSWER = {
  query: 'lua tables',
  follow_up_questions: null,
  answer: null,
  images: [],
  results: [
    {
      url: 'https://www.lua.org/pil/2.5.html',
      title: 'Programming in Lua : 2.5',
      content: 'The table type implements associative arrays. A table is an array that can be indexed not only with numbers.',
      score: 0.91,
      raw_content: null,
    },
    {
      url: 'http://lua-users.org/wiki/TablesTutorial',
      title: 'lua-users wiki: Tables Tutorial',
      content: 'Tables are the only "container" type in Lua.',
      score: 0.83,
      raw_content: null,
    },
  ],
  response_time: 1.42,
};

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const json =
  (body: unknown, status = 200) =>
  (_: unknown, response: import('node:http').ServerResponse) =>
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

describe('the Brave Search provider', () => {
  it('sends a GET to /res/v1/web/search with q, count and the subscription token header', async () => {
    server = await startServer(json(BRAVE_ANSWER));
    const provider = braveSearchProvider({ apiKey: 'brave-key', baseUrl: `${server.url}/res/v1/` });
    await provider.search('lua tables', 2);
    const [request] = server.requests;
    expect(request?.method).toBe('GET');
    expect(request?.path).toBe('/res/v1/web/search?q=lua+tables&count=2');
    expect(request?.headers['x-subscription-token']).toBe('brave-key');
    expect(request?.headers.accept).toBe('application/json');
    expect(request?.body).toBe('');
  });

  it('reads web.results into plain titles and descriptions, highlighting and entities removed', async () => {
    server = await startServer(json(BRAVE_ANSWER));
    const provider = braveSearchProvider({ apiKey: 'k', baseUrl: `${server.url}/res/v1` });
    expect(await provider.search('lua tables', 5)).toEqual({
      ok: true,
      results: [
        {
          title: 'Programming in Lua : 2.5',
          url: 'https://www.lua.org/pil/2.5.html',
          description: 'The table type implements associative arrays & more. A table is an array that can be indexed…',
        },
        {
          title: 'lua-users wiki: Tables Tutorial',
          url: 'http://lua-users.org/wiki/TablesTutorial',
          description: 'Tables are the only "container" type in Lua.',
        },
      ],
    });
  });

  it('answers no results when the answer has no web section', async () => {
    server = await startServer(json({ type: 'search', query: { original: 'zzzz' } }));
    expect(await braveSearchProvider({ apiKey: 'k', baseUrl: server.url }).search('zzzz', 5)).toEqual({ ok: true, results: [] });
  });

  it('fails a refused key with a model-safe text that leaves the API body out', async () => {
    server = await startServer(json({ type: 'ErrorResponse', error: { detail: 'The provided subscription token is invalid: brave-key' } }, 401));
    expect(await braveSearchProvider({ apiKey: 'brave-key', baseUrl: server.url }).search('lua', 5)).toEqual({
      ok: false,
      message: 'web_search: the search provider refused its API key (HTTP 401)',
    });
  });

  it('fails a rate limit and a server error with their status', async () => {
    server = await startServer(json({}, 429));
    expect(await braveSearchProvider({ apiKey: 'k', baseUrl: server.url }).search('lua', 5)).toEqual({
      ok: false,
      message: 'web_search: the search provider is rate limiting this host (HTTP 429)',
    });
    await server.close();
    server = await startServer(json({}, 502));
    expect(await braveSearchProvider({ apiKey: 'k', baseUrl: server.url }).search('lua', 5)).toEqual({
      ok: false,
      message: 'web_search: the search provider failed (HTTP 502)',
    });
  });

  it('fails an answer that is not JSON', async () => {
    server = await startServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>'));
    expect(await braveSearchProvider({ apiKey: 'k', baseUrl: server.url }).search('lua', 5)).toEqual({
      ok: false,
      message: 'web_search: the search provider sent an answer that is not JSON',
    });
  });

  it('gives up when the API does not answer within its time limit', async () => {
    const timers: NodeJS.Timeout[] = [];
    server = await startServer((_, response) => {
      timers.push(setTimeout(() => response.end('{}'), 5_000));
    });
    const provider = braveSearchProvider({ apiKey: 'k', baseUrl: server.url, timeoutMs: 100 });
    expect(await provider.search('lua', 5)).toEqual({ ok: false, message: 'web_search: the search provider did not answer in time' });
    timers.forEach(clearTimeout);
  });

  it('fails an unreachable API without naming the cause', async () => {
    const closed = await startServer(() => undefined);
    await closed.close();
    expect(await braveSearchProvider({ apiKey: 'k', baseUrl: closed.url }).search('lua', 5)).toEqual({
      ok: false,
      message: 'web_search: could not reach the search provider',
    });
  });

  it('uses the given transport and the public API address by default', async () => {
    const seen: string[] = [];
    const transport = (async (input: RequestInfo | URL) => {
      seen.push(String(input));
      return new Response(JSON.stringify(BRAVE_ANSWER), { headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    const found = await braveSearchProvider({ apiKey: 'k', fetch: transport }).search('lua', 1);
    expect(seen).toEqual([`${BRAVE_BASE_URL}/web/search?q=lua&count=1`]);
    expect(BRAVE_BASE_URL).toBe('https://api.search.brave.com/res/v1');
    expect(found.ok && found.results.length).toBe(1);
  });
});

describe('the Tavily provider', () => {
  it('POSTs JSON to /search with the api_key in the body and as a bearer token', async () => {
    server = await startServer(json(TAVILY_ANSWER));
    await tavilySearchProvider({ apiKey: 'tvly-key', baseUrl: server.url }).search('lua tables', 3);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/search');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBe('Bearer tvly-key');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      api_key: 'tvly-key',
      query: 'lua tables',
      max_results: 3,
      search_depth: 'basic',
      include_answer: false,
      include_raw_content: false,
      include_images: false,
    });
  });

  it('reads results into title, url and the content as description', async () => {
    server = await startServer(json(TAVILY_ANSWER));
    expect(await tavilySearchProvider({ apiKey: 'k', baseUrl: server.url }).search('lua tables', 5)).toEqual({
      ok: true,
      results: [
        {
          title: 'Programming in Lua : 2.5',
          url: 'https://www.lua.org/pil/2.5.html',
          description: 'The table type implements associative arrays. A table is an array that can be indexed not only with numbers.',
        },
        {
          title: 'lua-users wiki: Tables Tutorial',
          url: 'http://lua-users.org/wiki/TablesTutorial',
          description: 'Tables are the only "container" type in Lua.',
        },
      ],
    });
  });

  it('keeps no more results than the count asked for', async () => {
    server = await startServer(json(TAVILY_ANSWER));
    const found = await tavilySearchProvider({ apiKey: 'k', baseUrl: server.url }).search('lua tables', 1);
    expect(found.ok && found.results.map((r) => r.url)).toEqual(['https://www.lua.org/pil/2.5.html']);
  });

  it('fails a refused key with a model-safe text', async () => {
    server = await startServer(json({ detail: { error: 'Unauthorized: missing or invalid API key.' } }, 401));
    expect(await tavilySearchProvider({ apiKey: 'k', baseUrl: server.url }).search('lua', 5)).toEqual({
      ok: false,
      message: 'web_search: the search provider refused its API key (HTTP 401)',
    });
  });

  it('talks to the public API address by default', () => {
    expect(TAVILY_BASE_URL).toBe('https://api.tavily.com');
  });
});

describe('searchProviderFromEnv', () => {
  const endpointOf = async (env: Record<string, string | undefined>) => {
    const provider = searchProviderFromEnv(env);
    if (!provider) return undefined;
    const seen: string[] = [];
    const original = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL) => {
      seen.push(String(input));
      return new Response('{}', { headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    try {
      await provider.search('lua', 1);
    } finally {
      globalThis.fetch = original;
    }
    return seen[0];
  };

  it('chooses Brave when BRAVE_SEARCH_API_KEY is set, even with a Tavily key too', async () => {
    expect(await endpointOf({ BRAVE_SEARCH_API_KEY: 'b', TAVILY_API_KEY: 't' })).toBe('https://api.search.brave.com/res/v1/web/search?q=lua&count=1');
  });

  it('chooses Tavily when only TAVILY_API_KEY is set', async () => {
    expect(await endpointOf({ TAVILY_API_KEY: 't' })).toBe('https://api.tavily.com/search');
  });

  it('chooses none when neither key is set or the keys are empty', () => {
    expect(searchProviderFromEnv({})).toBeUndefined();
    expect(searchProviderFromEnv({ BRAVE_SEARCH_API_KEY: '', TAVILY_API_KEY: ' ' })).toBeUndefined();
  });
});
