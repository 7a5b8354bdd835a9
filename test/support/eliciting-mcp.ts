/**
 * Starts the eliciting MCP server (eliciting-mcp-server.mjs) in its own process group on a
 * free loopback port, as mcp-server.ts starts the reference server; stopped by its pid.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServer } from './mcp-server.ts';
import { startServerProcess } from './server-process.ts';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'eliciting-mcp-server.mjs');

/** Starts the server; settles once it listens. */
export async function startElicitingMcpServer(): Promise<McpServer> {
  const server = await startServerProcess('the eliciting MCP server', SCRIPT);
  return { port: server.port, url: `${server.origin}/mcp`, stop: server.stop };
}
