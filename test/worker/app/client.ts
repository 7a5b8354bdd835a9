/**
 * Talking to the test Worker as a client would: requests through the app's fetch with the
 * test environment, and a driver that answers a run's asks until it ends.
 */
import { env } from 'cloudflare:workers';
import app from './test-worker.ts';
import type { Env } from '../../../src/worker/env.ts';
import type { PendingAsk, RunView as ApiRunView } from '../../../src/worker/run-object/run-view.ts';

/**
 * A run view whose pending entries are asks: the view of every test run but those that call
 * HTTP tool services (http-tools.test.ts, which reads `pending` by its `kind`).
 */
export type RunView = Omit<ApiRunView, 'pending'> & { pending: PendingAsk[] };

/** The test environment's API token (vitest.workers.config.ts). */
export const API_TOKEN = 'test-api-token';

/** The test Worker's environment. */
export const testEnv = env as unknown as Env;

/** A request to the app; `token` null sends no Authorization header. */
export async function call(
  method: string,
  path: string,
  options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers = new Headers(options.headers);
  const token = options.token === undefined ? API_TOKEN : options.token;
  if (token !== null) headers.set('authorization', `Bearer ${token}`);
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return app.fetch(new Request(`https://runvil.test${path}`, { method, headers, ...(body !== undefined ? { body } : {}) }), testEnv);
}

/** The JSON of a response, failing with its text when the status is not `status`. */
export async function json<T = any>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * A run's events without their `at`: two runs that did the same things (one evicted and
 * replayed, one not) have the same events, taken at different times.
 */
export const untimed = <E extends { at?: unknown }>(events: E[]): E[] => events.map(({ at: _at, ...event }) => event as E);

/** The run's view. */
export const getRun = async (runId: string): Promise<RunView> => json<RunView>(await call('GET', `/runs/${runId}`), 200);

/** The run's record in KV, once the run object has written it (just after the run ends). */
export async function kvRecord<T = any>(runId: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const text = await testEnv.RUNVIL_KV.get(`runs/${runId}/record`);
    if (text !== null) return JSON.parse(text);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${runId} has no record in KV`);
}

/** Polls the run until `done` holds (or 10 s pass). */
export async function until(runId: string, done: (view: RunView) => boolean): Promise<RunView> {
  for (let i = 0; i < 1000; i++) {
    const view = await getRun(runId);
    if (done(view)) return view;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${runId} never got there`);
}

/**
 * The run once it is no longer running, for a run whose object may have just been dropped:
 * a request that failed with the dropped object (500) is sent again.
 */
export async function untilServed(runId: string): Promise<RunView> {
  for (let i = 0; i < 1000; i++) {
    const response = await call('GET', `/runs/${runId}`);
    if (response.status === 200) {
      const view = (await response.json()) as RunView;
      if (view.status !== 'running') return view;
    } else if (response.status !== 500) throw new Error(`GET /runs/${runId}: ${response.status} ${await response.text()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${runId} never settled`);
}

/** The run once it waits on an ask or has ended. */
export const settled = (runId: string) => until(runId, (view) => view.status !== 'running');

/** Starts a run of `prompt` and answers its asks in order with their own tokens, to its end. */
export async function startAndDrive(prompt: string, body: object, answers: string[]): Promise<RunView> {
  const started = await json<{ run_id: string }>(await call('POST', `/prompts/${prompt}/runs`, { body }), 202);
  return drive(started.run_id, answers);
}

/** Answers a run's asks in order with their own tokens, to its end. */
export async function drive(runId: string, answers: string[]): Promise<RunView> {
  const queue = [...answers];
  for (;;) {
    const view = await settled(runId);
    if (view.status !== 'suspended') return view;
    const ask = view.pending.find((entry) => entry.kind === 'ask')!;
    await json(await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: queue.shift() }, token: ask.token }), 200);
  }
}
