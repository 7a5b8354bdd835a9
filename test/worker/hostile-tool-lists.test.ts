/**
 * Hostile MCP servers in workerd (issue 25): GET /packs answers, each hostile Pack
 * unavailable with the bound its server passed; the Worker keeps answering /health while a
 * list is read; a failing server is not read again by the next request; a run that declares
 * such a Pack is refused naming the bound, and another run is unharmed; arguments built to
 * make a tool's patterns backtrack are checked at once. The servers are built with the
 * official SDK and started on the Node side (tool-list-servers.setup.ts).
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { MCP_TOOL_LIST_PAGES } from '../../src/host/remote/mcp/mcp-list-read.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { call, json, settled } from './app/client.ts';

const { origin } = inject('toolLists');

const CONFIG = `packs:
${['pages-forever', 'cycle', 'same-cursor', 'many-tools', 'huge-page', 'mib-pages', 'schemas', 'patterns', 'fine']
  .map((mode) => `  hostile/${mode}:\n    mcp: { url: "${origin}/${mode}/mcp" }\n`)
  .join('')}`;

beforeAll(() => {
  const parsed = parseDeploymentConfig(CONFIG);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
});
afterAll(() => replaceDeploymentConfig(null));

/** How many tools/list requests a mode has served. */
const readsOf = async (mode: string): Promise<number> => (await (await fetch(`${origin}/reads/${mode}`)).json()) as number;

/** `promise`, or a rejection naming `what` once `ms` have passed: a bound the test sets on the code. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

type PacksBody = {
  packs: { name: string; available: boolean; reason: string | null; tools: { id: string }[]; left_out?: { name: string; reason: string }[] }[];
};

describe('GET /packs with hostile servers', () => {
  // The isolate's clock stands still across both cases, so "the next request" falls within the
  // failure's 5 s however long a busy machine takes between them; only Date is faked (timers,
  // the reads' deadlines among them, run for real).
  beforeAll(() => void vi.useFakeTimers({ toFake: ['Date'], now: Date.now() }));
  afterAll(() => void vi.useRealTimers());

  it('answers, each hostile Pack unavailable with the bound its server passed, while /health answers meanwhile', { timeout: 60_000 }, async () => {
    const packs = within(45_000, 'GET /packs', call('GET', '/packs'));
    expect((await within(5_000, 'GET /health', call('GET', '/health'))).status).toBe(200);
    const body = await json<PacksBody>(await packs, 200);
    const byName = new Map(body.packs.map((pack) => [pack.name, pack]));
    const reasonOf = (name: string) => byName.get(`hostile/${name}`)!.reason;
    expect(reasonOf('pages-forever')).toBe(`the MCP server did not answer (its tool list passed ${MCP_TOOL_LIST_PAGES} pages)`);
    expect(reasonOf('cycle')).toBe('the MCP server did not answer (its tool list came back to a page it had given (cursor "A"))');
    expect(reasonOf('same-cursor')).toBe('the MCP server did not answer (its tool list came back to a page it had given (cursor "again"))');
    expect(reasonOf('many-tools')).toBe('the MCP server did not answer (its tool list passed 1,000 tools)');
    expect(reasonOf('huge-page')).toBe("the MCP server did not answer (its tool list's answers passed 8 MiB)");
    expect(reasonOf('mib-pages')).toBe("the MCP server did not answer (its tool list's answers passed 8 MiB)");
    expect(byName.get('hostile/fine')).toMatchObject({ available: true, reason: null });
    expect(byName.get('hostile/schemas')).toMatchObject({
      available: true,
      tools: [{ id: 'schemas/fine' }],
      left_out: [
        { name: 'deep', reason: 'its inputSchema is nested deeper than 32 levels' },
        { name: 'long', reason: 'its inputSchema is longer than 65,536 characters of JSON' },
        { name: 'lookahead', reason: expect.stringContaining('which cannot be matched in linear time (it has a lookahead or lookbehind)') },
      ],
    });
  });

  it('does not read a failing server again for the next request', { timeout: 60_000 }, async () => {
    const before = await Promise.all(['pages-forever', 'same-cursor', 'huge-page'].map(readsOf));
    await json<PacksBody>(await within(45_000, 'GET /packs', call('GET', '/packs')), 200);
    expect(await Promise.all(['pages-forever', 'same-cursor', 'huge-page'].map(readsOf))).toEqual(before);
  });
});

const prompt = (name: string, uses: string, lua: string) =>
  `---\nname: ${name}\ndescription: Uses a hostile server.\nrunvil: 0\nuses: [${uses}]\n---\n\n# Hostile\n\n## Call\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;

async function startRun(name: string, uses: string, lua: string): Promise<string> {
  await json(await call('PUT', `/prompts/${name}`, { body: prompt(name, uses, lua) }), 201);
  return (await json<{ run_id: string }>(await call('POST', `/prompts/${name}/runs`, { body: { args: {} } }), 202)).run_id;
}

describe('a run and a hostile server', () => {
  it('is refused when it declares a Pack whose server pages forever, naming the bound; another run is unharmed', { timeout: 60_000 }, async () => {
    clearMcpToolListCache();
    const refused = await within(45_000, 'the refused run', settled(await startRun('hostile-forever', 'hostile/pages-forever', `return 'never'`)));
    expect(refused).toMatchObject({
      status: 'failed',
      error: {
        kind: 'RequirementsUnmet',
        message: `the environment cannot satisfy this prompt:\n- pages-forever is unavailable: the MCP server did not answer (its tool list passed ${MCP_TOOL_LIST_PAGES} pages)`,
      },
    });
    const fine = await within(30_000, 'the other run', settled(await startRun('hostile-fine', 'hostile/fine', `return tools.call('fine/echo', {})`)));
    expect(fine).toMatchObject({ status: 'completed', result: expect.stringContaining('accepted') });
  });

  it('checks arguments built to make its patterns backtrack at once, and calls the tool with those that fit', { timeout: 60_000 }, async () => {
    const runId = await startRun(
      'hostile-patterns',
      'hostile/patterns',
      `local attack = string.rep('a', 40) .. '!'
      local results = {}
      for _, args in ipairs({ { v0 = attack }, { v1 = attack }, { v2 = string.rep('x', 5000) }, { v3 = string.rep('word ', 2000) .. '!' } }) do
        local ok, err = pcall(tools.call, 'patterns/pattern', args)
        results[#results + 1] = ok and 'called' or err.message
      end
      results[#results + 1] = tostring((pcall(tools.call, 'patterns/property-names', { [attack] = 1 })))
      results[#results + 1] = tools.call('patterns/pattern-properties', { [attack] = 'any' }):match('accepted') or 'no'
      results[#results + 1] = tools.call('patterns/pattern', { v0 = 'aaaa', v3 = 'two words' }):match('accepted') or 'no'
      return table.concat(results, '\\n')`,
    );
    const view = await within(45_000, 'the run', settled(runId));
    expect(view.status).toBe('completed');
    expect(view.result!.split('\n')).toEqual([
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
