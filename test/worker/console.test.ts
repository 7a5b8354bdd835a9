/**
 * The console's pages as the Worker serves them: HTML with no inline script, a
 * Content-Security-Policy that forbids it, its own script and stylesheet, no token needed
 * for the frame (it carries no run data), and whatever the URL brings (a run id, a prompt
 * name, a filter) escaped where the page shows it. The browser tests (test/browser/) drive
 * the pages themselves.
 */
import { describe, expect, it } from 'vitest';
import { call } from './app/client.ts';

const PAGES = ['/console', '/console/inbox', '/console/prompts', `/console/runs/${'d'.repeat(64)}`, '/console/prompts/hello'];

describe('each console page', () => {
  for (const path of PAGES) {
    it(`${path} is HTML served without a token, under a policy that forbids inline script`, async () => {
      const response = await call('GET', path, { token: null });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("script-src 'self'");
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).not.toContain('unsafe-inline');
      expect(policy).not.toContain('unsafe-eval');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await response.text();
      // Every script element loads the console's own file; none carries code.
      const scripts = html.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? [];
      expect(scripts).toEqual(['<script src="/console/console.js" defer=""></script>']);
      expect(html).not.toMatch(/\son[a-z]+=/i);
    });
  }

  it('serves its script as JavaScript and its stylesheet as CSS', async () => {
    const script = await call('GET', '/console/console.js', { token: null });
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain('sessionStorage');
    const style = await call('GET', '/console/console.css', { token: null });
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('writes no data of a run into the page: the script reads it with the token', async () => {
    const html = await (await call('GET', `/console/runs/${'d'.repeat(64)}`, { token: null })).text();
    expect(html).not.toContain('"result"');
    expect(html).toContain(`data-run="${'d'.repeat(64)}"`);
  });
});

describe('what the URL brings into a page', () => {
  const HOSTILE = [
    '<script>alert(1)</script>',
    '"><img src=x onerror=alert(1)>',
    "'><svg onload=alert(1)>",
    '</title><script>alert(1)</script>',
    '&lt;script&gt;',
  ];
  for (const text of HOSTILE) {
    const encoded = encodeURIComponent(text);
    it(`is escaped as a run id: ${text}`, async () => {
      const html = await (await call('GET', `/console/runs/${encoded}`, { token: null })).text();
      expect(html).not.toContain(text);
      expect(html).not.toMatch(/<(img|svg)\b/);
      expect(html.match(/<script\b/g)).toHaveLength(1);
    });
    it(`is escaped as a prompt name: ${text}`, async () => {
      const html = await (await call('GET', `/console/prompts/${encoded}`, { token: null })).text();
      expect(html).not.toContain(text);
      expect(html.match(/<script\b/g)).toHaveLength(1);
    });
    it(`is escaped as a runs filter: ${text}`, async () => {
      const html = await (await call('GET', `/console?prompt=${encoded}&status=${encoded}`, { token: null })).text();
      expect(html).not.toContain(text);
      expect(html).not.toMatch(/<(img|svg)\b/);
      expect(html.match(/<script\b/g)).toHaveLength(1);
    });
  }

  it('selects only a status the filter knows', async () => {
    const html = await (await call('GET', '/console?status=failed', { token: null })).text();
    expect(html).toMatch(/<option value="failed" selected="">failed<\/option>/);
    const other = await (await call('GET', '/console?status=bogus', { token: null })).text();
    expect(other).not.toContain('selected=""');
  });
});
