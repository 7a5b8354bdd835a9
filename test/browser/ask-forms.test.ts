/**
 * A form ask in the console (issue 28, DESIGN.md Part 3 "Asks with forms"), in a real browser
 * against the real local server the browser tests share (server.setup.ts): the inbox shows the form as an HTML form (an email input, a
 * number, a checkbox, a select of titled options, a checkbox per option of a multi-select,
 * each pre-filled with its default), an answer that does not fit is refused with the
 * server's message naming the field and the card stays, and a filled form posts the object
 * that completes the run with its JSON text.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { apiCaller, launchBrowser } from './browser-support.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = process.env.RUNVIL_SHOTS ? join(root, process.env.RUNVIL_SHOTS) : join(root, '.wrangler/browser-shots');
const { base, token: TOKEN } = inject('browserServer');

const SIGNUP = `---
name: form-signup
description: Asks for a form.
runvil: 0
uses: [user-input]
---
# Signup

## Ask
\`\`\`lua
return tools.call('user-input/ask', {
  question = 'Who is coming?',
  form = {
    type = 'object',
    properties = {
      email = { type = 'string', format = 'email', title = 'Email', description = 'Where the invitation goes' },
      guests = { type = 'integer', minimum = 0, maximum = 4, default = 1, title = 'Guests' },
      vegetarian = { type = 'boolean', title = 'Vegetarian' },
      plan = { type = 'string', title = 'Plan', oneOf = { { const = 'free', title = 'Free' }, { const = 'pro', title = 'Pro' } } },
      days = { type = 'array', title = 'Days', items = { type = 'string', enum = { 'mon', 'tue', 'wed' } }, default = { 'mon' } },
    },
    required = { 'email', 'guests' },
  },
})
\`\`\`
`;

let browser: Browser;
let context: BrowserContext;
/** Every dialog any page opened. */
const dialogs: string[] = [];

const api = apiCaller(() => base, TOKEN);

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.addInitScript((token) => (globalThis as any).sessionStorage.setItem('runvil.apiToken', token), TOKEN);
  await page.goto(`${base}${path}`);
  await page.waitForSelector('body[data-ready]');
  return page;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await api('PUT', '/prompts/form-signup', SIGNUP, 'text/markdown');
  ({ browser, context } = await launchBrowser());
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

describe('a form ask in the inbox', () => {
  it('is a real form: inputs by type, pre-filled with the defaults; a misfit is refused naming the field; the filled form completes the run', async () => {
    const runId = (await api('POST', '/prompts/form-signup/runs?wait=10', { args: {} })).run_id as string;
    const page = await open('/console/inbox');
    const card = page.locator(`#inbox-list .ask[data-run="${runId}"]`);
    await expect.poll(() => card.count(), { timeout: 20_000, interval: 500 }).toBe(1);
    const field = (name: string) => card.locator(`.form-field[data-field="${name}"]`);

    expect(await field('email').locator('input').getAttribute('type')).toBe('email');
    expect(await field('email').locator('label').textContent()).toBe('Email *');
    expect(await field('email').locator('.help').textContent()).toBe('Where the invitation goes');
    expect(await field('guests').locator('input').getAttribute('type')).toBe('number');
    expect(await field('guests').locator('input').inputValue()).toBe('1');
    expect(await field('vegetarian').locator('input[type=checkbox]').isChecked()).toBe(false);
    expect(await field('plan').locator('option').allTextContents()).toEqual(['(none)', 'Free', 'Pro']);
    expect(
      await field('days')
        .locator('input[type=checkbox]')
        .evaluateAll((boxes) => boxes.map((box) => (box as unknown as { checked: boolean }).checked)),
    ).toEqual([true, false, false]);
    await page.screenshot({ path: join(SHOTS, 'inbox-form.png'), fullPage: true });

    // Not an email: the server's refusal names the field, and the card stays to be corrected.
    await field('email').locator('input').fill('ada');
    await card.locator('button[type=submit]').click();
    await expect.poll(() => card.locator('.problem').textContent(), { timeout: 20_000 }).toContain('the field "email" must be an email address');
    expect((await api('GET', `/runs/${runId}`)).status).toBe('suspended');

    await field('email').locator('input').fill('ada@example.com');
    await field('guests').locator('input').fill('3');
    await field('vegetarian').locator('input[type=checkbox]').check();
    await field('plan').locator('select').selectOption('pro');
    await field('days').locator('input[value=wed]').check();
    await card.locator('button[type=submit]').click();
    await expect.poll(() => card.textContent(), { timeout: 20_000 }).toContain('Answered: {');
    await expect
      .poll(async () => (await api('GET', `/runs/${runId}`)).result, { timeout: 30_000, interval: 500 })
      .toBe('{"days":["mon","wed"],"email":"ada@example.com","guests":3,"plan":"pro","vegetarian":true}');
    expect(dialogs).toEqual([]);
    await page.close();
  });
});
