/**
 * Global setup of the workerd tests (vitest.workers.config.ts): starts the 2026-07-28 MCP test
 * server (test/support/modern-mcp-server.mjs, built with the SDK's v2 server package) on the
 * Node side, and gives the tests its URL and origin (`inject('modernMcp')`); a test switches
 * its tool list with `POST <origin>/variant/<name>`.
 */
import type { TestProject } from 'vitest/node';
import { startModernMcpServer } from '../support/modern-mcp.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    modernMcp: { url: string; origin: string };
  }
}

/** Starts the server; the returned function stops it by its pid. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startModernMcpServer();
  project.provide('modernMcp', { url: server.url, origin: server.url.slice(0, -'/mcp'.length) });
  return () => server.stop();
}
