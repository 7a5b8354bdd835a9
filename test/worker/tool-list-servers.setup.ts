/**
 * Global setup of the workerd tests (vitest.workers.config.ts): starts the MCP server with
 * hostile tool lists (test/support/tool-list-mcp-server.mjs) on the Node side, and gives the
 * tests its origin (`inject('toolLists')`); each mode is an endpoint under it.
 */
import type { TestProject } from 'vitest/node';
import { startToolListMcpServer } from '../support/tool-list-mcp.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    toolLists: { origin: string };
  }
}

/** Starts the server; the returned function stops it by its pid. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startToolListMcpServer();
  project.provide('toolLists', { origin: server.origin });
  return () => server.stop();
}
