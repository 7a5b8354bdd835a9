/**
 * Starts the hostile MCP server (hostile-mcp-server.mjs) in its own process group on a free
 * loopback port, as mcp-server.ts starts the reference server; stopped by its pid.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from './server-process.ts';

/** A running hostile server: its MCP endpoints (SSE, JSON), its HTTP tool service, its health URL, and how to stop it. */
export interface HostileMcpServer {
  url: string;
  jsonUrl: string;
  toolsUrl: string;
  healthUrl: string;
  stop(): Promise<void>;
}

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'hostile-mcp-server.mjs');

/** Starts the server; settles once it listens. */
export async function startHostileMcpServer(): Promise<HostileMcpServer> {
  const { origin, stop } = await startServerProcess('the hostile MCP server', SCRIPT);
  return { url: `${origin}/mcp`, jsonUrl: `${origin}/mcp-json`, toolsUrl: `${origin}/tools`, healthUrl: `${origin}/health`, stop };
}
