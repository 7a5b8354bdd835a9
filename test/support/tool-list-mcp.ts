/**
 * Starts the MCP server with hostile tool lists (tool-list-mcp-server.mjs) in its own process
 * group on a free loopback port, as mcp-server.ts starts the reference server; stopped by its pid.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from './server-process.ts';

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
  const { origin, stop } = await startServerProcess('the tool-list MCP server', SCRIPT);
  return { origin, stop };
}
