/**
 * A 2025-11-25 session lives in a Durable Object of its own and belongs to the principal
 * that opened it; it outlives the object's memory (as an eviction or a restart drops it),
 * and so does a question on its way to the client: the client's answer continues the call.
 * A 2026-07-28 call needs no session, so its request state continues the run even after
 * every object's memory was dropped.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, getRun, json } from './app/client.ts';
import { dropObjects } from './app/test-worker.ts';
import { TWO_ASKS } from './mcp/mcp-prompts.ts';
import { appFetch, mcpClient } from './mcp/mcp-client.ts';
import { rawCallTool } from './mcp/mcp-raw.ts';

beforeAll(async () => {
  await json(await call('PUT', '/prompts/two-asks', { body: TWO_ASKS }), 201);
});

/** Who answered each ask of run `runId`, in the order answered: its `ask_answered` events (the run has ended, so its stream does). */
async function answeredBy(runId: string): Promise<(string | null)[]> {
  const text = await (await call('GET', `/runs/${runId}/events`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as { type: string; answered_by?: string | null })
    .filter((event) => event.type === 'ask_answered')
    .map((event) => event.answered_by ?? null);
}

/**
 * A restart as a client sees it: every object's memory dropped, and every stream the client
 * had open broken (in workerd a dropped object's streams are left hanging; a restarted
 * server's connections end). The client then opens its streams again, as after a restart.
 */
function restartable(): { fetch: typeof appFetch; restart: () => Promise<void> } {
  const open = new Set<() => void>();
  return {
    async fetch(url, init) {
      const response = await appFetch(url, init);
      if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
      const reader = response.body.getReader();
      let broken = (): void => undefined;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          broken = () => {
            controller.error(new Error('the server restarted'));
            void reader.cancel().catch(() => undefined);
          };
          open.add(broken);
        },
        async pull(controller) {
          const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
          try {
            if (done) controller.close();
            else controller.enqueue(value);
          } catch {
            // Broken meanwhile.
          }
          if (done) open.delete(broken);
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(body, { status: response.status, headers: response.headers });
    },
    async restart() {
      await dropObjects();
      for (const broken of open) broken();
      open.clear();
    },
  };
}

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

  it("outlives its object's memory: after an eviction its client goes on, and another's requests still find no session", async () => {
    const client = await mcpClient('legacy');
    const sessionId = (client.transport as any)?.sessionId as string;
    await dropObjects();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('two-asks');
    const { key } = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'intruder-after', scopes: ['runs:start:*'] } }), 201);
    expect((await call('POST', '/mcp', { token: key, body: LIST, headers: legacyHeaders(sessionId) })).status).toBe(404);
    expect((await call('POST', '/mcp', { body: LIST, headers: legacyHeaders(sessionId) })).status).toBe(200);
    await client.close();
  });

  it('is forgotten once its client closed it, evicted or not', async () => {
    const client = await mcpClient('legacy');
    const sessionId = (client.transport as any)?.sessionId as string;
    await (client.transport as any).terminateSession();
    expect((await call('POST', '/mcp', { body: LIST, headers: legacyHeaders(sessionId) })).status).toBe(404);
    await dropObjects();
    expect((await call('POST', '/mcp', { body: LIST, headers: legacyHeaders(sessionId) })).status).toBe(404);
    await client.close();
  });

  it("takes the answer to a question asked before its object lost its memory: the call goes on, and the run's asks were answered by the MCP caller", async () => {
    const asked: string[] = [];
    const server = restartable();
    const client = await mcpClient('legacy', {
      name: 'agent-across-eviction',
      fetch: server.fetch,
      elicit: async ({ message }) => {
        asked.push(message);
        if (asked.length === 1) await server.restart();
        return { action: 'accept', content: { answer: asked.length === 1 ? 'Ada' : 'tomorrow' } };
      },
    });
    const result = await client.callTool({ name: 'two-asks', arguments: {} });
    await client.close();
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'Ada ships tomorrow' }] });
    expect(asked).toEqual(['Who owns the launch?', 'When does it ship?']);
    const runId = (result._meta as Record<string, string>)['dev.runvil/run_id']!;
    expect(await getRun(runId)).toMatchObject({ status: 'completed', result: 'Ada ships tomorrow' });
    expect(await answeredBy(runId)).toEqual(['mcp:agent-across-eviction', 'mcp:agent-across-eviction']);
  });

  it('takes the answer to the last question after an eviction: the run completes with it', async () => {
    const asked: string[] = [];
    const server = restartable();
    const client = await mcpClient('legacy', {
      name: 'agent-last-answer',
      fetch: server.fetch,
      elicit: async ({ message }) => {
        asked.push(message);
        if (asked.length === 2) await server.restart();
        return { action: 'accept', content: { answer: asked.length === 1 ? 'Grace' : 'today' } };
      },
    });
    const result = await client.callTool({ name: 'two-asks', arguments: { topic: 'the release' } });
    await client.close();
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'Grace ships today' }] });
    const runId = (result._meta as Record<string, string>)['dev.runvil/run_id']!;
    expect(await answeredBy(runId)).toEqual(['mcp:agent-last-answer', 'mcp:agent-last-answer']);
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
