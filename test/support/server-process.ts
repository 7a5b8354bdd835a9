/**
 * A Node script the tests run as a server: started in its own process group on a free
 * loopback port (PORT in its environment), settled once it says `listening on port`, stopped
 * by its pid (SIGTERM, then SIGKILL after 3 s). A test process that exits without stopping it
 * (test/worker/teardown-guard.ts's forced exit) takes the server's process group with it.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A running server process. */
export interface ServerProcess {
  port: number;
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** Stops it (its whole process group) and waits until it is gone. */
  stop(): Promise<void>;
}

/** A port nobody listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Runs `node script ...args` with PORT set; `name` is how errors call it. */
export async function startServerProcess(name: string, script: string, args: string[] = [], port?: number): Promise<ServerProcess> {
  const chosen = port ?? (await freePort());
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? '', PORT: String(chosen) },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 15 s: ${said}`)), 15_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}): ${said}`));
    });
  });
  child.stderr!.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  const killGroup = () => signalGroup('SIGKILL');
  process.once('exit', killGroup);
  child.once('exit', () => process.off('exit', killGroup));
  return {
    port: chosen,
    origin: `http://127.0.0.1:${chosen}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup('SIGTERM');
      const killer = setTimeout(killGroup, 3_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
