/**
 * One connection to an MCP server (src/host/remote/mcp/mcp-connection.ts) and the read of
 * its tool list (mcp-list-read.ts), against servers in the test's process over the SDK's
 * in-memory transport: the handshake, a call's result, its progress and elicitations, its
 * end by the caller's signal or by a server that goes away, and a tool list read page by
 * page. What the wire does to them (answers past a bound, streams cut) is attacked over
 * real HTTP in hostile-tool-outputs.test.ts and mcp-tool-list-bounds.test.ts.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { shortReason } from '../../src/host/remote/mcp/mcp-client.ts';
import { McpConnection, type Elicitation } from '../../src/host/remote/mcp/mcp-connection.ts';
import { readToolPages, TOOL_LIST_BOUNDS } from '../../src/host/remote/mcp/mcp-list-read.ts';
import { MemoryMcpServers, type MemoryServer } from '../support/memory-mcp.ts';

const servers = new MemoryMcpServers();
afterAll(() => servers.close());

/** What the test server saw: the server of the last connection, and each `waits` call's start and cancellation. */
const seen = { last: null as McpServer | null, waits: new Map<string, { started: Deferred; cancelled: Deferred }>() };

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve = () => {};
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** The start and cancellation of the `waits` call `id`, as the server sees them. */
function waits(id: string): { started: Deferred; cancelled: Deferred } {
  if (!seen.waits.has(id)) seen.waits.set(id, { started: deferred(), cancelled: deferred() });
  return seen.waits.get(id)!;
}

/** A server with a tool for each thing a call can do. */
function toolServer(): MemoryServer {
  const server = new McpServer({ name: 'tools', version: '1.0.0' });
  seen.last = server;
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }));
  server.registerTool('fails', {}, async () => ({ content: [{ type: 'text', text: 'it broke' }], isError: true }));
  server.registerTool('counts', { inputSchema: { to: z.number() } }, async ({ to }, extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= to; step++) {
      if (token !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: step, total: to, message: `step ${step}` },
        });
    }
    return { content: [{ type: 'text', text: `counted to ${to}` }] };
  });
  server.registerTool('asks', { inputSchema: { question: z.string() } }, async ({ question }) => {
    const reply = await server.server.elicitInput({
      message: question,
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    return { content: [{ type: 'text', text: JSON.stringify(reply) }] };
  });
  server.registerTool('waits', { inputSchema: { id: z.string() } }, async ({ id }, extra) => {
    waits(id).started.resolve();
    await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve()));
    waits(id).cancelled.resolve();
    return { content: [] };
  });
  server.registerTool('vanishes', {}, async () => {
    // The server goes away with the call under way, answering nothing.
    setTimeout(() => void server.close(), 0);
    return new Promise(() => undefined);
  });
  return { server };
}

const endpoint = { url: servers.add('http://tools.test/mcp', toolServer), headers: {} };
const open = () => McpConnection.open(endpoint, { transport: servers.transport });
const signal = () => new AbortController().signal;

describe('an MCP connection', () => {
  it("completes the handshake and answers a call with the server's result", async () => {
    const connection = await open();
    expect(await connection.callTool('echo', { text: 'hi' }, { signal: signal() })).toEqual({ content: [{ type: 'text', text: 'echo: hi' }] });
    expect(await connection.callTool('fails', {}, { signal: signal() })).toEqual({ content: [{ type: 'text', text: 'it broke' }], isError: true });
    await connection.close();
  });

  it('serves calls one after another, each with its own handlers', async () => {
    const connection = await open();
    const first: number[] = [];
    const second: number[] = [];
    await connection.callTool('counts', { to: 2 }, { signal: signal(), onProgress: (step) => first.push(step.progress) });
    await connection.callTool('counts', { to: 3 }, { signal: signal(), onProgress: (step) => second.push(step.progress) });
    expect([first, second]).toEqual([
      [1, 2],
      [1, 2, 3],
    ]);
    await connection.close();
  });

  it("hands the caller each progress notification of the call, in the server's order", async () => {
    const connection = await open();
    const progress: unknown[] = [];
    const result = await connection.callTool('counts', { to: 3 }, { signal: signal(), onProgress: (step) => progress.push(step) });
    expect(result.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
    expect(progress).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
    await connection.close();
  });

  it("puts the server's elicitation during a call to the caller, and sends the caller's answer back", async () => {
    const connection = await open();
    const asked: Elicitation[] = [];
    const result = await connection.callTool(
      'asks',
      { question: 'Who are you?' },
      { signal: signal(), onElicit: async (request) => (asked.push(request), { action: 'accept', content: { name: 'Ada' } }) },
    );
    expect(asked).toEqual([{ message: 'Who are you?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }]);
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual({ action: 'accept', content: { name: 'Ada' } });
    await connection.close();
  });

  it('declines an elicitation outside a call, and one during a call whose caller takes none', async () => {
    const connection = await open();
    const server = seen.last!;
    expect(await server.server.elicitInput({ message: 'out of the blue', requestedSchema: { type: 'object', properties: {} } })).toEqual({ action: 'decline' });
    const result = await connection.callTool('asks', { question: 'Anyone?' }, { signal: signal() });
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual({ action: 'decline' });
    await connection.close();
  });

  it("ends a call when the caller's signal aborts, before or during it, and the server hears it cancelled", async () => {
    const connection = await open();
    const during = new AbortController();
    const call = connection.callTool('waits', { id: 'during' }, { signal: during.signal });
    // Aborted once the server holds the call, as a slow tool holds it.
    await waits('during').started.promise;
    during.abort();
    await expect(call).rejects.toThrow();
    await waits('during').cancelled.promise;
    const before = new AbortController();
    before.abort();
    await expect(connection.callTool('echo', { text: 'never' }, { signal: before.signal })).rejects.toThrow();
    // The connection still serves the next call.
    expect((await connection.callTool('echo', { text: 'after' }, { signal: signal() })).content).toEqual([{ type: 'text', text: 'echo: after' }]);
    await connection.close();
  });

  it('fails a call, rather than wait forever, when the server goes away during it', async () => {
    const connection = await open();
    await expect(connection.callTool('vanishes', {}, { signal: signal() })).rejects.toThrow(/closed/i);
    await expect(connection.callTool('echo', { text: 'x' }, { signal: signal() })).rejects.toThrow();
    await connection.close();
  });

  it('fails to open, saying why, when the server is down or the caller gives up', async () => {
    const down = { url: servers.add('http://down.test/mcp', toolServer), headers: {} };
    await servers.stop(down.url);
    const refused = await McpConnection.open(down, { transport: servers.transport }).catch((error: unknown) => error);
    expect(shortReason(refused)).toMatch(/^connect ECONNREFUSED/);
    const gaveUp = new AbortController();
    gaveUp.abort(new Error('the run was cancelled'));
    await expect(McpConnection.open(endpoint, { transport: servers.transport, signal: gaveUp.signal })).rejects.toThrow();
  });

  it('closes without throwing, twice', async () => {
    const connection = await open();
    await connection.close();
    await expect(connection.close()).resolves.toBeUndefined();
  });
});

/** A server whose `tools/list` is paged by `page`: a cursor in, the page's tools and the next cursor out. */
function pagedServer(page: (cursor: string | undefined) => { tools: Tool[]; nextCursor?: string }): () => MemoryServer {
  return () => {
    const server = new McpServer({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.server.setRequestHandler(ListToolsRequestSchema, async (request) => page(request.params?.cursor));
    return { server };
  };
}

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });

describe('reading a tool list', () => {
  it('follows nextCursor to the last page', async () => {
    const url = servers.add(
      'http://paged.test/mcp',
      pagedServer((cursor) => {
        const at = cursor === undefined ? 0 : Number(cursor);
        return { tools: [tool(`t${at}a`), tool(`t${at}b`)], ...(at < 4 ? { nextCursor: String(at + 1) } : {}) };
      }),
    );
    const pages = await readToolPages({ url, headers: {} }, TOOL_LIST_BOUNDS, servers.transport);
    expect(pages.ok && pages.tools.map((listed) => listed.name)).toEqual(['t0a', 't0b', 't1a', 't1b', 't2a', 't2b', 't3a', 't3b', 't4a', 't4b']);
  });

  it('ends at a cursor the server gave before, past its pages or its tools, saying which', async () => {
    const cycle = servers.add(
      'http://cycle.test/mcp',
      pagedServer((cursor) => ({ tools: [tool('t')], nextCursor: cursor === 'B' ? 'A' : 'B' })),
    );
    expect(await readToolPages({ url: cycle, headers: {} }, TOOL_LIST_BOUNDS, servers.transport)).toEqual({
      ok: false,
      reason: 'its tool list came back to a page it had given (cursor "B")',
    });
    let served = 0;
    const forever = servers.add(
      'http://forever.test/mcp',
      pagedServer(() => ({ tools: [tool(`t${served}`)], nextCursor: `c${served++}` })),
    );
    const bounds = { ...TOOL_LIST_BOUNDS, pages: 5, tools: 100 };
    expect(await readToolPages({ url: forever, headers: {} }, bounds, servers.transport)).toEqual({ ok: false, reason: 'its tool list passed 5 pages' });
    const crowded = servers.add(
      'http://crowded.test/mcp',
      pagedServer(() => ({ tools: Array.from({ length: 30 }, (_, at) => tool(`t${at}`)) })),
    );
    expect(await readToolPages({ url: crowded, headers: {} }, { ...bounds, tools: 20 }, servers.transport)).toEqual({
      ok: false,
      reason: 'its tool list passed 20 tools',
    });
  });

  it('answers the reason, never throws, when the server is down', async () => {
    const url = servers.add(
      'http://gone.test/mcp',
      pagedServer(() => ({ tools: [] })),
    );
    await servers.stop(url);
    const pages = await readToolPages({ url, headers: {} }, TOOL_LIST_BOUNDS, servers.transport);
    expect(pages.ok === false && pages.reason).toMatch(/^connect ECONNREFUSED/);
  });
});
