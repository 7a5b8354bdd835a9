/**
 * Global setup of the workerd tests (vitest.workers.config.ts): starts the MCP tasks test
 * server (test/support/tasks-mcp-server.mjs: a 2026-07-28 server whose tool answers with
 * tasks) on the Node side, and gives the tests its origin (`inject('tasksMcp')`); each test
 * file uses slots of its own (`/s/<slot>/mcp`) and reads their logs.
 */
import type { TestProject } from 'vitest/node';
import { startTasksMcpServer } from '../support/tasks-mcp.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    tasksMcp: { origin: string };
  }
}

/** Starts the server; the returned function stops it by its pid. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTasksMcpServer();
  project.provide('tasksMcp', { origin: server.origin });
  return () => server.stop();
}
