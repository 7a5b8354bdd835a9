/**
 * `npm start` (scripts/start.mjs) as a new user meets it: the real local server on a free
 * port with its own state directory, its output read once it serves; its prompts those of
 * prompts/ and one more, which its build bundles for it alone.
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killLocalServer, startLocalServer, type LocalServer } from '../../scripts/local-server.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** The checkout's generated module of bundled prompts, which a local server's build leaves alone. */
const CHECKOUT_PROMPTS = join(ROOT, 'src/worker/deployment/bundled-prompts.generated.ts');

const OWN = `---
name: only-this-server
description: Bundled by this server's build alone.
runvil: 0
---
# Only this server

## Only
\`\`\`lua
return 'ok'
\`\`\`
`;

let server: LocalServer | undefined;
let stateDir: string;
let port: number;
let checkoutPromptsBefore: string;

/** The server's output once it has said where it serves (it says so just after /health answers). */
async function outputOnceServing(): Promise<string> {
  for (let i = 0; i < 200 && !server!.output.includes('runvil: serving'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return server!.output;
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'runvil-start-'));
  const prompts = join(stateDir, 'prompts');
  await mkdir(prompts);
  for (const file of await readdir(join(ROOT, 'prompts'))) if (file.endsWith('.md')) await copyFile(join(ROOT, 'prompts', file), join(prompts, file));
  await writeFile(join(prompts, 'only-this-server.md'), OWN);
  checkoutPromptsBefore = await readFile(CHECKOUT_PROMPTS, 'utf8');
  port = await freePort();
  server = await startLocalServer({ port, token: 'secret', stateDir, env: { RUNVIL_PROMPTS_DIR: prompts } });
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

  it("serves its own build's prompts, and leaves the checkout's generated module as it was", async () => {
    const own = await fetch(`http://127.0.0.1:${port}/prompts/only-this-server`, { headers: { authorization: 'Bearer secret' } });
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ name: 'only-this-server', origin: 'bundled' });
    const hello = await fetch(`http://127.0.0.1:${port}/prompts/hello`, { headers: { authorization: 'Bearer secret' } });
    expect(hello.status).toBe(200);
    expect(await readFile(CHECKOUT_PROMPTS, 'utf8')).toBe(checkoutPromptsBefore);
    expect(checkoutPromptsBefore).not.toContain('only-this-server');
  });

  it('builds once: wrangler runs no build of its own, and no watcher rebuilds at start', async () => {
    const output = await outputOnceServing();
    expect(output).not.toContain('[custom build]');
    expect(output).not.toContain('restarting build');
    expect(output).not.toContain('Reloading local server');
  });
});
