/**
 * Starts the eliciting MCP server (eliciting-mcp-server.mjs) in its own process group on a
 * free loopback port, as mcp-server.ts starts the reference server; stopped by its pid.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, type McpServer } from './mcp-server.ts';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'eliciting-mcp-server.mjs');

/** Starts the server; settles once it listens. */
export async function startElicitingMcpServer(): Promise<McpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [SCRIPT], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`the eliciting MCP server did not start within 15 s: ${said}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the eliciting MCP server exited (${code}): ${said}`));
    });
  });
  child.stderr!.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
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
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
      await exited;
    },
  };
}
