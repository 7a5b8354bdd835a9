import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPageFetcher, DEFAULT_FETCH_MAX_BYTES, DEFAULT_FETCH_TIMEOUT_MS, MISSING_URL, webPack, type PageFetcher } from '../../packs/web/index.ts';
import type { Json } from '../../src/json/json.ts';
import { startServer, toolContext, type TestServer } from './helpers.ts';

const PAGE = `<!doctype html>
<html>
<head>
  <title>Lua: about</title>
  <style>body { color: red }</style>
  <script>document.write('<p>injected</p>')</script>
</head>
<body>
  <nav><a href="/">Home</a> | <a href="/download">Download</a></nav>
  <h1>About   Lua</h1>
  <p>Lua is a   powerful,
     efficient &amp; lightweight <b>scripting</b> language &mdash; caf&eacute; &lt;3</p>
  <h2>Where to go</h2>
  <ul>
    <li>the <a href="/manual/5.4/">reference manual</a></li>
    <li>the <a href="mailto:lua@example.org">mailing list</a></li>
  </ul>
  <script>var hidden = "secret";</script>
  <noscript>enable scripts</noscript>
</body>
</html>`;

const LATIN1_PAGE = Buffer.from('<p>caf\u00e9 cr\u00e8me</p>', 'latin1');
/** The page size limit the tests set; pages are fetched with a time limit a busy machine cannot reach. */
const LIMITS = { timeoutMs: 30_000, maxBytes: 1000 };
/** A time limit the tests of the time limit run into (their server answers after 5 s). */
const FAST = { ...LIMITS, timeoutMs: 300 };

let server: TestServer;
let slowTimers: NodeJS.Timeout[] = [];

beforeAll(async () => {
  server = await startServer((request, response) => {
    switch (request.path) {
      case '/about.html':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
        return;
      case '/notes.txt':
        response.writeHead(200, { 'content-type': 'text/plain' }).end('plain <b>text</b>\n  kept   as is\n');
        return;
      case '/data.json':
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"lua","versions":[5.3,5.4]}');
        return;
      case '/untyped':
        response.writeHead(200).end('<!DOCTYPE html><h1>Sniffed</h1><p>as html</p>');
        return;
      case '/latin1':
        response.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' }).end(LATIN1_PAGE);
        return;
      case '/logo.png':
        response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
        return;
      case '/moved':
        response.writeHead(302, { location: '/notes.txt' }).end();
        return;
      case '/gone':
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
        return;
      case '/huge': {
        response.writeHead(200, { 'content-type': 'text/plain' });
        // 64 KiB in 1 KiB chunks, far past the 1000-byte limit the test sets.
        const chunk = 'x'.repeat(1023) + '\n';
        for (let i = 0; i < 64; i++) response.write(chunk);
        response.end();
        return;
      }
      case '/exactly-limit':
        response.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(LIMITS.maxBytes));
        return;
      case '/slow':
        slowTimers.push(setTimeout(() => response.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 5_000));
        return;
      case '/slow-body':
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('first part ');
        slowTimers.push(setTimeout(() => response.end('rest'), 5_000));
        return;
      default:
        response.writeHead(500).end();
    }
  });
});

afterAll(async () => {
  for (const timer of slowTimers) clearTimeout(timer);
  slowTimers = [];
  await server.close();
});

const fetchTool = (args: { [key: string]: Json }, fetchPage: PageFetcher = createPageFetcher(LIMITS), signal?: AbortSignal) =>
  webPack({ fetchPage }).call('web/fetch', args, toolContext(signal ? { signal } : {}));

describe('web/fetch with the default page fetcher', () => {
  it('turns an HTML page into readable text with headings, paragraphs and list items as lines', async () => {
    const outcome = await fetchTool({ url: `${server.url}/about.html` });
    expect(outcome).toEqual({
      ok: true,
      output: [
        '# About Lua',
        '',
        'Lua is a powerful, efficient & lightweight scripting language — café <3',
        '',
        '## Where to go',
        '',
        `- the reference manual [${server.url}/manual/5.4/]`,
        '- the mailing list',
      ].join('\n'),
    });
  });

  it('leaves out the head, scripts, styles, navigation and noscript text', async () => {
    const outcome = await fetchTool({ url: `${server.url}/about.html` });
    if (!outcome.ok) throw new Error(outcome.message);
    for (const absent of ['Lua: about', 'color: red', 'injected', 'secret', 'Download', 'enable scripts']) {
      expect(outcome.output).not.toContain(absent);
    }
  });

  it('passes text/plain through unchanged', async () => {
    expect(await fetchTool({ url: `${server.url}/notes.txt` })).toEqual({
      ok: true,
      output: 'plain <b>text</b>\n  kept   as is\n',
    });
  });

  it('passes JSON through unchanged', async () => {
    expect(await fetchTool({ url: `${server.url}/data.json` })).toEqual({
      ok: true,
      output: '{"name":"lua","versions":[5.3,5.4]}',
    });
  });

  it('reads a page with no content type as HTML when it starts like HTML', async () => {
    expect(await fetchTool({ url: `${server.url}/untyped` })).toEqual({ ok: true, output: '# Sniffed\n\nas html' });
  });

  it('decodes the charset the content type names', async () => {
    expect(await fetchTool({ url: `${server.url}/latin1` })).toEqual({ ok: true, output: 'café crème' });
  });

  it('follows redirects', async () => {
    expect(await fetchTool({ url: `${server.url}/moved` })).toMatchObject({ ok: true, output: expect.stringContaining('plain <b>text</b>') });
  });

  it('fails a 404 with the could-not-fetch text and the status', async () => {
    const url = `${server.url}/gone`;
    expect(await fetchTool({ url })).toEqual({ ok: false, message: `web_fetch: could not fetch ${url} (HTTP 404)` });
  });

  it('refuses a content type that is not text', async () => {
    const url = `${server.url}/logo.png`;
    expect(await fetchTool({ url })).toEqual({ ok: false, message: `web_fetch: ${url} is image/png, which is not a text page` });
  });

  it('reads at most the size limit of a huge body and says the page was cut off', async () => {
    const outcome = await fetchTool({ url: `${server.url}/huge` });
    if (!outcome.ok) throw new Error(outcome.message);
    const [body, note] = outcome.output.split('\n\n');
    expect(body).toHaveLength(LIMITS.maxBytes);
    expect(note).toBe('[web_fetch: the page was cut off after 1000 bytes]');
  });

  it('does not call a body of exactly the size limit cut off', async () => {
    expect(await fetchTool({ url: `${server.url}/exactly-limit` })).toEqual({ ok: true, output: 'y'.repeat(LIMITS.maxBytes) });
  });

  it('gives up on a server that does not answer within the time limit', async () => {
    const url = `${server.url}/slow`;
    expect(await fetchTool({ url }, createPageFetcher(FAST))).toEqual({ ok: false, message: `web_fetch: could not fetch ${url} (no answer within 300 ms)` });
  });

  it('counts the time to read the body against the time limit too', async () => {
    const url = `${server.url}/slow-body`;
    expect(await fetchTool({ url }, createPageFetcher(FAST))).toEqual({ ok: false, message: `web_fetch: could not fetch ${url} (no answer within 300 ms)` });
  });

  it('stops when the call is cancelled', async () => {
    const url = `${server.url}/slow`;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const fetchPage = createPageFetcher({ timeoutMs: 10_000 });
    expect(await fetchTool({ url }, fetchPage, controller.signal)).toEqual({
      ok: false,
      message: `web_fetch: could not fetch ${url} (cancelled)`,
    });
  });

  it('fails an unreachable host with exactly the could-not-fetch text', async () => {
    const closed = await startServer(() => undefined);
    await closed.close();
    const url = `${closed.url}/anything`;
    expect(await fetchTool({ url })).toEqual({ ok: false, message: `web_fetch: could not fetch ${url}` });
  });

  it('refuses urls that are not http or https without a request', async () => {
    const before = server.requests.length;
    for (const url of ['file:///etc/passwd', 'ftp://example.org/file.txt', 'javascript:alert(1)']) {
      expect(await fetchTool({ url })).toEqual({ ok: false, message: `web_fetch: only http and https urls can be fetched, not ${url}` });
    }
    expect(server.requests.length).toBe(before);
  });

  it('refuses text that is not a url', async () => {
    expect(await fetchTool({ url: 'lua.org' })).toEqual({ ok: false, message: 'web_fetch: not a valid url: lua.org' });
  });

  it('has a 15 s time limit and a 2 MiB size limit by default', () => {
    expect(DEFAULT_FETCH_TIMEOUT_MS).toBe(15_000);
    expect(DEFAULT_FETCH_MAX_BYTES).toBe(2 * 1024 * 1024);
  });
});

describe('web/fetch arguments and page fetchers', () => {
  it('fails with the chapter text when the url is missing or not a string', async () => {
    expect(MISSING_URL).toBe('web_fetch: missing url argument');
    for (const args of [{}, { url: 42 }, { url: '  ' }] as { [key: string]: Json }[]) {
      expect(await fetchTool(args)).toEqual({ ok: false, message: 'web_fetch: missing url argument' });
    }
  });

  it('answers a supplied fetcher failure text exactly as the fetcher wrote it', async () => {
    const fixture: PageFetcher = async (url) =>
      url === 'https://www.lua.org/' ? { ok: true, text: 'Lua home' } : { ok: false, message: `web_fetch: could not fetch ${url}` };
    expect(await fetchTool({ url: 'https://www.lua.org/' }, fixture)).toEqual({ ok: true, output: 'Lua home' });
    expect(await fetchTool({ url: 'https://example.org/' }, fixture)).toEqual({
      ok: false,
      message: 'web_fetch: could not fetch https://example.org/',
    });
  });

  it('turns a fetcher that throws into the could-not-fetch text, hiding the cause', async () => {
    const broken: PageFetcher = async () => {
      throw new Error('socket reset');
    };
    expect(await fetchTool({ url: 'https://www.lua.org/' }, broken)).toEqual({
      ok: false,
      message: 'web_fetch: could not fetch https://www.lua.org/',
    });
  });

  it('hands the call signal to the fetcher', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const spy: PageFetcher = async (_url, signal) => {
      seen = signal;
      return { ok: true, text: '' };
    };
    await fetchTool({ url: 'https://www.lua.org/' }, spy, controller.signal);
    expect(seen).toBe(controller.signal);
  });
});
