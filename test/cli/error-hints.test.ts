/**
 * The command line's common failures, as a new user meets them (no terminal, no keys, no
 * runvil.yaml), each naming what to do: the option, the variable or the file that fixes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliIn, luaPrompt, promptText, tempDir } from './helpers.ts';

let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir({
    'ask.md': luaPrompt("return tools.call('user-input/ask', { question = 'Who owns it?' })", 'uses: [user-input]\n'),
    'two-asks.md': luaPrompt(
      "return tools.call('user-input/ask', { question = 'One?' }) .. tools.call('user-input/ask', { question = 'Two?' })",
      'uses: [user-input]\n',
    ),
    'caught.md': luaPrompt("local ok = pcall(tools.call, 'user-input/ask', { question = 'Maybe?' })\nreturn tostring(ok)", 'uses: [user-input]\n'),
    'search.md': luaPrompt("return tools.call('web/search', { query = 'lua' })", 'uses: [web]\n'),
    'stats.md': luaPrompt("return tools.call('stats/count', {})", 'uses: [acme/stats]\n'),
    'bare.md': luaPrompt("return tools.call('stats/count', {})", 'uses: [stats]\n'),
    'model.md': promptText('## Ask\nSay hi.\n'),
    'writer.md': promptText('## Ask\n```lua\nmodels.use("writer")\n```\nSay hi.\n', 'models:\n  writer: { provider: anthropic }\n'),
    'script.yaml': 'answers: []\n',
    'other.yaml': 'packs:\n  acme/other:\n    mcp: { url: "http://127.0.0.1:9/mcp" }\n',
  });
});
afterAll(() => dir.cleanup());

describe('an ask with no terminal', () => {
  it('names --answer, and the question it could not ask', async () => {
    const result = await cli(['run', dir.path('ask.md')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^error\[Tool\]: tool call failure: the operator's window closed: /);
    expect(result.stderr).toContain('"Who owns it?"');
    expect(result.stderr).toContain('no answer was given');
    expect(result.stderr).toContain('--answer TEXT');
  });

  it('says the given answers were used up when there were too few', async () => {
    const result = await cli(['run', dir.path('two-asks.md'), '--answer', 'a']);
    expect(result.stderr).toContain('"Two?", the 1 given answer was used up');
    expect(result.stderr).toContain('--answer TEXT');
  });

  it("names the script's answers: under --script", async () => {
    const result = await cli(['run', dir.path('ask.md'), '--script', dir.path('script.yaml')]);
    expect(result.stderr).toContain('--answer TEXT or under answers: in the --script file');
  });

  it('keeps the hint out of --json error kinds and in its message', async () => {
    const result = await cli(['run', dir.path('ask.md'), '--json']);
    const printed = JSON.parse(result.stdout) as { error: { kind: string; message: string } };
    expect(printed.error.kind).toBe('Tool');
    expect(printed.error.message).toContain('--answer TEXT');
  });

  it('adds nothing when the Lua caught the closed window and the run completed', async () => {
    expect(await cli(['run', dir.path('caught.md')])).toEqual({ status: 0, stdout: 'false\n', stderr: '' });
  });
});

describe('a search without a provider', () => {
  it('names the environment variables and --script', async () => {
    const result = await cli(['run', dir.path('search.md')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'error[RequirementsUnmet]: the environment cannot satisfy this prompt:\n- web needs runvil/search-provider, and the environment provides none\n',
    );
    expect(result.stderr).toContain('BRAVE_SEARCH_API_KEY');
    expect(result.stderr).toContain('TAVILY_API_KEY');
    expect(result.stderr).toContain('--script FILE');
  });
});

describe('an unknown Pack', () => {
  it('names runvil.yaml and --config when no configuration was read', async () => {
    // A directory with no runvil.yaml, as a new user's.
    const result = await cliIn(dir.dir, ['run', 'stats.md']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('- stats is unavailable: acme/stats is not installed\n');
    expect(result.stderr).toContain('runvil.yaml');
    expect(result.stderr).toContain('--config FILE');
    expect(result.stderr).toContain('no runvil.yaml was read');
  });

  it('names the file read when it does not configure the Pack', async () => {
    const result = await cli(['run', dir.path('stats.md'), '--config', dir.path('other.yaml')]);
    expect(result.stderr).toContain(`configure acme/stats under packs: in ${dir.path('other.yaml')} (it has no such Pack)`);
    expect(result.stderr).toContain('--config FILE');
  });

  it("lists runvil's own Packs for a bare entry runvil does not have", async () => {
    const result = await cli(['run', dir.path('bare.md'), '--config', dir.path('other.yaml')]);
    expect(result.stderr).toContain('- missing required Pack: stats\n');
    expect(result.stderr).toContain("runvil's own Packs are web, user-input, subagents");
    expect(result.stderr).toContain('vendor/stats under uses:');
    expect(result.stderr).toContain('--config FILE');
  });

  it("names the script's host: packs: under --script", async () => {
    const result = await cli(['run', dir.path('stats.md'), '--script', dir.path('script.yaml')]);
    expect(result.stderr).toContain('host: packs:');
  });
});

describe('a model role without a provider', () => {
  it('names the variables that configure one, and --script', async () => {
    const result = await cli(['run', dir.path('model.md')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^error\[Model\]: no model provider is configured for role "default"/);
    for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'RUNVIL_DEFAULT_MODEL', 'OPENAI_BASE_URL', '--script FILE']) {
      expect(result.stderr).toContain(name);
    }
  });

  it("names the role's provider's variable, and --script", async () => {
    const result = await cli(['run', dir.path('writer.md')]);
    expect(result.stderr).toContain('role "writer" uses anthropic, which needs ANTHROPIC_API_KEY');
    expect(result.stderr).toContain('--script FILE');
  });
});
