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
    refusedWith(
      403,
      body,
      signed('msg_hello', body),
      'webhooks are not enabled for prompt "hello": set RUNVIL_WEBHOOK_SECRET_HELLO in the Worker\'s environment',
      'hello',
    ));
});

describe('a webhook-signature header read as Standard Webhooks says', () => {
  const body = JSON.stringify({ name: 'Sig' });
  const at = () => String(Math.floor(Date.now() / 1000));
  /** The headers of a delivery whose signature header is `transform` of the real one. */
  const forged = (id: string, transform: (real: string) => string) => {
    const headers = signed(id, body);
    return { ...headers, 'webhook-signature': transform(headers['webhook-signature']!) };
  };
  const status = async (headers: Record<string, string>) => (await deliver(body, headers)).status;

  it('accepts the real signature among other versions and entries that are no signatures', async () => {
    expect(await status(forged('msg_mixed', (real) => `v2,abc v1a,${real.slice(3)} ${real} v1,`))).toBe(202);
    expect(await status(forged('msg_spaces', (real) => `  ${real}  `))).toBe(202);
  });

  it('refuses an entry with text after the signature or a second comma: it is not cut to its second comma', async () => {
    for (const [i, transform] of [
      (real: string) => `${real},garbage`,
      (real: string) => `${real},`,
      (real: string) => `${real}x`,
      (real: string) => `${real}=`,
      (real: string) => `v1,,${real.slice(3)}`,
      (real: string) => `v1 ,${real.slice(3)}`,
      (real: string) => `V1,${real.slice(3)}`,
      (real: string) => `v1,${real.slice(3, -2)}`,
      (real: string) => `v1,${real.slice(3).replaceAll('+', '-').replaceAll('/', '_')}_`,
      (real: string) => `${real}\tv1,x`,
    ].entries()) {
      const response = await deliver(body, forged(`msg_trail_${i}`, transform));
      expect(response.status, `variant ${i}`).toBe(401);
    }
  });

  it('refuses more than 5 entries, even with the real one first, without checking them all', async () => {
    expect(
      await status(
        forged(
          'msg_five',
          (real) =>
            `${real} ${Array(4)
              .fill('v1,' + 'A'.repeat(43) + '=')
              .join(' ')}`,
        ),
      ),
    ).toBe(202);
    for (const count of [6, 1000]) {
      const response = await deliver(
        body,
        forged(
          `msg_many_${count}`,
          (real) =>
            `${real} ${Array(count - 1)
              .fill('v1,' + 'A'.repeat(43) + '=')
              .join(' ')}`,
        ),
      );
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
        `webhook-signature holds ${count} signatures; at most 5 are checked`,
      );
    }
  });

  it('refuses missing or empty headers, a timestamp that is no number, and a wrong secret', async () => {
    const good = signed('msg_headers', body);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const { [name]: _dropped, ...rest } = good;
      expect(await status(rest), name).toBe(401);
      expect(await status({ ...good, [name]: '' }), name).toBe(401);
    }
    for (const timestamp of ['-1', '1e9', `${at()}.5`, '0x10', '9'.repeat(16), 'now'])
      expect(await status({ ...good, 'webhook-timestamp': timestamp }), timestamp).toBe(401);
    for (const secret of ['whsec_' + btoa('x'.repeat(24)), 'whsec_' + btoa('y'.repeat(32))]) expect(await status(signed('msg_secret', body, secret))).toBe(401);
  });

  it('starts one run for a replayed delivery (the same id within the tolerance), and refuses it once stale', async () => {
    const headers = signed('msg_replay', body);
    const first = await json<{ run_id: string }>(await deliver(body, headers), 202);
    for (let i = 0; i < 3; i++) expect(await json(await deliver(body, headers), 200)).toMatchObject({ run_id: first.run_id, duplicate: true });
    expect(await status(signed('msg_replay', body, SECRET, new Date(Date.now() - 10 * 60_000)))).toBe(401);
  });

  it('refuses a webhook-id longer than 255 characters with 400, once the signature holds', async () => {
    const response = await deliver(body, signed('m'.repeat(256), body));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { field: string } }).error.field).toBe('webhook-id');
  });
});
