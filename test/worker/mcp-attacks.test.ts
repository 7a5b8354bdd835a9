/**
 * An attacker's table against `/mcp`: request states that are forged, swapped (another
 * run's, another ask's, another tool's, another principal's), expired or replayed are
 * refused with the protocol's error and change nothing; an answer outside the choices is
 * refused naming them; a key may not call a prompt it has no scope for; a browser on
 * another origin is refused before anything else.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createRequestStateCodec } from '@modelcontextprotocol/server';
import { API_TOKEN, call, getRun, json } from './app/client.ts';
import { GREET } from './app/prompts.ts';
import { TWO_ASKS } from './mcp/mcp-prompts.ts';
import { rawCallTool, rawRequest } from './mcp/mcp-raw.ts';

const INVALID_STATE = { code: -32602, message: 'Invalid or expired requestState' };
const answer = (key: string, text: string) => ({ [key]: { action: 'accept', content: { answer: text } } });

/** Starts two-asks over MCP: the run, the ask its input_required names, and the request state. */
async function asked(): Promise<{ runId: string; askId: string; key: string; state: string }> {
  const first = await rawCallTool('two-asks', {});
  expect(first.result).toMatchObject({ resultType: 'input_required' });
  const key = Object.keys(first.result.inputRequests)[0]!;
  const runId = first.result._meta['dev.runvil/run_id'] as string;
  return { runId, askId: key.slice('ask-'.length), key, state: first.result.requestState };
}

/** The codec the deployment mints with, re-made from the test's secret, for states with chosen contents. */
async function testCodec(bindTo = 'root') {
  const encoder = new TextEncoder();
  const hmac = await crypto.subtle.importKey('raw', encoder.encode(API_TOKEN), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const key = new Uint8Array(await crypto.subtle.sign('HMAC', hmac, encoder.encode('runvil mcp request state v1')));
  return createRequestStateCodec({ key, ttlSeconds: 3600, bind: () => bindTo });
}

beforeAll(async () => {
  await json(await call('PUT', '/prompts/two-asks', { body: TWO_ASKS }), 201);
  await json(await call('PUT', '/prompts/greet', { body: GREET }), 201);
});

describe('a request state', () => {
  it('is what input_required carries: a retry with it and the answer continues the same run', async () => {
    const { runId, key, state } = await asked();
    const second = await rawCallTool('two-asks', {}, { requestState: state, inputResponses: answer(key, 'Ada') });
    expect(second.result).toMatchObject({ resultType: 'input_required', _meta: { 'dev.runvil/run_id': runId } });
    const key2 = Object.keys(second.result.inputRequests)[0]!;
    const third = await rawCallTool('two-asks', {}, { requestState: second.result.requestState, inputResponses: answer(key2, 'today') });
    expect(third.result).toMatchObject({ content: [{ type: 'text', text: 'Ada ships today' }], _meta: { 'dev.runvil/run_id': runId } });
  });

  it.each([
    ['a random string', async () => 'v1.bm90aGluZw.bm90aGluZw'],
    ['empty', async () => ''],
    [
      'signed with another key',
      async () => createRequestStateCodec({ key: 'x'.repeat(32), bind: () => 'root' }).mint({ run: 'r', ask: 'a', tool: 'two-asks', expires: null }, {} as any),
    ],
    [
      'its body changed under the same signature',
      async (state: string) => {
        const [prefix, body, mac] = state.split('.');
        const payload = JSON.parse(atob(body!.replace(/-/g, '+').replace(/_/g, '/')));
        payload.p.ask = '0-99';
        return `${prefix}.${btoa(JSON.stringify(payload)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}.${mac}`;
      },
    ],
  ])('that is forged (%s) is refused with the protocol error and answers nothing', async (_, forge) => {
    const { runId, key, state } = await asked();
    const before = await getRun(runId);
    const refused = await rawCallTool('two-asks', {}, { requestState: await forge(state), inputResponses: answer(key, 'Mallory') });
    expect(refused.error).toMatchObject(INVALID_STATE);
    expect(await getRun(runId)).toEqual(before);
  });

  it("that is another run's, or names another run's ask, answers neither", async () => {
    const a = await asked();
    const b = await asked();
    const codec = await testCodec();
    // B's state with A's ask key: the retry's answer is for no ask B asked, so B is asked again.
    const crossed = await rawCallTool('two-asks', {}, { requestState: b.state, inputResponses: answer(a.key, 'Mallory') });
    expect(crossed.result).toMatchObject({ resultType: 'input_required', _meta: { 'dev.runvil/run_id': b.runId } });
    // A well-signed state naming run B and A's ask (as a tampering server bug would mint): B has no such pending ask.
    const swapped = await codec.mint({ run: b.runId, ask: `${a.askId}x`, tool: 'two-asks', expires: null }, {} as any);
    expect((await rawCallTool('two-asks', {}, { requestState: swapped, inputResponses: answer(`ask-${a.askId}x`, 'Mallory') })).error).toMatchObject(
      INVALID_STATE,
    );
    expect((await getRun(a.runId)).status).toBe('suspended');
    expect((await getRun(b.runId)).status).toBe('suspended');
  });

  it("that was minted for another tool's call continues nothing there", async () => {
    const { runId, key, state } = await asked();
    const refused = await rawCallTool('greet', {}, { requestState: state, inputResponses: answer(key, 'Mallory') });
    expect(refused.error).toMatchObject(INVALID_STATE);
    expect((await getRun(runId)).pending).toHaveLength(1);
  });

  it("that is another principal's is refused", async () => {
    const { runId, key } = await asked();
    const codec = await testCodec('key:someone-else');
    const theirs = await codec.mint({ run: runId, ask: key.slice(4), tool: 'two-asks', expires: null }, {} as any);
    expect((await rawCallTool('two-asks', {}, { requestState: theirs, inputResponses: answer(key, 'Mallory') })).error).toMatchObject(INVALID_STATE);
    expect((await getRun(runId)).status).toBe('suspended');
  });

  it('that has expired with its ask is refused', async () => {
    const { runId, askId, key } = await asked();
    const codec = await testCodec();
    const expired = await codec.mint({ run: runId, ask: askId, tool: 'two-asks', expires: new Date(Date.now() - 1000).toISOString() }, {} as any);
    expect((await rawCallTool('two-asks', {}, { requestState: expired, inputResponses: answer(key, 'Mallory') })).error).toMatchObject(INVALID_STATE);
    expect((await getRun(runId)).status).toBe('suspended');
  });

  it('that is replayed after its ask was answered (here, or first in the inbox) is refused and changes nothing', async () => {
    const { runId, askId, key, state } = await asked();
    const first = await rawCallTool('two-asks', {}, { requestState: state, inputResponses: answer(key, 'Ada') });
    expect(first.result).toMatchObject({ resultType: 'input_required' });
    const afterFirst = await getRun(runId);
    for (const text of ['Ada', 'Mallory']) {
      expect((await rawCallTool('two-asks', {}, { requestState: state, inputResponses: answer(key, text) })).error).toMatchObject(INVALID_STATE);
    }
    expect(await getRun(runId)).toEqual(afterFirst);

    const other = await asked();
    await json(await call('POST', `/runs/${other.runId}/asks/${other.askId}`, { body: { answer: 'Grace', answered_by: 'inbox' } }), 200);
    expect((await rawCallTool('two-asks', {}, { requestState: other.state, inputResponses: answer(other.key, 'Mallory') })).error).toMatchObject(INVALID_STATE);
    void askId;
  });
});

describe('an answer outside the choices', () => {
  it('is refused naming the choices, and the ask stays pending', async () => {
    const { key, state, runId } = await asked();
    const second = await rawCallTool('two-asks', {}, { requestState: state, inputResponses: answer(key, 'Ada') });
    const key2 = Object.keys(second.result.inputRequests)[0]!;
    for (const text of ['never', 'Today', '', 'today ']) {
      const refused = await rawCallTool('two-asks', {}, { requestState: second.result.requestState, inputResponses: answer(key2, text) });
      expect(refused.error).toMatchObject({ code: -32602, data: { choices: ['today', 'tomorrow'] } });
    }
    const notText = await rawCallTool(
      'two-asks',
      {},
      { requestState: second.result.requestState, inputResponses: { [key2]: { action: 'accept', content: { answer: 3 } } } },
    );
    expect(notText.error).toMatchObject({ code: -32602 });
    expect((await getRun(runId)).pending).toMatchObject([{ question: 'When does it ship?' }]);
  });
});

describe('a key', () => {
  it('lists only the prompts it may run, and calling another is an error naming the scope', async () => {
    const created = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'greeter', scopes: ['runs:start:greet'] } }), 201);
    const list = await rawRequest('tools/list', {}, { token: created.key });
    expect(list.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['greet']);
    expect((await rawCallTool('greet', { name: 'Key' }, {}, { token: created.key })).result).toMatchObject({ content: [{ text: 'hello Key x1' }] });
    const refused = await rawCallTool('two-asks', {}, {}, { token: created.key });
    expect(refused.error).toMatchObject({ code: -32003, message: expect.stringContaining('runs:start:two-asks'), data: { scope: 'runs:start:two-asks' } });
    const resources = await rawRequest('resources/list', {}, { token: created.key });
    expect(resources.error).toMatchObject({ code: -32003, data: { scope: 'runs:read' } });
  });

  it('without a credential, or a wrong one, gets 401', async () => {
    expect((await rawRequest('tools/list', {}, { token: 'rvk_not-a-key' })).status).toBe(401);
    const response = await call('POST', '/mcp', { token: null, body: {} });
    expect(response.status).toBe(401);
  });
});

describe('DNS rebinding', () => {
  it.each(['https://evil.example.com', 'http://runvil.test.evil.example.com', 'null', 'http://localhost.evil.example.com'])(
    'refuses a browser Origin from elsewhere (%s) with 403, before authentication',
    async (origin) => {
      const refused = await rawRequest('tools/list', {}, { headers: { origin } });
      expect(refused.status).toBe(403);
      const anonymous = await call('POST', '/mcp', { token: null, body: {}, headers: { origin } });
      expect(anonymous.status).toBe(403);
    },
  );

  it("refuses a Host that is not the deployment's", async () => {
    expect((await rawRequest('tools/list', {}, { headers: { host: 'evil.example.com' } })).status).toBe(403);
  });

  it("takes the deployment's own origin and loopback", async () => {
    for (const origin of ['https://runvil.test', 'http://localhost:8787', 'http://127.0.0.1:5173']) {
      expect((await rawRequest('tools/list', {}, { headers: { origin } })).status).toBe(200);
    }
  });
});
