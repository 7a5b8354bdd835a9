/**
 * `npm start` (scripts/start.mjs) as a new user meets it: the real local server on a free
 * port with its own state directory, its output read once it serves.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killLocalServer, startLocalServer, type LocalServer } from '../../scripts/local-server.mjs';

let server: LocalServer | undefined;
let stateDir: string;
let port: number;

/** The server's output once it has said where it serves (it says so just after /health answers). */
async function outputOnceServing(): Promise<string> {
  for (let i = 0; i < 200 && !server!.output.includes('runvil: serving'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return server!.output;
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'runvil-start-'));
  port = await freePort();
  server = await startLocalServer({ port, token: 'secret', stateDir });
}, 120_000);

afterAll(async () => {
  await killLocalServer(server);
  await rm(stateDir, { recursive: true, force: true });
});

describe('npm start', { timeout: 60_000 }, () => {
  it('says where it serves and where the console is', async () => {
    const output = await outputOnceServing();
    expect(output).toContain(`runvil: serving on http://127.0.0.1:${port} `);
    expect(output).toContain(`the console is at http://127.0.0.1:${port}/console\n`);
    const console = await fetch(`http://127.0.0.1:${port}/console`);
    expect(console.status).toBe(200);
    expect(await console.text()).toContain('<html');
  });

  it('warns of no remote binding: the local server has none', async () => {
    const output = await outputOnceServing();
    // Wrangler's warning of a binding that reaches Cloudflare (and bills it) names remote
    // resources; the one WARNING it may print besides is the OAuth provider's note that
    // client ID metadata documents are off (docs/api.md, "OAuth for /mcp", says why).
    const warnings = output.split('\n').filter((line) => line.includes('WARNING') && !line.includes('CIMD (Client ID Metadata Document) is disabled'));
    expect(warnings).toEqual([]);
    expect(output).not.toMatch(/remote resources|usage charges/);
    expect(output).not.toMatch(/env\.AI\b/);
  });

  it('builds once: wrangler runs no build of its own, and no watcher rebuilds at start', async () => {
    const output = await outputOnceServing();
    expect(output).not.toContain('[custom build]');
    expect(output).not.toContain('restarting build');
    expect(output).not.toContain('Reloading local server');
  });
});
