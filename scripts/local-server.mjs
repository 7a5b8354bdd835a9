/**
 * The local server as a child process, for the e2e check and the Worker benchmark:
 * `npm start` (scripts/start.mjs) on a free port with its own state directory, and a kill
 * that takes wrangler and workerd down at once, as a crash would.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeLocalConfig } from './local-wrangler-config.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** How long a start may take before it is taken to hang. */
const STARTUP_LIMIT_MS = 180_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the local server and waits for its /health; `args` go to wrangler dev, `env` to the server's environment. */
export async function startLocalServer({ port, token, stateDir, args = [], env = {} }) {
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [join(root, 'scripts/start.mjs'), ...args], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), RUNVIL_API_TOKEN: token, RUNVIL_STATE_DIR: stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const server = { base, child, output: '', stateDir: resolve(root, stateDir) };
  child.stdout.on('data', (chunk) => (server.output += chunk));
  child.stderr.on('data', (chunk) => (server.output += chunk));
  // A start takes seconds on an idle machine and near a minute with both cores busy; past
  // three minutes it is taken to hang.
  const deadline = Date.now() + STARTUP_LIMIT_MS;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${base}/health`)).ok) return server;
    } catch {}
    if (child.exitCode !== null) throw new Error(`the server exited while starting:\n${server.output}`);
    await sleep(100);
  }
  throw new Error(`the server did not answer /health within ${STARTUP_LIMIT_MS / 1000} s:\n${server.output}`);
}

/** Kills the server and everything it started (SIGKILL to its process group); settles once it no longer answers. */
export async function killLocalServer(server) {
  if (!server || server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  try {
    process.kill(-server.child.pid, 'SIGKILL');
  } catch {}
  await exited;
  // start.mjs, killed with the rest, could not remove its local configuration itself.
  removeLocalConfig(root, join(server.stateDir, 'bundle'));
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${server.base}/health`);
    } catch {
      return;
    }
    await sleep(100);
  }
  throw new Error('the server still answers after it was killed');
}
