/**
 * Hostile MCP servers (issue 25): reading a server's tool list ends at each bound with the
 * bound as its reason, in GET /packs as in the refusal of a run that declares the Pack; a
 * failure is the answer for a few seconds, so a failing server is not read again by every
 * request; readers of one server at one moment share one read; and a tool whose schema
 * passes the bounds, or has a pattern RE2 cannot take, is left out with why. The servers are
 * built with the official SDK (test/support/tool-list-mcp-server.mjs).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DeploymentConfig } from '../../src/config/deployment-config.ts';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { reportConfiguredPacks, snapshotPacks, snapshotPacksToPacks } from '../../src/host/remote/configured-packs.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import { MCP_TOOL_LIST_BYTES, MCP_TOOL_LIST_PAGES, MCP_TOOL_LIST_TOOLS, TOOL_LIST_BOUNDS } from '../../src/host/remote/mcp/mcp-list-read.ts';
import { clearMcpToolListCache, MCP_TOOL_LIST_FAILURE_TTL_MS, readMcpToolList } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { parsePrompt } from '../../src/prompt/index.ts';
import { newPlatform } from '../engine/helpers.ts';
import { modeUrl, readsOf, startToolListMcpServer, type ToolListMcpServer, type ToolListMode } from '../support/tool-list-mcp.ts';

let server: ToolListMcpServer;
beforeAll(async () => {
  server = await startToolListMcpServer();
}, 30_000);
afterAll(() => server?.stop());
beforeEach(() => clearMcpToolListCache());

const endpoint = (mode: ToolListMode) => ({ url: modeUrl(server.origin, mode), headers: {} });
const failed = (reason: string) => ({ ok: false, reason: `the MCP server did not answer (${reason})` });

describe('reading a tool list from a hostile server', () => {
  it(`stops a server that hands out a new cursor on every page after ${MCP_TOOL_LIST_PAGES} pages`, { timeout: 30_000 }, async () => {
    expect(await readMcpToolList(endpoint('pages-forever'))).toEqual(failed(`its tool list passed ${MCP_TOOL_LIST_PAGES} pages`));
    expect(await readsOf(server.origin, 'pages-forever')).toBe(MCP_TOOL_LIST_PAGES);
  });

  it('stops at a cursor the server gave before: A -> B -> A, and the same cursor again', async () => {
    expect(await readMcpToolList(endpoint('cycle'))).toEqual(failed('its tool list came back to a page it had given (cursor "A")'));
    expect(await readMcpToolList(endpoint('same-cursor'))).toEqual(failed('its tool list came back to a page it had given (cursor "again")'));
    expect(await readsOf(server.origin, 'cycle')).toBe(3);
    expect(await readsOf(server.origin, 'same-cursor')).toBe(2);
  });

  it(`stops past ${MCP_TOOL_LIST_TOOLS} tools, on one page or over many`, async () => {
    expect(await readMcpToolList(endpoint('many-tools'))).toEqual(failed(`its tool list passed 1,000 tools`));
    expect(await readMcpToolList(endpoint('many-pages'))).toEqual(failed(`its tool list passed 1,000 tools`));
    expect(await readsOf(server.origin, 'many-pages')).toBe(21);
  });

  it(`stops past ${MCP_TOOL_LIST_BYTES / 1024 / 1024} MiB of answers, in one page or over many`, { timeout: 30_000 }, async () => {
    expect(await readMcpToolList(endpoint('huge-page'))).toEqual(failed("its tool list's answers passed 8 MiB"));
    expect(await readMcpToolList(endpoint('mib-pages'))).toEqual(failed("its tool list's answers passed 8 MiB"));
    expect(await readsOf(server.origin, 'mib-pages')).toBe(8);
  });

  it('stops at the deadline of the whole list, for a server that never answers and one that pages slowly', async () => {
    const bounds = { ...TOOL_LIST_BOUNDS, deadlineMs: 1_000 };
    expect(await readMcpToolList(endpoint('never'), Date.now, bounds)).toEqual(failed('its tool list took longer than 1 s'));
    expect(await readMcpToolList(endpoint('slow-pages'), Date.now, bounds)).toEqual(failed('its tool list took longer than 1 s'));
  });

  it(
    `answers with a failure for ${MCP_TOOL_LIST_FAILURE_TTL_MS / 1000} s without reading the server again, then reads it again`,
    { timeout: 30_000 },
    async () => {
      let now = 1_000_000;
      const clock = () => now;
      const first = await readMcpToolList(endpoint('same-cursor'), clock);
      const reads = await readsOf(server.origin, 'same-cursor');
      now += MCP_TOOL_LIST_FAILURE_TTL_MS - 1;
      expect(await Promise.all(Array.from({ length: 20 }, () => readMcpToolList(endpoint('same-cursor'), clock)))).toEqual(Array(20).fill(first));
      expect(await readsOf(server.origin, 'same-cursor')).toBe(reads);
      now += 1;
      await readMcpToolList(endpoint('same-cursor'), clock);
      expect(await readsOf(server.origin, 'same-cursor')).toBe(reads + 2);
    },
  );

  it('lets readers of the same server at the same moment share one read', { timeout: 30_000 }, async () => {
    const before = await readsOf(server.origin, 'pages-forever');
    const lists = await Promise.all(Array.from({ length: 10 }, () => readMcpToolList(endpoint('pages-forever'))));
    expect(new Set(lists.map((list) => JSON.stringify(list))).size).toBe(1);
    expect((await readsOf(server.origin, 'pages-forever')) - before).toBe(MCP_TOOL_LIST_PAGES);
  });

  it('gives each waiting reader its own deadline', async () => {
    const bounds = { ...TOOL_LIST_BOUNDS, deadlineMs: 500 };
    const lists = await Promise.all([readMcpToolList(endpoint('never'), Date.now, bounds), readMcpToolList(endpoint('never'), Date.now, bounds)]);
    expect(lists).toEqual([failed('its tool list took longer than 0.5 s'), failed('its tool list took longer than 0.5 s')]);
  });
});

describe('the tools of a hostile list', () => {
  it('leaves out a schema nested too deep, one too long, and one with a pattern RE2 cannot take, keeping the rest', async () => {
    const list = await readMcpToolList(endpoint('schemas'));
    expect(list).toEqual({
      ok: true,
      tools: [{ name: 'fine', description: 'The tool fine.', parameters: expect.anything(), outputSchema: false }],
      refused: [
        { name: 'deep', reason: 'its inputSchema is nested deeper than 32 levels' },
        { name: 'long', reason: 'its inputSchema is longer than 65,536 characters of JSON' },
        {
          name: 'lookahead',
          reason: 'its inputSchema has the pattern "^(?=.*\\\\d).{8,}$", which cannot be matched in linear time (it has a lookahead or lookbehind)',
        },
      ],
    });
  });
});

function config(text: string): DeploymentConfig {
  const parsed = parseDeploymentConfig(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}

describe('a Pack whose server is hostile', () => {
  const cfg = () =>
    config(`packs:
  hostile/forever:
    mcp: { url: "${modeUrl(server.origin, 'pages-forever')}" }
  hostile/patterns:
    mcp: { url: "${modeUrl(server.origin, 'patterns')}" }
  hostile/fine:
    mcp: { url: "${modeUrl(server.origin, 'fine')}" }
`);

  it('is reported unavailable by GET /packs with the bound, beside Packs that serve', { timeout: 30_000 }, async () => {
    const reports = await reportConfiguredPacks(cfg(), {});
    expect(reports.map(({ name, available, reason }) => ({ name, available, reason }))).toEqual([
      { name: 'hostile/forever', available: false, reason: `the MCP server did not answer (its tool list passed ${MCP_TOOL_LIST_PAGES} pages)` },
      { name: 'hostile/patterns', available: true, reason: null },
      { name: 'hostile/fine', available: true, reason: null },
    ]);
  });

  async function run(uses: string, lua: string) {
    const text = `---\nname: hostile\ndescription: Uses a hostile server.\nrunvil: 0\nuses: [${uses}]\n---\n\n# MCP\n\n## Call\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;
    const parsed = parsePrompt(text, 'hostile.md');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const snapshots = await snapshotPacks(cfg(), parsed.prompt, {});
    const base = fixtureHost({}, [], []);
    return runOnHost(await newPlatform(), { ...base, packs: [...base.packs, ...snapshotPacksToPacks(snapshots, {})] }, { prompt: parsed.prompt });
  }

  it('refuses a run that declares it, naming the bound, and another run is unharmed', { timeout: 30_000 }, async () => {
    const refused = await run('hostile/forever', `return 'never'`);
    expect(refused).toMatchObject({
      status: 'failed',
      error: {
        message: `the environment cannot satisfy this prompt:\n- forever is unavailable: the MCP server did not answer (its tool list passed ${MCP_TOOL_LIST_PAGES} pages)`,
      },
    });
    expect(await run('hostile/fine', `return tools.call('fine/echo', {})`)).toMatchObject({ status: 'completed', result: expect.stringContaining('accepted') });
  });

  it('checks arguments built to backtrack at once, and calls the tool with those that fit', { timeout: 30_000 }, async () => {
    const outcome = await run(
      'hostile/patterns',
      `local attack = string.rep('a', 40) .. '!'
      local results = {}
      for _, args in ipairs({ { v0 = attack }, { v1 = attack }, { v2 = string.rep('x', 5000) }, { v3 = string.rep('word ', 2000) .. '!' } }) do
        local ok, err = pcall(tools.call, 'patterns/pattern', args)
        results[#results + 1] = ok and 'called' or err.message
      end
      local ok = pcall(tools.call, 'patterns/property-names', { [attack] = 1 })
      results[#results + 1] = tostring(ok)
      results[#results + 1] = tools.call('patterns/pattern-properties', { [attack] = 'any' }):match('accepted') or 'no'
      results[#results + 1] = tools.call('patterns/pattern', { v0 = 'aaaa', v3 = 'two words' }):match('accepted') or 'no'
      return table.concat(results, '\\n')`,
    );
    expect(outcome.status === 'completed' ? outcome.result.split('\n') : outcome).toEqual([
      'tool call failure: patterns_pattern: argument "v0" must match the pattern "^(a|a)*$"',
      'tool call failure: patterns_pattern: argument "v1" must match the pattern "^(a+)+$"',
      'tool call failure: patterns_pattern: argument "v2" must match the pattern "(x+x+)+y"',
      'tool call failure: patterns_pattern: argument "v3" must match the pattern "^(\\\\w+\\\\s?)*$"',
      'false',
      'accepted',
      'accepted',
    ]);
  });
});
