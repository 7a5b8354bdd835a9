/**
 * The MCP reference server (@modelcontextprotocol/server-everything, a devDependency) for
 * tests: started on 127.0.0.1 on a free port, in its own process group, stopped by its pid.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from './server-process.ts';

export { freePort } from './server-process.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** The server's entry point. */
export const EVERYTHING_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** A running reference server. */
export interface McpServer {
  port: number;
  /** Its MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** Stops it (its whole process group) and waits until it is gone. */
  stop(): Promise<void>;
}

/** Starts the reference server over Streamable HTTP; settles once it listens. */
export async function startEverythingServer(port?: number): Promise<McpServer> {
  const server = await startServerProcess('the MCP reference server', EVERYTHING_SERVER, ['streamableHttp'], port);
  return { port: server.port, url: `${server.origin}/mcp`, stop: server.stop };
}
