/**
 * The MCP reference server (@modelcontextprotocol/server-everything, a devDependency) for
 * tests: started on 127.0.0.1 on a free port, in its own process group, stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** A port nobody listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts the reference server over Streamable HTTP; settles once it listens. */
export async function startEverythingServer(port?: number): Promise<McpServer> {
  const chosen = port ?? (await freePort());
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(chosen) },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`the MCP reference server did not start within 15 s: ${said}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the MCP reference server exited (${code}): ${said}`));
    });
  });
  child.stderr!.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A test process that exits without stopping it (test/worker/teardown-guard.ts's forced
  // exit) takes the server's process group with it.
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  process.once('exit', killGroup);
  child.once('exit', () => process.off('exit', killGroup));
  return {
    port: chosen,
    url: `http://127.0.0.1:${chosen}/mcp`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
      const killer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }, 3_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
