/**
 * Webhook triggers at `POST /hooks/:name`, verified as Standard Webhooks says with the
 * prompt's own `RUNVIL_WEBHOOK_SECRET_<NAME>`: a delivery signed by the specification's
 * own library starts a run with its body as args; a redelivery (same webhook-id) starts no
 * second run; a wrong, expired or missing signature is refused and changes nothing.
 */
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, json, settled, testEnv } from './app/client.ts';
import { GREET } from './app/prompts.ts';

/** RUNVIL_WEBHOOK_SECRET_GREET in vitest.workers.config.ts. */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** A delivery signed by the standardwebhooks package. */
function signed(id: string, body: string, secret = SECRET, at = new Date()): Record<string, string> {
  const signature = new Webhook(secret).sign(id, at, body);
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature, 'content-type': 'application/json' };
}

const deliver = (body: string, headers: Record<string, string>, prompt = 'greet') => call('POST', `/hooks/${prompt}`, { body, headers, token: null });

async function kvKeys(): Promise<string[]> {
  return (await testEnv.RUNVIL_KV.list({})).keys.map((key) => key.name).sort();
}

beforeAll(async () => {
  await call('PUT', '/prompts/greet', { body: GREET });
});

describe('a webhook signed by the standardwebhooks package', () => {
  it('starts a run with the body as its args', async () => {
    const body = JSON.stringify({ name: 'Hook', times: 3 });
    const started = await json<{ run_id: string; status: string; duplicate: boolean }>(await deliver(body, signed('msg_first', body)), 202);
    expect(started.duplicate).toBe(false);
    expect(await settled(started.run_id)).toMatchObject({ status: 'completed', result: 'hello Hook x3' });
  });

  it('starts no second run when it is delivered again with the same webhook-id', async () => {
    const body = JSON.stringify({ name: 'Again' });
    const first = await json<{ run_id: string }>(await deliver(body, signed('msg_twice', body)), 202);
    await settled(first.run_id);
    const again = await json<{ run_id: string; duplicate: boolean }>(await deliver(body, signed('msg_twice', body)), 200);
    expect(again).toMatchObject({ run_id: first.run_id, duplicate: true, status: 'completed' });
  });

  it('answers 400 naming the field when the body does not fit the args', async () => {
    const body = JSON.stringify({ times: 'x' });
    const response = await deliver(body, signed('msg_bad_args', body));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { field: string } }).error.field).toBe('times');
  });
});

describe('a webhook that is not signed right', () => {
  const refusedWith = async (status: number, body: string, headers: Record<string, string>, message: string | RegExp, prompt = 'greet') => {
    const before = await kvKeys();
    const response = await deliver(body, headers, prompt);
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message);
    expect(await kvKeys()).toEqual(before);
  };
  const body = JSON.stringify({ name: 'Mallory' });

  it('is refused with 401 when signed with another secret', () =>
    refusedWith(401, body, signed('msg_wrong', body, 'whsec_' + btoa('another secret of 24 bytes')), 'no webhook-signature matches the delivery'));

  it('is refused with 401 when the body was changed after signing', () =>
    refusedWith(401, JSON.stringify({ name: 'Eve' }), signed('msg_changed', body), 'no webhook-signature matches the delivery'));

  it('is refused with 401 when its timestamp is more than 5 minutes old (or ahead)', async () => {
    await refusedWith(401, body, signed('msg_old', body, SECRET, new Date(Date.now() - 6 * 60_000)), /more than 5 minutes away from now/);
    await refusedWith(401, body, signed('msg_ahead', body, SECRET, new Date(Date.now() + 6 * 60_000)), /more than 5 minutes away from now/);
  });

  it('is refused with 401 without its headers', () => refusedWith(401, body, {}, /needs the webhook-id, webhook-timestamp and webhook-signature headers/));

  it('is refused with 401 when the webhook-id was changed (it is signed too)', () => {
    const headers = signed('msg_original', body);
    return refusedWith(401, body, { ...headers, 'webhook-id': 'msg_other' }, 'no webhook-signature matches the delivery');
  });

  it('is refused with 403 for a prompt with no webhook secret', () =>
    refusedWith(403, body, signed('msg_hello', body), 'webhooks are not enabled for prompt "hello": set RUNVIL_WEBHOOK_SECRET_HELLO in the Worker\'s environment', 'hello'));
});
