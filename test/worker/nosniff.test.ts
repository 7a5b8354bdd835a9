/**
 * `X-Content-Type-Options: nosniff` on every response of the Worker: successes, refusals,
 * failures, the console and a run's files (text/plain whose text a prompt, a tool or a model
 * wrote, which a browser must not take for HTML or script).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/worker/app.ts';
import { call, json, testEnv, until } from './app/client.ts';
import { GREET } from './app/prompts.ts';

const RUN = 'e'.repeat(64);
const sniffless = (response: Response) => response.headers.get('x-content-type-options');

let runId = '';

beforeAll(async () => {
  // A file whose text looks like a page: served as text/plain, it must stay text.
  const page = GREET.replace("('hello %s'):format(args.name)", "'<html><script>alert(1)</script></html>'");
  expect([200, 201]).toContain((await call('PUT', '/prompts/sniffed', { body: page.replace('name: greet', 'name: sniffed') })).status);
  runId = (await json<{ run_id: string }>(await call('POST', '/prompts/sniffed/runs', { body: {} }), 202)).run_id;
  await until(runId, (view) => view.status === 'completed');
});

describe('every response of the Worker', () => {
  const answered: [string, string, string | null | undefined, number][] = [
    ['a health check', '/health', null, 200],
    ['the prompt list', '/prompts', undefined, 200],
    ['the run list', '/runs', undefined, 200],
    ['a request without a token', '/prompts', null, 401],
    ['a request with a wrong token', '/runs', 'not-the-token', 401],
    ['an unknown run', `/runs/${RUN}`, undefined, 404],
    ['an unknown route', '/no/such/route', null, 404],
    ['a path that does not decode', '/runs/%zz', null, 400],
    ['a bad list query', '/runs?limit=-3', undefined, 400],
    ['the console', '/console', null, 200],
    ['the console inbox', '/console/inbox', null, 200],
    ["the console's script", '/console/console.js', null, 200],
    ["the console's stylesheet", '/console/console.css', null, 200],
  ];
  for (const [what, path, token, status] of answered) {
    it(`carries nosniff on ${what} (${status})`, async () => {
      const response = await call('GET', path, { token });
      expect(response.status).toBe(status);
      expect(sniffless(response)).toBe('nosniff');
    });
  }

  it("carries nosniff on a run's file, served as text/plain", async () => {
    const response = await call('GET', `/runs/${runId}/files/greeting.txt`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toBe('<html><script>alert(1)</script></html>');
    expect(sniffless(response)).toBe('nosniff');
  });

  it("carries nosniff on a run's file list and on a file it does not have", async () => {
    const list = await call('GET', `/runs/${runId}/files/`);
    expect(list.status).toBe(200);
    expect(sniffless(list)).toBe('nosniff');
    const missing = await call('GET', `/runs/${runId}/files/no-such.html`);
    expect(missing.status).toBe(404);
    expect(sniffless(missing)).toBe('nosniff');
  });

  it('carries nosniff on a refused body and on a refused answer', async () => {
    const notJson = await call('POST', '/prompts/sniffed/runs', { body: '{not json' });
    expect(notJson.status).toBe(400);
    expect(sniffless(notJson)).toBe('nosniff');
    const stale = await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'late' } });
    expect(stale.status).toBeGreaterThanOrEqual(400);
    expect(sniffless(stale)).toBe('nosniff');
  });

  it('carries nosniff on an unexpected failure (500), thrown as an Error or as anything else', async () => {
    const app = createApp();
    app.get('/boom/error', () => {
      throw new TypeError('boom');
    });
    app.get('/boom/string', () => {
      throw 'boom';
    });
    for (const path of ['/boom/error', '/boom/string']) {
      const response = await app.fetch(new Request(`https://runvil.test${path}`), testEnv);
      expect(response.status).toBe(500);
      expect(sniffless(response)).toBe('nosniff');
    }
  });

  it('carries nosniff on a response whose headers cannot be changed', async () => {
    const app = createApp();
    app.get('/passed-through', () => Response.redirect('https://runvil.test/health', 302));
    const response = await app.fetch(new Request('https://runvil.test/passed-through'), testEnv);
    expect(response.status).toBe(302);
    expect(sniffless(response)).toBe('nosniff');
  });
});
