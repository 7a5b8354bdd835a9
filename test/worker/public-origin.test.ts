/**
 * Callback and answer URLs come from configuration only (runvil.yaml's `public_url`, else
 * RUNVIL_ORIGIN, which `npm start` sets and the test Worker binds to https://runvil.test),
 * never from a request: a run started, a webhook delivered, a list or a view read, an ask
 * answered through a forged Host (absolute-form, X-Forwarded-Host, Forwarded, another port)
 * hands out no link and no callback token pointing at the sender's server. A deployment with
 * neither has no answer URLs, and its tool service calls fail saying to set public_url.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EMPTY_CONFIG, NOTIFICATION_TYPES, type DeploymentConfig } from '../../src/config/deployment-config.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import type { Env } from '../../src/worker/env.ts';
import { NO_PUBLIC_ORIGIN, publicOrigin } from '../../src/worker/deployment/public-origin.ts';
import type { PendingAsk } from '../../src/worker/run-object/run-view.ts';
import { API_TOKEN, json, settled, testEnv } from './app/client.ts';
import app from './app/test-worker.ts';
import { notifications } from './app/test-worker.ts';
import { receivedBy } from './app/tool-service.ts';

vi.setConfig({ testTimeout: 30_000 });

const lua = (code: string) => '```lua\n' + code + '\n```\n';
const prompt = (name: string, uses: string, code: string) =>
  `---\nname: ${name}\ndescription: A test prompt.\nrunvil: 0\nuses: [${uses}]\n---\n# ${name}\n\n## Go\n${lua(code)}`;

/** Asks once: the webhook secret RUNVIL_WEBHOOK_SECRET_GREET is this prompt's. */
const GREET_ASKS = prompt('greet', 'user-input', "return 'got ' .. tools.call('user-input/ask', { question = 'Anything?' })");
const ASKER = prompt('asker', 'user-input', "return 'got ' .. tools.call('user-input/ask', { question = 'Who?', choices = { 'ada', 'bob' } })");
/** Waits on acme/deploy's deploy/start, whose service answers 202 (test/worker/app/tool-service.ts). */
const DEPLOYER = prompt(
  'deployer',
  'acme/deploy',
  "local ok, out = pcall(tools.call, 'deploy/start', { service = 'api' })\nreturn tostring(ok) .. ': ' .. tostring(out)",
);

const ORIGIN = 'https://runvil.test';
const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOTIFY_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';

/** Ways a request names a host other than the deployment's: the URL's own (Host or absolute-form) and proxy headers. */
const FORGED: [string, string, Record<string, string>][] = [
  ['a Host from elsewhere', 'https://evil.example', {}],
  ['an absolute-form target on another port', 'http://127.0.0.1:9999', {}],
  ['an IPv6 literal', 'http://[::1]:8787', {}],
  ['a look-alike host', 'https://runvil.test.evil.example', {}],
  ['X-Forwarded-Host', ORIGIN, { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }],
  ['Forwarded', ORIGIN, { forwarded: 'host=evil.example;proto=https' }],
  ['both a Host and X-Forwarded-Host from elsewhere', 'https://evil.example', { 'x-forwarded-host': 'worse.example', 'x-original-host': 'worst.example' }],
];

/** A request to the app as it arrived at `base`, with `headers`. */
function forged(
  base: string,
  headers: Record<string, string>,
  method: string,
  path: string,
  options: { body?: unknown; token?: string | null } = {},
  env: Env = testEnv,
) {
  const all = new Headers(headers);
  const token = options.token === undefined ? API_TOKEN : options.token;
  if (token !== null) all.set('authorization', `Bearer ${token}`);
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return app.fetch(new Request(`${base}${path}`, { method, headers: all, ...(body !== undefined ? { body } : {}) }), env);
}

const answerUrlOf = (runId: string, askId: string, origin = ORIGIN) => `${origin}/runs/${runId}/asks/${askId}`;

/** Polls until `check` passes. */
async function eventually(check: () => void | Promise<void>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (error) {
      if (i > 1000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

beforeAll(async () => {
  for (const [name, source] of [
    ['greet', GREET_ASKS],
    ['asker', ASKER],
    ['deployer', DEPLOYER],
  ] as const)
    expect([200, 201]).toContain((await forged(ORIGIN, {}, 'PUT', `/prompts/${name}`, { body: source })).status);
});

afterEach(() => {
  notifications.targets = [];
  notifications.sent.length = 0;
  replaceDeploymentConfig(null);
});

describe('a run started through a forged host', () => {
  for (const [how, base, headers] of FORGED) {
    it(`gives answer URLs on the deployment's origin in every view and list, whatever ${how} says`, async () => {
      const started = await json<{ run_id: string; pending: PendingAsk[] }>(
        await forged(base, headers, 'POST', '/prompts/asker/runs?wait=10', { body: {} }),
        200,
      );
      const runId = started.run_id;
      expect(started.pending.map((ask) => ask.answer_url)).toEqual([answerUrlOf(runId, '0-1')]);
      const view = await json<{ pending: PendingAsk[] }>(await forged(base, headers, 'GET', `/runs/${runId}`), 200);
      expect(view.pending[0]!.answer_url).toBe(answerUrlOf(runId, '0-1'));
      await eventually(async () => {
        const listed = await json<{ asks: PendingAsk[] }>(await forged(base, headers, 'GET', '/asks?status=pending&prompt=asker&limit=100'), 200);
        expect(listed.asks.map((ask) => ask.run_id)).toContain(runId);
        for (const ask of listed.asks) expect(ask.answer_url).toBe(answerUrlOf(ask.run_id, ask.ask_id));
      });
      const answered = await json<{ ask: PendingAsk }>(
        await forged(base, headers, 'POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'ada' }, token: view.pending[0]!.token }),
        200,
      );
      expect(answered.ask.answer_url).toBe(answerUrlOf(runId, '0-1'));
      expect(await settled(runId)).toMatchObject({ status: 'completed', result: 'got ada' });
    });
  }

  for (const [how, base, headers] of FORGED) {
    it(`notifies ask.created with the answer URL on the deployment's origin, whatever ${how} says`, async () => {
      const url = 'https://chat.test/origin';
      notifications.targets = [{ url, secret: NOTIFY_SECRET, events: new Set(NOTIFICATION_TYPES), prompts: null }];
      const { run_id: runId } = await json<{ run_id: string }>(await forged(base, headers, 'POST', '/prompts/asker/runs', { body: {} }), 202);
      const created = await askCreatedFor(url, runId);
      expect(created.data.answer_url).toBe(answerUrlOf(runId, '0-1'));
      expect(created.text).not.toMatch(/evil|worse|worst|9999|\[::1\]/);
    });
  }

  for (const [how, base, headers] of FORGED) {
    it(`sends a tool service the callback URL on the deployment's origin, whatever ${how} says`, async () => {
      const { run_id: runId } = await json<{ run_id: string }>(await forged(base, headers, 'POST', '/prompts/deployer/runs', { body: {} }), 202);
      await eventually(() => expect(receivedBy(runId).length).toBeGreaterThan(0));
      const sent = receivedBy(runId)[0]!.body;
      expect(sent.callback_url).toBe(`${ORIGIN}/runs/${runId}/tool-results/${sent.call_id}`);
      await json(await forged(ORIGIN, {}, 'POST', `/runs/${runId}/cancel`), 200);
    });
  }
});

/**
 * The verified ask.created of run `runId` sent to `url`, once it has been sent. Runs of earlier
 * tests may still be notifying the same target, so the run's own is picked by its run id.
 */
async function askCreatedFor(url: string, runId: string): Promise<{ data: PendingAsk; text: string }> {
  const find = () =>
    notifications.sent
      .filter((sent) => sent.url === url)
      .map((sent) => ({ text: sent.body, ...(new Webhook(NOTIFY_SECRET).verify(sent.body, sent.headers) as { type: string; data: PendingAsk }) }))
      .find((sent) => sent.type === 'ask.created' && sent.data.run_id === runId);
  await eventually(() => expect(find()).toBeDefined());
  return find()!;
}

describe('a webhook delivered through a forged host', () => {
  for (const [how, base, headers] of FORGED) {
    it(`starts a run whose ask.created carries the deployment's answer URL, whatever ${how} says`, async () => {
      const url = 'https://chat.test/hook';
      notifications.targets = [{ url, secret: NOTIFY_SECRET, events: new Set(NOTIFICATION_TYPES), prompts: null }];
      const body = '{}';
      const id = `msg_${how.replace(/\W+/g, '_')}`;
      const at = new Date();
      const signed = {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(WEBHOOK_SECRET).sign(id, at, body),
        'content-type': 'application/json',
      };
      const started = await json<{ run_id: string }>(await forged(base, { ...headers, ...signed }, 'POST', '/hooks/greet', { body, token: null }), 202);
      const created = await askCreatedFor(url, started.run_id);
      expect(created.data.answer_url).toBe(answerUrlOf(started.run_id, '0-1'));
      await json(await forged(ORIGIN, {}, 'POST', `/runs/${started.run_id}/cancel`), 200);
    });
  }
});

describe('a deployment whose runvil.yaml sets public_url', () => {
  const configured: DeploymentConfig = { ...EMPTY_CONFIG, publicUrl: 'https://public.example/' };

  it('makes answer and callback URLs on it, over RUNVIL_ORIGIN and over any Host', async () => {
    replaceDeploymentConfig(configured);
    const [, base, headers] = FORGED[6]!;
    const started = await json<{ run_id: string; pending: PendingAsk[] }>(
      await forged(base, headers, 'POST', '/prompts/asker/runs?wait=10', { body: {} }),
      200,
    );
    expect(started.pending[0]!.answer_url).toBe(answerUrlOf(started.run_id, '0-1', 'https://public.example'));
    const { run_id: runId } = await json<{ run_id: string }>(await forged(base, headers, 'POST', '/prompts/deployer/runs', { body: {} }), 202);
    await eventually(() => expect(receivedBy(runId).length).toBeGreaterThan(0));
    const sent = receivedBy(runId)[0]!.body;
    expect(sent.callback_url).toBe(`https://public.example/runs/${runId}/tool-results/${sent.call_id}`);
    await json(await forged(ORIGIN, {}, 'POST', `/runs/${runId}/cancel`), 200);
    await json(await forged(ORIGIN, {}, 'POST', `/runs/${started.run_id}/cancel`), 200);
  });
});

describe('a deployment with neither public_url nor RUNVIL_ORIGIN', () => {
  const bare = { ...testEnv, RUNVIL_ORIGIN: undefined } as Env;

  it('lists its asks with no answer URL rather than one on the Host of the request', async () => {
    const started = await json<{ run_id: string; pending: PendingAsk[] }>(await forged(ORIGIN, {}, 'POST', '/prompts/asker/runs?wait=10', { body: {} }), 200);
    for (const [, base, headers] of FORGED) {
      const view = await json<{ pending: PendingAsk[] }>(await forged(base, headers, 'GET', `/runs/${started.run_id}`, {}, bare), 200);
      expect(view.pending.map((ask) => ask.answer_url)).toEqual([null]);
      const listed = await json<{ asks: PendingAsk[] }>(await forged(base, headers, 'GET', '/asks?status=pending&prompt=asker', {}, bare), 200);
      for (const ask of listed.asks) expect(ask.answer_url).toBeNull();
    }
    // The ask is still answered through the API, as the console answers it.
    const token = (await json<{ pending: PendingAsk[] }>(await forged(ORIGIN, {}, 'GET', `/runs/${started.run_id}`, {}, bare), 200)).pending[0]!.token;
    await json(await forged('https://evil.example', {}, 'POST', `/runs/${started.run_id}/asks/0-1`, { body: { answer: 'bob' }, token }, bare), 200);
    expect(await settled(started.run_id)).toMatchObject({ status: 'completed', result: 'got bob' });
  });

  it('has no public origin, and says to set public_url', () => {
    expect(publicOrigin({ ...bare }, EMPTY_CONFIG)).toEqual({ ok: false, message: NO_PUBLIC_ORIGIN });
    expect(NO_PUBLIC_ORIGIN).toContain('set public_url in runvil.yaml');
  });
});

describe('the public origin', () => {
  const env = (vars: Record<string, string | undefined>) => ({ ...testEnv, RUNVIL_ORIGIN: undefined, ...vars }) as Env;

  it('is public_url, read from ${NAME} when it names one, checked as an origin once read', () => {
    const config = { ...EMPTY_CONFIG, publicUrl: '${PUBLIC_URL}' };
    expect(publicOrigin(env({ PUBLIC_URL: 'https://runvil.example.com/' }), config)).toEqual({ ok: true, origin: 'https://runvil.example.com' });
    for (const smuggled of [
      'https://evil.example/steal?x=',
      'javascript:alert(1)',
      'https://u:p@runvil.example.com',
      'ftp://runvil.example.com',
      '//evil.example',
    ]) {
      const outcome = publicOrigin(env({ PUBLIC_URL: smuggled, RUNVIL_ORIGIN: ORIGIN }), config);
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && outcome.message).toMatch(/^runvil\.yaml's `public_url`, once \$\{PUBLIC_URL\} is read, /);
    }
    expect(publicOrigin(env({}), config)).toEqual({ ok: false, message: 'runvil.yaml needs the environment variable PUBLIC_URL, which is not set' });
  });

  it('is RUNVIL_ORIGIN without public_url, when it is an origin', () => {
    expect(publicOrigin(env({ RUNVIL_ORIGIN: 'http://127.0.0.1:8787' }), EMPTY_CONFIG)).toEqual({ ok: true, origin: 'http://127.0.0.1:8787' });
    for (const bad of ['http://127.0.0.1:8787/base', 'javascript:x', 'https://u:p@runvil.test', 'runvil.test']) {
      const outcome = publicOrigin(env({ RUNVIL_ORIGIN: bad }), EMPTY_CONFIG);
      expect(!outcome.ok && outcome.message).toMatch(/^RUNVIL_ORIGIN /);
    }
  });
});

afterAll(() => replaceDeploymentConfig(null));
