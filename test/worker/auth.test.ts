/**
 * Auth: the API takes `Authorization: Bearer <RUNVIL_API_TOKEN>`; a request without it, or
 * with another token, is refused with 401 and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { call, json, testEnv } from './app/client.ts';
import { GREET } from './app/prompts.ts';

const routes: [string, string][] = [
  ['GET', '/prompts'],
  ['GET', '/prompts/hello'],
  ['PUT', '/prompts/auth-probe'],
  ['POST', '/prompts/hello/runs'],
  ['GET', `/runs/${'d'.repeat(64)}`],
  ['GET', `/runs/${'d'.repeat(64)}/events`],
  ['POST', `/runs/${'d'.repeat(64)}/cancel`],
  ['GET', `/runs/${'d'.repeat(64)}/files/a.txt`],
  ['POST', `/runs/${'d'.repeat(64)}/asks/0-1`],
];

describe('a request without the API token', () => {
  for (const [method, path] of routes) {
    it(`${method} ${path} is refused with 401`, async () => {
      const body = method === 'PUT' ? GREET.replace('name: greet', 'name: auth-probe') : method === 'POST' ? { answer: 'x' } : undefined;
      const response = await call(method, path, { token: null, ...(body !== undefined ? { body } : {}) });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: { message: 'missing credentials: send `Authorization: Bearer <token>`' } });
    });
  }
});

describe('a request with a wrong token', () => {
  it('is refused with 401, and stores nothing', async () => {
    const put = await call('PUT', '/prompts/auth-probe', { body: GREET.replace('name: greet', 'name: auth-probe'), token: 'wrong' });
    expect(put.status).toBe(401);
    expect(await put.json()).toEqual({ error: { message: 'wrong API token' } });
    expect(await testEnv.RUNVIL_KV.get('prompts/auth-probe')).toBeNull();
    const run = await call('POST', '/prompts/hello/runs', { body: {}, token: 'wrong' });
    expect(run.status).toBe(401);
    expect((await testEnv.RUNVIL_KV.list({ prefix: 'prompts/auth-probe' })).keys).toEqual([]);
  });

  it('is refused for a malformed Authorization header', async () => {
    const response = await call('GET', '/prompts', { token: null, headers: { authorization: 'Basic abc' } });
    expect(response.status).toBe(401);
  });
});

describe('the health route', () => {
  it('needs no token', async () => {
    expect(await json(await call('GET', '/health', { token: null }), 200)).toEqual({ ok: true });
  });
});
