/**
 * The tasks test server (tasks-mcp-server.mjs: a 2026-07-28 server whose tool answers with
 * tasks) as a process: started on 127.0.0.1 on a free port, stopped by its pid; `log` reads
 * what a slot's clients did (calls, polls, updates, cancels).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from './server-process.ts';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'tasks-mcp-server.mjs');

/** What a slot's clients did. */
export interface TasksLog {
  calls: number;
  /** Polls by task id (its first 40 characters). */
  polls: Record<string, number>;
  updates: { taskId: string; inputResponses: Record<string, unknown> }[];
  cancels: string[];
}

/** A running tasks test server. */
export interface TasksMcpServer {
  origin: string;
  /** The MCP endpoint of slot `slot`. */
  url(slot: string): string;
  log(slot: string): Promise<TasksLog>;
  stop(): Promise<void>;
}

/** The log of `slot` on the server at `origin` (a workerd test reaches it by its origin alone). */
export async function tasksLog(origin: string, slot: string): Promise<TasksLog> {
  return (await (await fetch(`${origin}/s/${slot}/log`)).json()) as TasksLog;
}

/** Starts the server. */
export async function startTasksMcpServer(): Promise<TasksMcpServer> {
  const server = await startServerProcess('the MCP tasks test server', SCRIPT);
  return {
    origin: server.origin,
    url: (slot) => `${server.origin}/s/${slot}/mcp`,
    log: (slot) => tasksLog(server.origin, slot),
    stop: server.stop,
  };
}
