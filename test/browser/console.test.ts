/**
 * The console in a real browser: Debian's chromium, driven by playwright-core, against the
 * real local server the browser tests share (server.setup.ts), whose run reaches a model
 * server and a page on loopback (loopback.ts). A prompt asks twice and has
 * the model fetch a page; the operator answers through the console. The prompt's
 * description, the page, the model's reply and the operator's answer all carry markup that
 * would run if any of it were rendered as HTML. Each view's screenshot is written to
 * .wrangler/browser-shots/, or, with RUNVIL_SHOTS=docs/console, over the README's images
 * (so a test run leaves the tracked files as they are).
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { apiCaller, launchBrowser } from './browser-support.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MODEL_SUMMARY } from './loopback.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = process.env.RUNVIL_SHOTS ? join(root, process.env.RUNVIL_SHOTS) : join(root, '.wrangler/browser-shots');
const { base, token: TOKEN, loopbackBase } = inject('browserServer');

/** Markup that sets window.__pwned or opens a dialog if it ever runs. */
const SCRIPT_TAG = '<script>window.__pwned = "description"; alert(1)</script>';
const IMG_TAG = '<img src=x onerror="window.__pwned = \'img\'; alert(1)">';
const ANSWER_1 = 'Ada <img src=x onerror="window.__pwned = \'answer\'; alert(4)">';
const ANSWER_2 = 'next Tuesday';

const DEMO = `---
name: console-demo
description: '${`Triage a page ${SCRIPT_TAG} ${IMG_TAG}`.replace(/'/g, "''")}'
runvil: 0
uses: [user-input, web]
models:
  writer: {}
args:
  url: { type: string }
---
# Console demo

You are terse.

## Triage
\`\`\`lua
var.owner = tools.call('user-input/ask', { question = 'Who owns this page? <b>bold</b> <img src=x onerror="alert(5)">', choices = { [[${ANSWER_1}]], 'Grace' } })
models.use('writer')
tools.offer('web/fetch')
messages:user('Summarize ' .. args.url .. ' for ' .. var.owner)
models.loop()
var.summary = messages[#messages].content
var.date = tools.call('user-input/ask', { question = 'When does it ship?' })
store.write('triage.txt', 'owner=' .. var.owner .. '\\nsummary=' .. var.summary .. '\\ndate=' .. var.date .. '\\n')
return var.summary .. ' Owner: ' .. var.owner .. '. Ships: ' .. var.date .. '.'
\`\`\`
`;

/** A prompt that ends at once, for the paged runs list. */
const TINY = `---
name: console-tiny
description: Ends at once.
runvil: 0
---
# Tiny

## Only
\`\`\`lua
return 'ok'
\`\`\`
`;

let browser: Browser;
let context: BrowserContext;
/** Every dialog any page opened: a script that ran would open one. */
const dialogs: string[] = [];

const api = apiCaller(() => base, TOKEN);

/** A page of the console, the token already in this tab's (globalThis as any).sessionStorage. */
async function open(path: string, size = { width: 1280, height: 900 }): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize(size);
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.addInitScript((token) => (globalThis as any).sessionStorage.setItem('runvil.apiToken', token), TOKEN);
  await page.goto(`${base}${path}`);
  await page.waitForSelector('body[data-ready]');
  return page;
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Nothing planted in the run's texts ran in this page. */
async function expectNoScriptRan(page: Page): Promise<void> {
  expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(await page.locator('main img, main script, main svg, main b').count()).toBe(0);
  expect(dialogs).toEqual([]);
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await api('PUT', '/prompts/console-demo', DEMO, 'text/markdown');
  await api('PUT', '/prompts/console-tiny', TINY, 'text/markdown');
  ({ browser, context } = await launchBrowser());
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

describe('the token', () => {
  it('is asked for, a wrong one is refused with a message and asked for again, the right one opens the console', async () => {
    const page = await context.newPage();
    await page.goto(`${base}/console`);
    await expect.poll(() => page.isVisible('#token-gate')).toBe(true);
    expect(await page.isVisible('#main')).toBe(false);
    await shoot(page, 'token');
    await page.fill('#token-input', 'not-the-token');
    await page.click('#token-form button[type=submit]');
    await expect.poll(() => page.textContent('#token-problem')).toContain('refused');
    expect(await page.isVisible('#token-gate')).toBe(true);
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('runvil.apiToken'))).toBeNull();
    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.waitForSelector('body[data-ready]');
    expect(await page.isVisible('#token-gate')).toBe(false);
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('runvil.apiToken'))).toBe(TOKEN);
    await page.close();
  });

  it('is asked for again when the server refuses the one the tab kept', async () => {
    const page = await context.newPage();
    await page.addInitScript(() => (globalThis as any).sessionStorage.setItem('runvil.apiToken', 'stale-token'));
    await page.goto(`${base}/console/prompts`);
    await expect.poll(() => page.textContent('#token-problem')).toContain('wrong API token');
    expect(await page.isVisible('#main')).toBe(false);
    await page.close();
  });
});

describe('a run with two asks and a tool call, answered through the console', () => {
  let runId: string;
  let page: Page;

  beforeAll(async () => {
    runId = (await api('POST', '/prompts/console-demo/runs', { args: { url: `${loopbackBase}/page.txt` } })).run_id;
  });

  it('is listed among the runs, waiting on its first ask', async () => {
    const runs = await open('/console');
    const row = runs.locator(`tr[data-run="${runId}"]`);
    await expect.poll(() => row.count(), { timeout: 20_000, interval: 500 }).toBe(1);
    await expect.poll(() => row.locator('.status').textContent(), { timeout: 20_000 }).toBe('suspended');
    expect(await row.locator('td').nth(1).textContent()).toBe('console-demo');
    await shoot(runs, 'runs');
    expect(await row.locator('a.mono').getAttribute('href')).toBe(`/console/runs/${runId}`);
    await runs.close();
  });

  it('shows the pending ask, its question as text, and the status in the tab title', async () => {
    page = await open(`/console/runs/${runId}`);
    const ask = page.locator('#run-asks-list .ask');
    await expect.poll(() => ask.count()).toBe(1);
    expect(await ask.locator('.question').textContent()).toBe('Who owns this page? <b>bold</b> <img src=x onerror="alert(5)">');
    expect(await page.title()).toBe('suspended · console-demo · Runvil');
    await expectNoScriptRan(page);
  });

  it('resumes the run when the ask is answered on the page, and shows the second ask live, without a reload', async () => {
    await page.evaluate(() => ((globalThis as { __samePage?: boolean }).__samePage = true));
    // The first ask takes one of its choices, each a button.
    expect(await page.locator('#run-asks-list .ask button.choice').allTextContents()).toEqual([ANSWER_1, 'Grace']);
    await page.locator('#run-asks-list .ask button.choice').first().click();
    const question = page.locator('#run-asks-list .ask .question');
    await expect.poll(() => question.textContent(), { timeout: 30_000, interval: 250 }).toBe('When does it ship?');
    expect(await page.evaluate(() => (globalThis as { __samePage?: boolean }).__samePage)).toBe(true);
    // The model step and its tool call arrived on the stream meanwhile.
    await expect.poll(() => page.locator('#conversation .step').count()).toBe(2);
    await shoot(page, 'run-waiting');
    await expectNoScriptRan(page);
  });

  it('shows completed, the result, the timeline, the conversation and the tool call after the last answer', async () => {
    await page.fill('#run-asks-list .ask textarea', ANSWER_2);
    await page.click('#run-asks-list .ask button[type=submit]');
    await expect.poll(() => page.textContent('#run-status'), { timeout: 30_000, interval: 250 }).toBe('completed');
    expect(await page.evaluate(() => (globalThis as { __samePage?: boolean }).__samePage)).toBe(true);
    expect(await page.title()).toBe('completed · console-demo · Runvil');
    await expect.poll(() => page.textContent('#run-result')).toBe(`${MODEL_SUMMARY} Owner: ${ANSWER_1}. Ships: ${ANSWER_2}.`);
    expect(await page.locator('#run-asks').isVisible()).toBe(false);
    // The build the run started on (issue 31): its id, the Engine, and the digests cut short.
    expect(await page.textContent('#run-build')).toMatch(
      /^[0-9a-f]{12} \(engine \d+\.\d+\.\d+, lua sha256:[0-9a-f]{8}, config sha256:[0-9a-f]{8}, prompt sha256:[0-9a-f]{8}\)$/,
    );

    const types = await page.locator('#timeline li').evaluateAll((items) => items.map((item) => item.getAttribute('data-type')));
    for (const type of [
      'run_started',
      'ask_pending',
      'ask_answered',
      'model_turn_started',
      'assistant_tool_calls',
      'tool_result',
      'model_turn_completed',
      'run_completed',
    ]) {
      expect(types).toContain(type);
    }
    expect(types[types.length - 1]).toBe('run_completed');

    // The conversation as the model saw it: the system prose, the user's request, the call,
    // the page inside its untrusted envelope, then the reply.
    const first = page.locator('#conversation .step').nth(0);
    expect(await first.locator('.message[data-role=system] pre').textContent()).toBe('You are terse.');
    expect(await first.locator('.message[data-role=user] pre').textContent()).toBe(`Summarize ${loopbackBase}/page.txt for ${ANSWER_1}`);
    expect(await first.locator('.message.reply').textContent()).toContain('1 tool call(s)');
    const second = page.locator('#conversation .step').nth(1);
    await second.locator('details.fold > summary').first().click();
    const envelope = second.locator('.message[data-role=tool] .untrusted');
    expect(await envelope.locator('.label').textContent()).toMatch(/^untrusted input/);
    expect(await envelope.locator('pre').textContent()).toContain('Release notes &lt;script>window.__pwned');
    expect(await second.locator('.message.reply pre').textContent()).toBe(MODEL_SUMMARY);

    // Each tool call: the two asks the script made and the fetch the model made.
    const calls = page.locator('#tool-calls .call');
    expect(await calls.count()).toBe(3);
    const fetchCall = calls.nth(1);
    expect(await fetchCall.locator('header strong').textContent()).toBe('web_fetch');
    expect(await fetchCall.locator('pre').first().textContent()).toBe(JSON.stringify({ url: `${loopbackBase}/page.txt` }, null, 2));
    expect(await fetchCall.locator('.outcome').textContent()).toMatch(/^succeeded in [0-9.]+ (ms|s)$/);
    expect(await calls.nth(0).locator('header strong').textContent()).toMatch(/ask/);
    expect(await calls.nth(0).locator('.outcome').textContent()).toMatch(/^succeeded in /);

    // The run's file, read in place.
    await page.click('#files a');
    await expect.poll(() => page.textContent('#file-text')).toBe(`owner=${ANSWER_1}\nsummary=${MODEL_SUMMARY}\ndate=${ANSWER_2}\n`);
    await shoot(page, 'run');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, 'run-phone.png') });
    await expectNoScriptRan(page);
    await page.close();
  });
});

describe('the inbox', () => {
  it('lists every pending ask across runs, oldest first, and takes an answer in place', async () => {
    const a = await api('POST', '/prompts/console-demo/runs', { args: { url: `${loopbackBase}/page.txt` } });
    const b = await api('POST', '/prompts/console-demo/runs', { args: { url: `${loopbackBase}/page.txt` } });
    const page = await open('/console/inbox');
    const cards = page.locator('#inbox-list .ask');
    await expect
      .poll(
        async () => (await cards.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-run')))).filter((id) => id === a.run_id || id === b.run_id),
        { timeout: 20_000, interval: 500 },
      )
      .toEqual([a.run_id, b.run_id]);
    expect(await page.isVisible('#inbox-count')).toBe(true);
    await shoot(page, 'inbox');
    const card = page.locator(`#inbox-list .ask[data-run="${a.run_id}"]`);
    await card.locator('button.choice', { hasText: 'Grace' }).click();
    await expect
      .poll(() => page.locator(`#inbox-list .ask[data-run="${a.run_id}"] .question`).textContent(), { timeout: 30_000, interval: 500 })
      .toBe('When does it ship?');
    await expectNoScriptRan(page);
    await page.close();
  });
});

describe('the prompts', () => {
  it('lists the prompts with their descriptions as text', async () => {
    const page = await open('/console/prompts');
    const description = page.locator('tr[data-prompt="console-demo"] .description');
    expect(await description.textContent()).toBe(`Triage a page ${SCRIPT_TAG} ${IMG_TAG}`);
    await shoot(page, 'prompts');
    await expectNoScriptRan(page);
    await page.close();
  });

  it("shows a prompt's source, line by line", async () => {
    const page = await open('/console/prompts/console-demo');
    const lines = await page.locator('#prompt-source li').allTextContents();
    expect(lines).toEqual(DEMO.split('\n'));
    await shoot(page, 'prompt');
    await expectNoScriptRan(page);
    await page.close();
  });

  it("starts a run from a prompt's page with the args given, and opens the run", async () => {
    const page = await open('/console/prompts/hello');
    await page.fill('#start-args', '{"name": "Ada"}');
    await page.click('#start-form button[type=submit]');
    await page.waitForURL(/\/console\/runs\/[0-9a-f]+$/);
    await expect.poll(() => page.textContent('#run-status'), { timeout: 30_000, interval: 250 }).toBe('completed');
    expect(await page.textContent('#run-result')).toBe('Hello, Ada! Your name has 3 letters (visit 1).');
    await page.close();
  });

  it('says why a run does not start: args that are not JSON, args the prompt refuses', async () => {
    const page = await open('/console/prompts/hello');
    await page.fill('#start-args', '{name: Ada}');
    await page.click('#start-form button[type=submit]');
    await expect.poll(() => page.textContent('#start-outcome')).toMatch(/^The args are not JSON: /);
    await page.fill('#start-args', '{"nmae": "Ada"}');
    await page.click('#start-form button[type=submit]');
    await expect.poll(() => page.textContent('#start-outcome')).toContain('nmae');
    expect(page.url()).toMatch(/\/console\/prompts\/hello$/);
    await page.close();
  });

  it('shows an upload whose frontmatter does not parse with the error at its line', async () => {
    const page = await open('/console/prompts');
    await page.fill('#upload-name', 'console-broken');
    await page.fill('#upload-source', TINY.replace('name: console-tiny', 'name: console-broken').replace('runvil: 0', 'runvil: 0\nmodels: [oops'));
    await page.click('#upload-form button[type=submit]');
    await page.waitForSelector('#upload-lines li.bad');
    const bad = await page.locator('#upload-lines li.bad').getAttribute('data-line');
    expect(Number(bad)).toBeGreaterThan(1);
    expect(await page.textContent('#upload-outcome')).toContain('the prompt does not parse');
    expect(await page.locator('#upload-problems li').first().textContent()).toMatch(new RegExp(`^line ${bad}`));
    await shoot(page, 'upload-error');
    await page.close();
  });
});

describe('the runs list, paged', () => {
  // How long a page of 1,000 runs takes to fetch and render is a figure, not a behaviour:
  // bench/console-page.ts measures it (npm run bench:console).
  it('shows per_page runs, newest first, an older page with the rest, and a way back to the newest', async () => {
    const started: string[] = [];
    for (let k = 0; k < 30; k++) started.push((await api('POST', '/prompts/console-tiny/runs', {})).run_id);
    await expect.poll(async () => (await api('GET', '/runs?prompt=console-tiny&limit=100')).runs.length, { timeout: 60_000 }).toBe(30);
    const shown = (page: Page) => page.locator('#runs-body tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run')));

    const first = await open('/console?prompt=console-tiny&per_page=20');
    expect(await first.getAttribute('body', 'data-rows')).toBe('20');
    expect(await first.isVisible('#runs-older')).toBe(true);
    expect(await first.isVisible('#runs-newest')).toBe(false);
    const newest = await shown(first);
    await first.click('#runs-older');
    await first.waitForSelector('body[data-ready]');
    expect(await first.getAttribute('body', 'data-rows')).toBe('10');
    expect(await first.isVisible('#runs-older')).toBe(false);
    const older = await shown(first);
    // Every run once, newest first: the run ids are ordered by their start.
    expect([...newest, ...older].sort()).toEqual([...started].sort());
    expect(new Set([...newest, ...older]).size).toBe(30);
    await first.click('#runs-newest');
    await first.waitForSelector('body[data-ready]');
    expect(await shown(first)).toEqual(newest);
    await first.close();
  });
});
