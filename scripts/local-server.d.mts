/** The local server as a child process (local-server.mjs). */
export interface LocalServer {
  base: string;
  output: string;
  /** Its state directory (absolute); its own build is under bundle/ there. */
  stateDir: string;
  /** The server's process (the leader of its process group). */
  child: import('node:child_process').ChildProcess;
}
export function freePort(): Promise<number>;
export function startLocalServer(options: {
  port: number;
  token: string;
  stateDir: string;
  args?: string[];
  env?: Record<string, string>;
}): Promise<LocalServer>;
export function killLocalServer(server: LocalServer | null | undefined): Promise<void>;
