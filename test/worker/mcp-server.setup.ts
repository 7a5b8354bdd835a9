/**
 * Global setup of the workerd tests (vitest.workers.config.ts): starts the MCP reference
 * server on the Node side (workerd cannot start processes) on a free loopback port, and
 * gives the tests its URL and a URL where nothing listens (`inject('mcp')`).
 */
import type { TestProject } from 'vitest/node';
import { freePort, startEverythingServer } from '../support/mcp-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    mcp: { url: string; downUrl: string };
  }
}

/** Starts the server; the returned function stops it by its pid. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startEverythingServer();
  project.provide('mcp', { url: server.url, downUrl: `http://127.0.0.1:${await freePort()}/mcp` });
  return () => server.stop();
}
