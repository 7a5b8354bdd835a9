/**
 * Names from a request are data, never the host's: a webhook finds only a secret the
 * Worker's environment really holds (an inherited name is none), a prompt named like an
 * Object.prototype member is an ordinary prompt, and a body whose keys are spelled like those
 * members is refused as any undeclared arg is, leaving Object.prototype as it was.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, json, settled } from './app/client.ts';
import { GREET } from './app/prompts.ts';

/** RUNVIL_WEBHOOK_SECRET_GREET in vitest.workers.config.ts. */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const BASELINE = Object.getOwnPropertyNames(Object.prototype).sort();

function signed(id: string, body: string, secret = SECRET): Record<string, string> {
  const at = new Date();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
    'content-type': 'application/json',
  };
}

const deliver = (prompt: string, body: string, headers: Record<string, string>) => call('POST', `/hooks/${prompt}`, { body, headers, token: null });
const errorOf = async (response: Response) => ((await response.json()) as { error: { message: string; field?: string } }).error;

beforeAll(async () => {
  await call('PUT', '/prompts/greet', { body: GREET });
});

afterEach(() => {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(BASELINE);
  expect(({} as Record<string, unknown>).X).toBeUndefined();
});

describe('a webhook whose secret the environment only inherits', () => {
  it.each(['polluted', 'constructor', 'to_string', 'value-of'])('is refused with 403 for prompt %s, even with a secret on Object.prototype', async (prompt) => {
    const name = `RUNVIL_WEBHOOK_SECRET_${prompt.toUpperCase().replaceAll('-', '_')}`;
    const body = JSON.stringify({ name: 'Mallory' });
    Object.defineProperty(Object.prototype, name, { value: SECRET, configurable: true, enumerable: false, writable: true });
    let response: Response;
    try {
      response = await deliver(prompt, body, signed(`msg_inherited_${prompt}`, body));
    } finally {
      delete (Object.prototype as Record<string, unknown>)[name];
    }
    expect(response.status).toBe(403);
    expect((await errorOf(response)).message).toBe(`webhooks are not enabled for prompt ${JSON.stringify(prompt)}: set ${name} in the Worker's environment`);
  });
});

describe('a webhook body with keys spelled like host members', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'])(
    'is refused with 400 naming %s as an unknown arg',
    async (key) => {
      const body = `{"name": "Hook", ${JSON.stringify(key)}: {"X": "v"}}`;
      const response = await deliver('greet', body, signed(`msg_key_${key}`, body));
      expect(response.status).toBe(400);
      const error = await errorOf(response);
      expect(error.field).toBe(key);
      expect(error.message).toMatch(new RegExp(`^unknown arg \`${key.replace(/[$_]/g, '\\$&')}\``));
    },
  );

  it('starts a run whose Lua writes those keys into var, and /health still answers', async () => {
    const code = "var.a = {}\nvar.a.__proto__ = { X = 'v' }\nvar.constructor = { prototype = { X = 'v' } }\nreturn json.encode(var) .. tostring(var.X)";
    const source = `---\nname: greet-var\ndescription: Writes host names into var.\nrunvil: 0\n---\n# Var\n\n## Only\n\n\`\`\`lua\n${code}\n\`\`\`\n`;
    expect((await call('PUT', '/prompts/greet-var', { body: source })).status).toBeLessThan(300);
    const started = await json<{ run_id: string }>(await call('POST', '/prompts/greet-var/runs', { body: { args: {} } }), 202);
    expect(await settled(started.run_id)).toMatchObject({
      status: 'completed',
      result: '{"a":{"__proto__":{"X":"v"}},"constructor":{"prototype":{"X":"v"}}}nil',
    });
    const health = await call('GET', '/health', { token: null });
    expect(health.status).toBe(200);
  });
});
