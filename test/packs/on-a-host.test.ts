/**
 * The runvil Packs served by a real Host and Engine, checked against the Tools chapter's
 * examples (the prelude's input.ask, the fetch tool's failure, the web Pack's reason).
 */
import { describe, expect, it } from 'vitest';
import { runvilPacks, SEARCH_PROVIDER_SERVICE, type SearchProvider } from '../../packs/index.ts';
import { cliPlatform } from '../../src/cli/platform.ts';
import { runOnHost } from '../../src/host/host.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import { parsePrompt } from '../../src/prompt/index.ts';

const SEARCH: SearchProvider = {
  search: async () => ({ ok: true, results: [{ title: 'Lua', url: 'https://www.lua.org/', description: 'The Lua home page' }] }),
};

async function run(uses: string[], lua: string[], options: { answers?: string[]; search?: boolean } = {}) {
  const text = [
    '---',
    'name: packs-check',
    'description: Runs one block against the runvil Packs.',
    'runvil: 0',
    ...(uses.length > 0 ? ['uses:', ...uses.map((use) => `  - ${use}`)] : []),
    '---',
    '',
    '# Packs check',
    '',
    '## Only',
    '',
    '```lua',
    ...lua,
    '```',
    '',
  ].join('\n');
  const parsed = parsePrompt(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const host = {
    packs: runvilPacks({ fetchPage: async (url: string) => ({ ok: false as const, message: `web_fetch: could not fetch ${url}` }) }),
    services: options.search === false ? {} : { [SEARCH_PROVIDER_SERVICE]: SEARCH },
    models: { provider: () => 'no models in this test' },
    operator: new ScriptedOperator(options.answers ?? []),
  };
  const outcome = await runOnHost(await cliPlatform(), host, { prompt: parsed.prompt });
  return outcome.status === 'completed' ? { result: outcome.result } : { error: outcome.error };
}

describe('the runvil Packs on a Host', () => {
  it("let a prompt that declares user-input call the prelude's input.ask", async () => {
    expect(await run(['user-input'], ['return input.ask()'], { answers: ['one'] })).toEqual({ result: 'one' });
  });

  it('refuse arguments to input.ask with the prelude error', async () => {
    const outcome = await run(['user-input'], ['local ok, err = pcall(input.ask, 1)', 'return tostring(err)']);
    expect(outcome).toMatchObject({ result: expect.stringContaining('input.ask takes no arguments') });
  });

  it("end the run with the operator's message when an uncaught ask fails", async () => {
    expect(await run(['user-input'], ['return (input.ask())'])).toMatchObject({
      error: { kind: 'Tool', message: expect.stringContaining("the operator's window closed") },
    });
  });

  it('fail a fetch with no url with the chapter text', async () => {
    const lua = [
      "local ok, err = pcall(tools.call, 'web/fetch', {})",
      "if not ok and err.kind == 'tool' then",
      "  return 'could not run the tool: ' .. tostring(err)",
      'end',
      "return 'ok'",
    ];
    expect(await run(['web'], lua)).toEqual({ result: 'could not run the tool: tool call failure: web_fetch: missing url argument' });
  });

  it('wrap the search results as untrusted output', async () => {
    const outcome = await run(['web'], ["return tools.call('web/search', { query = 'lua' })"]);
    expect(outcome).toMatchObject({
      result: expect.stringMatching(/<untrusted_input_[0-9a-f]{32}>\n1\. Lua\n {3}https:\/\/www\.lua\.org\/\n {3}The Lua home page\n<\/untrusted_input_/),
    });
  });

  it('leave web out, with the chapter reason, on a Host with no search provider', async () => {
    const lua = ["local ok, err = pcall(packs.offer, 'web')", "return tostring(packs.get('web')) .. '|' .. tostring(err)"];
    expect(await run([], lua, { search: false })).toEqual({
      result: 'nil|packs.offer: the web Pack is unavailable in this run: web needs runvil/search-provider, and this host provides none',
    });
  });

  it('refuse a prompt that declares web on a Host with no search provider', async () => {
    const outcome = await run(['web'], ["return 'unreachable'"], { search: false });
    expect(outcome).toMatchObject({
      error: { kind: 'RequirementsUnmet', message: expect.stringMatching(/^the environment cannot satisfy this prompt:\n- web .*runvil\/search-provider/) },
    });
  });

  it('hold subagents as an extra Pack with no tools', async () => {
    const lua = ["local p = packs.get('subagents')", "return p.name .. '|' .. #p.tools"];
    expect(await run([], lua)).toEqual({ result: 'subagents|0' });
  });
});
