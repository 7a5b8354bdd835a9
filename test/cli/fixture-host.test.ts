/**
 * The fixture Host as test files configure it (`host:`, `model:`, `answers:`), run through
 * `runvil test`. Each case is a test file that must pass.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cli, luaPrompt, tempDir } from './helpers.ts';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** Runs one test file of an inline prompt (one Lua block) plus `rest`; answers runvil's report. */
async function runTestFile(block: string, frontmatter: string, rest: string): Promise<string> {
  const source = `source: |\n${luaPrompt(block, frontmatter).replace(/^/gm, '  ')}\n`;
  const dir = await tempDir({ 'case.test.yaml': source + rest });
  cleanups.push(dir.cleanup);
  return (await cli(['test', dir.dir])).stdout;
}

const PASSED = /^ok {3}.*\n1 passed, 0 failed\n$/;

describe('the fixture Host: runvil/web', () => {
  it('answers web/fetch from host.web.pages by url', async () => {
    const report = await runTestFile(
      "return tools.call('web/fetch', { url = 'https://www.lua.org/' })",
      'uses: [web]\n',
      'host:\n  web:\n    pages: { "https://www.lua.org/": "Lua home" }\nexpect:\n  result_contains: "\\nLua home\\n"\n',
    );
    expect(report).toMatch(PASSED);
  });

  it('fails web/fetch of any other url with web_fetch: could not fetch {url}', async () => {
    const report = await runTestFile(
      "return tools.call('web/fetch', { url = 'https://other.example/' })",
      'uses: [web]\n',
      'host:\n  web:\n    pages: { "https://www.lua.org/": "Lua home" }\nexpect:\n  error: { kind: Tool, contains: "web_fetch: could not fetch https://other.example/" }\n',
    );
    expect(report).toMatch(PASSED);
  });

  it('answers web/search by query, with * for any other query and "no results" without it', async () => {
    const block = [
      "local a = tools.call('web/search', { query = 'lua' })",
      "local b = tools.call('web/search', { query = 'python' })",
      "return a .. '|' .. b",
    ].join('\n');
    const withStar = await runTestFile(
      block,
      'uses: [web]\n',
      'host:\n  web:\n    search: { lua: "1. Lua 5.4", "*": "nothing" }\nexpect:\n  result_matches: "1\\\\. Lua 5\\\\.4[^|]*\\\\|[\\\\s\\\\S]*\\\\nnothing\\\\n"\n',
    );
    expect(withStar).toMatch(PASSED);
    const withoutStar = await runTestFile(
      block,
      'uses: [web]\n',
      'host:\n  web:\n    search: { lua: "1. Lua 5.4" }\nexpect:\n  result_contains: "no results"\n',
    );
    expect(withoutStar).toMatch(PASSED);
  });

  it('makes runvil/web unavailable with the reason host.web.unavailable gives', async () => {
    const report = await runTestFile(
      "return 'unreachable'",
      'uses: [web]\n',
      'host:\n  web: { unavailable: "the fixture says no" }\nexpect:\n  error: { kind: RequirementsUnmet, message: "the environment cannot satisfy this prompt:\\n- web is unavailable: the fixture says no" }\n',
    );
    expect(report).toMatch(PASSED);
  });

  it('leaves runvil/web out with web: false', async () => {
    const report = await runTestFile("return tostring(packs.get('web'))", '', 'host:\n  web: false\nexpect:\n  result: nil\n');
    expect(report).toMatch(PASSED);
  });
});

describe('the fixture Host: runvil/user-input and the operator', () => {
  it('answers asks from answers: in order, then fails with the window closed', async () => {
    const block =
      "local a = tools.call('user-input/ask')\nlocal ok, err = pcall(tools.call, 'user-input/ask')\nreturn a .. '|' .. tostring(ok) .. '|' .. tostring(err)";
    const report = await runTestFile(block, 'uses: [user-input]\n', 'answers: [hi]\nexpect:\n  result_contains: "hi|false|"\n');
    expect(report).toMatch(PASSED);
    const closed = await runTestFile(
      "return tools.call('user-input/ask')",
      'uses: [user-input]\n',
      'expect:\n  error: { kind: Tool, contains: "the operator\'s window closed" }\n',
    );
    expect(closed).toMatch(PASSED);
  });

  it('leaves runvil/user-input out with user-input: false', async () => {
    const report = await runTestFile(
      "return 'x'",
      'uses: [user-input]\n',
      'host:\n  user-input: false\nexpect:\n  error: { kind: RequirementsUnmet, contains: user-input }\n',
    );
    expect(report).toMatch(PASSED);
  });

  it('always serves runvil/subagents', async () => {
    const report = await runTestFile(
      "return tostring(packs.get('subagents') ~= nil)",
      '',
      'host: { web: false, user-input: false }\nexpect:\n  result: "true"\n',
    );
    expect(report).toMatch(PASSED);
  });
});

describe('the fixture Host: third-party Packs', () => {
  const PACK = [
    'host:',
    '  packs:',
    '    acme/stats:',
    '      prelude: |',
    "        stats_helper = function() return 'helped' end",
    '      tools:',
    '        - name: stats',
    '          description: Stats of a text',
    '          output: structured',
    '          returns: \'{"text":"typed","images":[]}\'',
    '        - name: broken',
    '          fails: "stats: broken"',
    '        - name: outside',
    '          trusted: false',
    '          returns: from outside',
    '',
  ].join('\n');

  it('serves a declared Pack: its prelude, and tools named <pack id>/<name> that return their text', async () => {
    const block =
      "local r = tools.call('stats/stats')\nreturn stats_helper() .. '|' .. r.text .. '|' .. #r.images .. '|' .. tools.get('stats/stats').description";
    const report = await runTestFile(block, 'uses: [acme/stats]\n', `${PACK}expect:\n  result: "helped|typed|0|Stats of a text"\n`);
    expect(report).toMatch(PASSED);
  });

  it('fails a tool with its fails: text', async () => {
    const report = await runTestFile(
      "return tools.call('stats/broken')",
      'uses: [acme/stats]\n',
      `${PACK}expect:\n  error: { kind: Tool, contains: "stats: broken" }\n`,
    );
    expect(report).toMatch(PASSED);
  });

  it('wraps the output of an untrusted tool in the envelope', async () => {
    const report = await runTestFile("return tools.call('stats/outside')", 'uses: [acme/stats]\n', `${PACK}expect:\n  result_contains: "<untrusted_input_"\n`);
    expect(report).toMatch(PASSED);
  });
});

describe('the fixture Host: the scripted model', () => {
  it('answers model rounds from model: in order', async () => {
    const block = "local a = models.infer('one')\nlocal b = models.infer('two')\nreturn a .. '|' .. b";
    const report = await runTestFile(block, '', 'model:\n  - content: first\n  - content: second\nexpect:\n  result: "first|second"\n');
    expect(report).toMatch(PASSED);
  });

  it('fails a round past the script with kind Model: scripted model has no reply left', async () => {
    const report = await runTestFile("return models.infer('one')", '', 'expect:\n  error: { kind: Model, contains: scripted model has no reply left }\n');
    expect(report).toMatch(PASSED);
  });

  it('runs tool calls the script asks for', async () => {
    const block = "tools.offer('web/search')\nmessages:user('find lua')\nreturn models.loop()";
    const rest = [
      'host:',
      '  web:',
      '    search: { lua: "1. Lua 5.4" }',
      'model:',
      '  - tool_calls:',
      '      - { id: call_1, name: web_search, arguments: { query: lua } }',
      '  - content: final answer',
      'expect:',
      '  result: final answer',
      '  events: [model_turn_completed, tool_call_succeeded, model_turn_completed]',
      '',
    ].join('\n');
    expect(await runTestFile(block, 'uses: [web]\n', rest)).toMatch(PASSED);
  });
});
