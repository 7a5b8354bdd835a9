/**
 * The 2026-07-28 test server (modern-mcp-server.mjs, built with the SDK's v2 server package)
 * as a process: started on 127.0.0.1 on a free port, stopped by its pid; `variant` chooses
 * the tool list it serves from then on.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from './server-process.ts';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'modern-mcp-server.mjs');

/** A running 2026-07-28 test server. */
export interface ModernMcpServer {
  port: number;
  /** Its MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** Serves the tool list of `name` (modern-mcp-server.mjs lists them) from now on. */
  variant(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the server, on `port` when given (a restart on the same address). */
export async function startModernMcpServer(port?: number): Promise<ModernMcpServer> {
  const server = await startServerProcess('the 2026-07-28 MCP test server', SCRIPT, [], port);
  return {
    port: server.port,
    url: `${server.origin}/mcp`,
    async variant(name) {
      const response = await fetch(`${server.origin}/variant/${name}`, { method: 'POST' });
      if (response.status !== 204) throw new Error(`the test server did not take the variant ${name}`);
    },
    stop: server.stop,
  };
}
