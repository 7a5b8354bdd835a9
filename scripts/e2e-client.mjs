/**
 * What the end-to-end checks (scripts/e2e.mjs, e2e-callbacks.mjs) share: the API of the local
 * server as the check's client, and the steps and checks it prints and fails by.
 */

/** Prints one step of the check. */
export function step(text) {
  console.log(`e2e: ${text}`);
}

/** Waits `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fails the check with `what` unless `condition` holds. */
export function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

/** The server's API at `base`, called with the bearer `token` unless told otherwise. */
export function e2eClient(base, token) {
  async function api(method, path, { body, bearer = token, expect = 200 } = {}) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}` },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status !== expect) throw new Error(`${method} ${path}: expected ${expect}, got ${response.status}: ${text}`);
    return response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  }

  /** A run file's text, or '' while it does not exist (404). */
  async function fetchText(path) {
    const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const text = await response.text();
    if (response.status === 404) return '';
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}: ${text}`);
    return text;
  }

  async function untilSettled(runId) {
    for (let i = 0; i < 300; i++) {
      const view = await api('GET', `/runs/${runId}`);
      if (view.status !== 'running') return view;
      await sleep(100);
    }
    throw new Error(`run ${runId} did not settle`);
  }

  return { api, fetchText, untilSettled };
}
