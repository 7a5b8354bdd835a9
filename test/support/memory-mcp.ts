/**
 * MCP servers in the test's own process, reached over the SDK's in-memory transport
 * (InMemoryTransport, linked to an McpServer): for tests of what Runvil does with the
 * protocol, where the HTTP boundary is not what is under test (that keeps its real servers:
 * hostile-mcp.ts, tool-list-mcp.ts). Each connection gets a server of its own, as a
 * Streamable HTTP server gives each session one. A URL no server here is added at goes over
 * real HTTP, so a test can name an address nothing listens on beside its in-process servers.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createServer as createEverythingServer } from '@modelcontextprotocol/server-everything/dist/server/index.js';
import { streamableHttp, type McpTransportFactory } from '../../src/host/remote/mcp/mcp-client.ts';

/** A server for one connection, and what to do when that connection closes. */
export interface MemoryServer {
  server: McpServer;
  cleanup?: () => void;
}

/** The MCP reference server (@modelcontextprotocol/server-everything), in this process. */
export const everythingServer = (): MemoryServer => {
  const { server, cleanup } = createEverythingServer();
  return { server, cleanup: () => cleanup(undefined) };
};

/** In-process MCP servers by URL, and the transport factory that reaches them. */
export class MemoryMcpServers {
  private readonly makers = new Map<string, () => MemoryServer>();
  private readonly live = new Map<string, Set<McpServer>>();
  private readonly stopped = new Set<string>();

  /** Serves `make`'s server at `url` (any http URL: nothing listens there); answers the URL. */
  add(url: string, make: () => MemoryServer): string {
    this.makers.set(url, make);
    this.stopped.delete(url);
    return url;
  }

  /** The factory to hand Runvil: a transport linked to a new server for each connection. */
  readonly transport: McpTransportFactory = async (endpoint, fetch) => {
    const make = this.makers.get(endpoint.url);
    if (!make) return streamableHttp(endpoint, fetch);
    // A stopped server refuses connections as an address nothing listens on does.
    if (this.stopped.has(endpoint.url)) throw new Error(`connect ECONNREFUSED (the in-process server at ${endpoint.url} was stopped)`);
    const { server, cleanup } = make();
    const [client, side] = InMemoryTransport.createLinkedPair();
    const servers = this.live.get(endpoint.url) ?? new Set<McpServer>();
    this.live.set(endpoint.url, servers);
    servers.add(server);
    server.server.onclose = () => {
      servers.delete(server);
      cleanup?.();
    };
    await server.connect(side);
    return client;
  };

  /** Stops the server at `url`: its connections close, and new ones are refused. */
  async stop(url: string): Promise<void> {
    this.stopped.add(url);
    await Promise.all([...(this.live.get(url) ?? [])].map((server) => server.close()));
  }

  /** Closes every connection still open. */
  async close(): Promise<void> {
    await Promise.all([...this.live.keys()].map((url) => this.stop(url)));
  }
}
