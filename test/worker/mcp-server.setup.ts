/**
 * Global setup of the workerd tests (vitest.workers.config.ts): starts the MCP reference
 * server on the Node side (workerd cannot start processes) on a free loopback port, and
 * gives the tests its URL and a URL where nothing listens (`inject('mcp')`); and the hostile
 * server of the output-cap tests (`inject('hostile')`).
 */
import type { TestProject } from 'vitest/node';
import { startHostileMcpServer } from '../support/hostile-mcp.ts';
import { freePort, startEverythingServer } from '../support/mcp-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    mcp: { url: string; downUrl: string };
    /** The hostile server (test/support/hostile-mcp-server.mjs): MCP over SSE and JSON, an HTTP tool service, its health URL. */
    hostile: { url: string; jsonUrl: string; toolsUrl: string; healthUrl: string };
  }
}

/** Starts the server; the returned function stops it by its pid. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startEverythingServer();
  const hostile = await startHostileMcpServer();
  project.provide('mcp', { url: server.url, downUrl: `http://127.0.0.1:${await freePort()}/mcp` });
  project.provide('hostile', { url: hostile.url, jsonUrl: hostile.jsonUrl, toolsUrl: hostile.toolsUrl, healthUrl: hostile.healthUrl });
  return async () => {
    await Promise.all([server.stop(), hostile.stop()]);
  };
}
