/**
 * The console with a key (DESIGN.md Part 3, "Keys and scopes"), in a real browser against
 * the real local server the browser tests share (server.setup.ts): a key of scope runs:read reads runs, asks and prompts, and the
 * console says it is read-only and offers no answer buttons, no cancel, no start and no
 * upload; a key that may answer the asks of a prompt gets that prompt's answer buttons; the
 * root gets everything, and no read-only notice.
 */
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { apiCaller, launchBrowser } from './browser-support.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const { base, token: TOKEN } = inject('browserServer');

const ASKER = `---
name: key-asker
description: Asks one question with choices.
runvil: 0
uses: [user-input]
---
# Asker

## Ask
\`\`\`lua
return tools.call('user-input/ask', { question = 'Ship it?', choices = { 'yes', 'no' } })
\`\`\`
`;

let browser: Browser;
let context: BrowserContext;
let runId: string;
let reader: string;
let answerer: string;

const api = apiCaller(() => base, TOKEN);

/** A page of the console, with `token` in the tab's sessionStorage, once its view has loaded. */
async function open(path: string, token: string): Promise<Page> {
  const page = await context.newPage();
  await page.addInitScript((kept) => (globalThis as any).sessionStorage.setItem('runvil.apiToken', kept), token);
  await page.goto(`${base}${path}`);
  await page.waitForSelector('body[data-ready]');
  return page;
}

beforeAll(async () => {
  await api('PUT', '/prompts/key-asker', ASKER, 'text/markdown');
  runId = (await api('POST', '/prompts/key-asker/runs?wait=10', { args: {} })).run_id;
  reader = (await api('POST', '/keys', { name: 'dashboard', scopes: ['runs:read'] })).key;
  answerer = (await api('POST', '/keys', { name: 'bridge', scopes: ['runs:read', 'asks:answer:key-asker'] })).key;
  ({ browser, context } = await launchBrowser());
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

describe('the console with a key of scope runs:read', () => {
  it('shows a run and its pending ask, says it is read-only, and offers no answer and no cancel', async () => {
    const page = await open(`/console/runs/${runId}`, reader);
    expect(await page.textContent('#read-only')).toContain('This console is read-only with this key (dashboard), which has the scope runs:read alone');
    expect(await page.isVisible('#read-only')).toBe(true);
    expect(await page.textContent('#run-asks-list')).toContain('Ship it?');
    expect(await page.textContent('#run-asks-list')).toContain('This key may not answer asks of key-asker');
    expect(await page.locator('#run-asks-list form, #run-asks-list button').count()).toBe(0);
    expect(await page.isVisible('#cancel-run')).toBe(false);
    await page.close();
  });

  it('lists the ask in the inbox without an answer button', async () => {
    const page = await open('/console/inbox', reader);
    // The other browser tests' asks may be listed too: the server is shared; none has a button.
    await expect.poll(() => page.locator(`#inbox-list [data-ask][data-run="${runId}"]`).count(), { timeout: 20_000 }).toBe(1);
    expect(await page.locator('#inbox-list form, #inbox-list button').count()).toBe(0);
    expect(await page.isVisible('#read-only')).toBe(true);
    await page.close();
  });

  it('lists the prompts with no upload, and shows a prompt with no start form', async () => {
    const list = await open('/console/prompts', reader);
    expect(await list.textContent('#prompts-body')).toContain('key-asker');
    expect(await list.isVisible('#upload-section')).toBe(false);
    await list.close();
    const prompt = await open('/console/prompts/key-asker', reader);
    expect(await prompt.textContent('#prompt-source')).toContain('Ship it?');
    expect(await prompt.isVisible('#start-form')).toBe(false);
    await prompt.close();
  });
});

describe('the console with a key that may answer the asks of a prompt', () => {
  it('is not read-only, and answers the ask with its buttons', async () => {
    const page = await open(`/console/runs/${runId}`, answerer);
    expect(await page.isVisible('#read-only')).toBe(false);
    expect(await page.isVisible('#cancel-run')).toBe(false);
    await page.click('#run-asks-list button.choice:text-is("yes")');
    await expect.poll(() => page.getAttribute('body', 'data-status'), { timeout: 20_000 }).toBe('completed');
    await page.close();
    expect((await api('GET', `/runs/${runId}`)).result).toBe('yes');
  });
});

describe('the console with the root token', () => {
  it('offers the upload and the start form, and says nothing of read-only', async () => {
    const list = await open('/console/prompts', TOKEN);
    expect(await list.isVisible('#upload-section')).toBe(true);
    expect(await list.isVisible('#read-only')).toBe(false);
    await list.close();
    const prompt = await open('/console/prompts/key-asker', TOKEN);
    expect(await prompt.isVisible('#start-form')).toBe(true);
    await prompt.close();
  });
});
