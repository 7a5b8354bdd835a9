/**
 * What every browser test does the same way: a headless Chromium (Debian's, or
 * CHROMIUM_PATH) with a context in UTC and en-GB, so that dates on the page read alike on
 * every machine; and calls to the local server's API with a bearer token.
 */
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launches Chromium (root needs --no-sandbox) and opens one context. */
export async function launchBrowser(): Promise<{ browser: Browser; context: BrowserContext }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return { browser, context: await browser.newContext({ timezoneId: 'UTC', locale: 'en-GB' }) };
}

/** A JSON (or raw text, for a prompt's Markdown) call to the API at `base()` with `token`; anything but 2xx throws with the status and body. */
export type ApiCall = (method: string, path: string, body?: unknown, contentType?: string) => Promise<any>;

/** The API caller of a server whose address is known once it starts (`base` is read on each call). */
export function apiCaller(base: () => string, token: string): ApiCall {
  return async (method, path, body, contentType = 'application/json') => {
    const response = await fetch(`${base()}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text === '' ? null : JSON.parse(text);
  };
}
