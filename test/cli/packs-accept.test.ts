/**
 * Pinned MCP tools on the command line: `runvil run` pins a configured MCP Pack's tools on
 * first use in `.runvil/pins.json` beside runvil.yaml, refuses a run once the server lists
 * other definitions (naming the tools), and `runvil packs accept VENDOR/NAME` takes the
 * change; against the 2026-07-28 test server on loopback, whose tool list the test switches.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { startModernMcpServer, type ModernMcpServer } from '../support/modern-mcp.ts';
import { cliIn, luaPrompt, tempDir } from './helpers.ts';

let server: ModernMcpServer;
beforeAll(async () => {
  server = await startModernMcpServer();
});
afterAll(() => server?.stop());

const PROMPT = luaPrompt(`return tools.call('modern/echo', { text = 'hi' })`, 'uses: [acme/modern]\n');

describe('runvil packs accept', () => {
  it('pins on the first run, refuses a run once a description changed, and serves again once the change is accepted', async () => {
    const dir = await tempDir({ 'runvil.yaml': `packs:\n  acme/modern:\n    mcp: { url: "${server.url}" }\n`, 'echo.md': PROMPT });
    try {
      await server.variant('base');
      expect(await cliIn(dir.dir, ['run', 'echo.md'])).toMatchObject({ status: 0, stdout: expect.stringContaining('echo: hi') });
      const pins = JSON.parse(await readFile(dir.path('.runvil/pins.json'), 'utf8'));
      expect(pins['acme/modern'].digest).toMatch(/^sha256:[0-9a-f]{64}$/);

      await server.variant('description');
      // Each command is a process of its own: nothing of the last one's reading is cached.
      clearMcpToolListCache();
      const refused = await cliIn(dir.dir, ['run', 'echo.md']);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('- modern is unavailable: its tools changed since they were pinned: echo');

      const accepted = await cliIn(dir.dir, ['packs', 'accept', 'acme/modern']);
      expect(accepted).toMatchObject({ status: 0 });
      expect(accepted.stdout).toMatch(/^pinned acme\/modern's 2 tools, the changed tools echo among them: sha256:[0-9a-f]{64}\n$/);
      expect(await cliIn(dir.dir, ['run', 'echo.md'])).toMatchObject({ status: 0, stdout: expect.stringContaining('echo: hi') });
    } finally {
      await server.variant('base');
      await dir.cleanup();
    }
  });

  it('refuses a Pack runvil.yaml does not configure, and a name that is not vendor/name', async () => {
    const dir = await tempDir({ 'runvil.yaml': `packs:\n  acme/modern:\n    mcp: { url: "${server.url}" }\n` });
    try {
      expect(await cliIn(dir.dir, ['packs', 'accept', 'acme/other'])).toMatchObject({
        status: 1,
        stderr: 'runvil: runvil.yaml configures no MCP Pack acme/other\n',
      });
      expect((await cliIn(dir.dir, ['packs', 'accept', 'modern'])).status).toBe(2);
      expect((await cliIn(dir.dir, ['packs', 'accept', 'acme/modern', '--token', 't'])).status).toBe(2);
    } finally {
      await dir.cleanup();
    }
  });
});
