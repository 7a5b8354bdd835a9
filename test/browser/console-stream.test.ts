/**
 * The console's run page shows a model step's text as it arrives, in a real browser (Debian's
 * chromium, playwright-core) against the real local server the browser tests share
 * (server.setup.ts), whose model (the prompt's base_url) is an OpenAI-compatible server on
 * loopback that streams (scripts/stream-servers.mjs) and holds its reply half way until the
 * test has looked. The text is shown as text: markup in it never runs.
 */
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchBrowser } from './browser-support.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startStreamServer, type StreamServer } from '../../scripts/stream-servers.mjs';

const { base, token: TOKEN } = inject('browserServer');

const PIECES = ['Tides ', 'rise <img src=x onerror="window.__pwned = 1">', ' and ', 'fall.'];

/** The prompt, its model the stream server at `url` (the shared server's OPENAI_BASE_URL is another's). */
const prompt = (url: string) => `---
name: console-stream
description: One streamed model step.
runvil: 0
models:
  writer: { provider: openai, model: loopback, base_url: '${url}' }
---
# Console stream

## Write
\`\`\`lua
return models.get('writer'):infer('Write about tides')
\`\`\`
`;

let model: StreamServer;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  model = await startStreamServer('openai', { pieces: () => PIECES });
  const put = await fetch(`${base}/prompts/console-stream`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}` }, body: prompt(model.url) });
  if (!put.ok) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  ({ browser, context } = await launchBrowser());
}, 180_000);

afterAll(async () => {
  model?.release();
  await browser?.close();
  await model?.close();
});

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  await page.addInitScript((token) => (globalThis as any).sessionStorage.setItem('runvil.apiToken', token), TOKEN);
  await page.goto(`${base}${path}`);
  await page.waitForSelector('body[data-ready]');
  return page;
}

describe("the console's run page", () => {
  it("shows a model step's text as it arrives, then the reply", async () => {
    model.holdAfter = 2;
    const started = await fetch(`${base}/prompts/console-stream/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{}' });
    const { run_id: runId } = (await started.json()) as { run_id: string };
    await model.nextRequest(1);
    const page = await open(`/console/runs/${runId}`);
    const arriving = page.locator('.message.reply .streaming');
    await expect.poll(() => arriving.textContent(), { timeout: 30_000 }).toBe(PIECES.slice(0, 2).join(''));
    expect(await page.locator('#run-status').textContent()).toBe('running');
    model.holdAfter = null;
    model.release();
    await page.waitForSelector('#run-status[data-status="completed"]', { timeout: 30_000 });
    // The reply replaces the text as it came; the markup in it is text.
    await expect.poll(() => page.locator('.message.reply').last().textContent()).toContain(PIECES.join(''));
    expect(await page.locator('.message.reply .streaming').count()).toBe(0);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
  });
});
