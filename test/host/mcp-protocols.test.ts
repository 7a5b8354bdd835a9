/**
 * The MCP Packs' client speaks both protocols (DESIGN.md Part 3, "MCP servers of the
 * 2026-07-28 protocol"): with a server built on the SDK's v2 server package it negotiates
 * 2026-07-28, with a 2025-11-25 server (the reference server, in this process) it falls back
 * to the `initialize` handshake; a call and its questions work the same on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpConnection } from '../../src/host/remote/mcp/mcp-connection.ts';
import { readToolPages } from '../../src/host/remote/mcp/mcp-list-read.ts';
import { everythingServer, MemoryMcpServers } from '../support/memory-mcp.ts';
import { startModernMcpServer, type ModernMcpServer } from '../support/modern-mcp.ts';

let modern: ModernMcpServer;
const memory = new MemoryMcpServers();
beforeAll(async () => {
  modern = await startModernMcpServer();
});
afterAll(async () => {
  await modern?.stop();
  await memory.close();
});

const signal = () => new AbortController().signal;

describe('a server of the 2026-07-28 protocol', () => {
  it('is spoken to in 2026-07-28, and answers a call', async () => {
    const connection = await McpConnection.open({ url: modern.url, headers: {} });
    try {
      expect(connection.protocolVersion()).toBe('2026-07-28');
      const result = await connection.callTool('echo', { text: 'hi' }, { signal: signal() });
      expect(result.content).toEqual([{ type: 'text', text: 'echo: hi' }]);
    } finally {
      await connection.close();
    }
  });

  it('lists its tools', async () => {
    const pages = await readToolPages({ url: modern.url, headers: {} });
    expect(pages.ok && pages.tools.map((tool) => tool.name)).toEqual(['echo', 'asks-twice']);
  });
});

describe('a server of the 2025-11-25 protocol', () => {
  it('is spoken to in 2025-11-25, and answers a call', async () => {
    const endpoint = { url: memory.add('http://everything.test/mcp', everythingServer), headers: {} };
    const connection = await McpConnection.open(endpoint, { transport: memory.transport });
    try {
      expect(connection.protocolVersion()).toBe('2025-11-25');
      const result = await connection.callTool('echo', { message: 'hi' }, { signal: signal() });
      expect(JSON.stringify(result.content)).toContain('hi');
    } finally {
      await connection.close();
    }
  });
});
