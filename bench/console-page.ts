/**
 * The console's runs list at scale (`npm run bench:console`): the real local server (`npm
 * start` on a free port with its own state directory) holding RUNS runs of a prompt that
 * ends at once (BENCH_RUNS, default 1,000), and Debian's chromium, driven by playwright-core,
 * opening `/console?prompt=…&per_page=RUNS`. Printed: how long the runs took to start (four
 * clients), and the page's own figures on a fresh load once the index holds them all: the
 * time to fetch and render the list (`data-render-ms`) and the time from navigation to a
 * ready page (`data-ready-ms`), the median of five loads.
 *
 * test/browser/console.test.ts checks the behaviour (a page of per_page runs, the older page,
 * back to the newest) with 30 runs; this measures what 1,000 cost, which nothing asserts.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { freePort, killLocalServer, startLocalServer, type LocalServer } from '../scripts/local-server.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? '1000') || 1000;
const LOADS = 5;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TOKEN = randomBytes(16).toString('hex');
const stateDir = `.wrangler/bench-console-${process.pid}`;

const TINY = `---
name: bench-tiny
description: Ends at once.
runvil: 0
---
# Tiny

## Only
\`\`\`lua
return 'ok'
\`\`\`
`;

let server: LocalServer | null = null;

async function api(method: string, path: string, body?: string, contentType = 'application/json'): Promise<Response> {
  return fetch(`${server!.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
    ...(body !== undefined ? { body } : {}),
  });
}

/** Starts RUNS runs with four clients; an Idempotency-Key makes a retry after a 503 (the local server restarting its isolate under load) safe. */
async function seed(): Promise<number> {
  const began = performance.now();
  const queue = Array.from({ length: RUNS }, (_, k) => k);
  const client = async () => {
    for (let k = queue.shift(); k !== undefined; k = queue.shift()) {
      for (let attempt = 1; ; attempt++) {
        const response = await fetch(`${server!.base}/prompts/bench-tiny/runs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': `tiny-${k}` },
          body: '{}',
        });
        if (response.ok) break;
        if (response.status !== 503 || attempt === 5) throw new Error(`starting run ${k}: ${response.status} ${await response.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, client));
  return performance.now() - began;
}

/** Waits until the index lists every run (the outbox writes index rows after a run's start answers). */
async function untilIndexed(): Promise<void> {
  for (;;) {
    let count = 0;
    let cursor = '';
    do {
      const page = (await (await api('GET', `/runs?prompt=bench-tiny&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json()) as {
        runs: unknown[];
        next_cursor: string | null;
      };
      count += page.runs.length;
      cursor = page.next_cursor ?? '';
    } while (cursor);
    if (count >= RUNS) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

try {
  server = await startLocalServer({ port: await freePort(), token: TOKEN, stateDir });
  const put = await api('PUT', '/prompts/bench-tiny', TINY, 'text/markdown');
  if (!put.ok) throw new Error(`PUT /prompts/bench-tiny: ${put.status} ${await put.text()}`);
  const seedMs = await seed();
  console.log(`console: started ${RUNS} runs in ${(seedMs / 1000).toFixed(1)} s (${((RUNS * 1000) / seedMs).toFixed(0)} runs/s, four clients)`);
  await untilIndexed();

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.addInitScript((token) => (globalThis as any).sessionStorage.setItem('runvil.apiToken', token), TOKEN);
    const render: number[] = [];
    const ready: number[] = [];
    for (let load = 0; load < LOADS; load++) {
      await page.goto(`${server.base}/console?prompt=bench-tiny&per_page=${RUNS}`);
      await page.waitForSelector('body[data-ready]');
      const rows = Number(await page.getAttribute('body', 'data-rows'));
      if (rows !== RUNS) throw new Error(`the page shows ${rows} runs, not ${RUNS}`);
      render.push(Number(await page.getAttribute('body', 'data-render-ms')));
      ready.push(Number(await page.getAttribute('body', 'data-ready-ms')));
    }
    console.log(
      `console: a page of ${RUNS} runs: fetched and rendered in ${median(render)} ms, ready ${median(ready)} ms after navigation (median of ${LOADS} loads; each: ${render.join(', ')} ms)`,
    );
  } finally {
    await browser.close();
  }
} finally {
  if (server) await killLocalServer(server);
  rmSync(stateDir, { recursive: true, force: true });
}
