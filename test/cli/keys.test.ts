/**
 * `runvil keys create|list|revoke` against the real local server (`npm start`): the key it
 * prints works with its scopes, the list never shows a key's text, a revoked key is refused;
 * and each failure says what to do (a wrong root key, a key instead of the root, a bad
 * scope, an address nobody serves, a server that is no Runvil deployment).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killLocalServer, startLocalServer, type LocalServer } from '../../scripts/local-server.mjs';
import { cli } from './helpers.ts';

const ROOT = 'cli-keys-root';
let server: LocalServer | undefined;
let stateDir: string;
let url: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'runvil-keys-'));
  server = await startLocalServer({ port: await freePort(), token: ROOT, stateDir });
  url = server.base;
}, 120_000);

afterAll(async () => {
  await killLocalServer(server);
  await rm(stateDir, { recursive: true, force: true });
});

const keys = (args: string[], env: Record<string, string> = { RUNVIL_API_TOKEN: ROOT }) => cli(['keys', ...args], { env });
const get = (path: string, token: string) => fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });

describe('runvil keys against a deployment', () => {
  it('creates a key that works with its scopes, lists it without its text, and revokes it', async () => {
    const made = await keys(['create', 'dashboard', '--scope', 'runs:read', '--url', url]);
    expect(made.status, made.stderr).toBe(0);
    const key = made.stdout.trim();
    expect(key).toMatch(/^rvk_[A-Za-z0-9_-]{43}$/);
    expect(made.stderr).toMatch(/^made key key_[0-9a-f]{24} "dashboard" \(runs:read\): the key above is shown this once\n$/);
    const id = /key_[0-9a-f]{24}/.exec(made.stderr)![0];

    expect((await get('/runs', key)).status).toBe(200);
    const upload = await fetch(`${url}/prompts/planted`, { method: 'PUT', headers: { authorization: `Bearer ${key}` }, body: '---\nname: planted\n---\n' });
    expect(upload.status).toBe(403);

    const list = await keys(['list', '--url', url]);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^ID +NAME +SCOPES +CREATED +LAST USED +REVOKED\n/);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('dashboard');
    expect(list.stdout).not.toContain(key.slice(4));

    const revoked = await keys(['revoke', id, '--url', url]);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^revoked key ${id} "dashboard" at \\d{4}-`));
    expect((await get('/runs', key)).status).toBe(401);

    const json = await keys(['list', '--url', url, '--json']);
    const listed = JSON.parse(json.stdout) as { keys: { id: string; revoked_at: string | null }[] };
    expect(listed.keys.find((entry) => entry.id === id)!.revoked_at).not.toBeNull();
  });

  it('takes the root key from --token as well', async () => {
    const made = await keys(['create', 'relay', '--scope', 'asks:answer:*', '--scope', 'runs:read', '--url', `${url}/`, '--token', ROOT, '--json'], {});
    expect(made.status, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ name: 'relay', scopes: ['asks:answer:*', 'runs:read'] });
  });
});

describe('runvil keys failing', () => {
  it('with a wrong root key: 1, and says to send RUNVIL_API_TOKEN', async () => {
    const result = await keys(['list', '--url', url], { RUNVIL_API_TOKEN: 'not-the-root' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('(401): wrong API token');
    expect(result.stderr).toContain("\n  send the deployment's root key, its RUNVIL_API_TOKEN secret");
  });

  it('with a key instead of the root: 1, and says only the root manages keys', async () => {
    const admin = (await keys(['create', 'admin', '--scope', 'admin', '--url', url])).stdout.trim();
    const result = await keys(['create', 'minted', '--scope', 'admin', '--url', url], { RUNVIL_API_TOKEN: admin });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('(403)');
    expect(result.stderr).toContain("the token sent is a key, not the root: only the deployment's RUNVIL_API_TOKEN manages keys");
  });

  it('with a scope that is no scope: 1, naming it and the scopes there are', async () => {
    const result = await keys(['create', 'bad', '--scope', 'runs:write', '--url', url]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('"runs:write", which is no scope; the scopes are runs:read, runs:start:<prompt|*>');
  });

  it('revoking a key that does not exist: 1, and says where the ids are', async () => {
    const result = await keys(['revoke', 'key_000000000000000000000000', '--url', url]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('runvil keys list shows the keys and their ids');
  });

  it('with nobody serving at the address: 1, and says to check --url', async () => {
    const port = await freePort();
    const result = await keys(['list', '--url', `http://127.0.0.1:${port}`]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`cannot reach http://127.0.0.1:${port}: ECONNREFUSED`);
    expect(result.stderr).toContain('check --url: is the deployment running there?');
  });

  it('with a server that is no Runvil deployment: 1, and says so', async () => {
    const other: Server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as { port: number }).port;
    try {
      const result = await keys(['list', '--url', `http://127.0.0.1:${port}`]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('with 200 and no JSON: it does not look like a Runvil deployment');
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  const usage: [string[], string][] = [
    [['list'], 'runvil keys needs --url URL'],
    [[], 'runvil keys needs an action'],
    [['rotate', '--url', 'http://x'], 'unknown action "rotate" for runvil keys'],
    [['create', 'n', '--url', 'http://x'], 'runvil keys create needs at least one --scope'],
    [['create', '--scope', 'admin', '--url', 'http://x'], 'runvil keys create takes one name'],
    [['revoke', '--url', 'http://x'], 'runvil keys revoke takes one key id'],
    [['list', '--scope', 'admin', '--url', 'http://x'], '--scope goes with runvil keys create, not list'],
    [['list', '--url', 'ftp://x'], "--url takes the deployment's address"],
  ];
  for (const [args, message] of usage) {
    it(`runvil keys ${args.join(' ')}: a usage error (2) saying ${JSON.stringify(message)}`, async () => {
      const result = await keys(args);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain(message);
    });
  }

  it('without a root key: a usage error (2) saying to set RUNVIL_API_TOKEN or pass --token', async () => {
    const result = await keys(['list', '--url', url], {});
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('set RUNVIL_API_TOKEN');
  });
});
