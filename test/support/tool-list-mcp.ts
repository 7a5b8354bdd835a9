/**
 * Starts the MCP server with hostile tool lists (tool-list-mcp-server.mjs) in its own process
 * group on a free loopback port, as mcp-server.ts starts the reference server; stopped by its pid.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './mcp-server.ts';

/** The modes of tool-list-mcp-server.mjs, each an MCP endpoint with its own tool list. */
export type ToolListMode =
  | 'pages-forever'
  | 'cycle'
  | 'same-cursor'
  | 'many-tools'
  | 'many-pages'
  | 'huge-page'
  | 'mib-pages'
  | 'never'
  | 'slow-pages'
  | 'schemas'
  | 'patterns'
  | 'fine';

/** A running server: where each mode is, its health URL, and how to stop it. */
export interface ToolListMcpServer {
  origin: string;
  stop(): Promise<void>;
}

/** The MCP endpoint of `mode` on the server at `origin`. */
export const modeUrl = (origin: string, mode: ToolListMode): string => `${origin}/${mode}/mcp`;

/** How many `tools/list` requests `mode` has served, asked over HTTP (workerd can ask too). */
export async function readsOf(origin: string, mode: ToolListMode): Promise<number> {
  return (await (await fetch(`${origin}/reads/${mode}`)).json()) as number;
}

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'tool-list-mcp-server.mjs');

/** Starts the server; settles once it listens. */
export async function startToolListMcpServer(): Promise<ToolListMcpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [SCRIPT], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`the tool-list MCP server did not start within 15 s: ${said}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the tool-list MCP server exited (${code}): ${said}`));
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
    origin: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup();
      await exited;
    },
  };
}
