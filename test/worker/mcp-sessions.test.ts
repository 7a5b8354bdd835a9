/**
 * A 2025-11-25 session lives in a Durable Object of its own and belongs to the principal
 * that opened it; a 2026-07-28 call needs no session, so its request state continues the
 * run even after every object's memory was dropped (as an eviction or a restart does).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, getRun, json } from './app/client.ts';
import { dropObjects } from './app/test-worker.ts';
import { TWO_ASKS } from './mcp/mcp-prompts.ts';
import { mcpClient } from './mcp/mcp-client.ts';
import { rawCallTool } from './mcp/mcp-raw.ts';

beforeAll(async () => {
  await json(await call('PUT', '/prompts/two-asks', { body: TWO_ASKS }), 201);
});

const LIST = { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} };
const legacyHeaders = (sessionId: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  'mcp-session-id': sessionId,
});

describe('a 2025-11-25 session', () => {
  it("is found by its id, by the principal that opened it only; another's requests find no session", async () => {
    const client = await mcpClient('legacy');
    const sessionId = (client.transport as any)?.sessionId as string;
    expect(sessionId).toMatch(/^[0-9a-f]{64}$/);
    expect((await call('POST', '/mcp', { body: LIST, headers: legacyHeaders(sessionId) })).status).toBe(200);
    const { key } = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'intruder', scopes: ['runs:start:*'] } }), 201);
    expect((await call('POST', '/mcp', { token: key, body: LIST, headers: legacyHeaders(sessionId) })).status).toBe(404);
    for (const forged of ['0'.repeat(64), 'not-a-session', sessionId.toUpperCase()]) {
      expect((await call('POST', '/mcp', { body: LIST, headers: legacyHeaders(forged) })).status).toBe(404);
    }
    await client.close();
  });

  it('is gone once its object was evicted: 404, and the client initializes a new one', async () => {
    const client = await mcpClient('legacy');
    const sessionId = (client.transport as any)?.sessionId as string;
    await dropObjects();
    expect((await call('POST', '/mcp', { body: LIST, headers: legacyHeaders(sessionId) })).status).toBe(404);
    const again = await mcpClient('legacy');
    expect((await again.listTools()).tools.map((tool) => tool.name)).toContain('two-asks');
    await again.close();
  });

  it('without a session id takes only an initialize', async () => {
    const response = await call('POST', '/mcp', {
      body: LIST,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    });
    expect(response.status).toBe(400);
  });
});

describe('a 2026-07-28 call', () => {
  it('continues its run with its request state after every object was dropped', async () => {
    const first = await rawCallTool('two-asks', {});
    const runId = first.result._meta['dev.runvil/run_id'] as string;
    const key = Object.keys(first.result.inputRequests)[0]!;
    await dropObjects();
    const second = await rawCallTool(
      'two-asks',
      {},
      { requestState: first.result.requestState, inputResponses: { [key]: { action: 'accept', content: { answer: 'Ada' } } } },
    );
    expect(second.result).toMatchObject({ resultType: 'input_required', _meta: { 'dev.runvil/run_id': runId } });
    expect((await getRun(runId)).pending).toMatchObject([{ question: 'When does it ship?' }]);
  });
});
