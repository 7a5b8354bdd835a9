/**
 * The Tools chapter's ordering rules: the order of the rendered tool list (tools.offer in
 * first-offer order, then each offered Pack's tools in id order, then local tools, then the
 * task built-ins), canonical id order of the offering, Packs sorted by id, the id list of the
 * unbound_tool message, and a batch's answers and tool records in the model's call order.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { fixtureHost, type FixtureHostSpec } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import type { Pack } from '../../src/host/pack.ts';
import type { ScriptedReply } from '../../src/models/scripted.ts';
import { lua, newPlatform } from './helpers.ts';
import { WRITER, advertised, errorOf, resultOf, runFixture } from './fixture-run.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

/** acme/zoo: tools listed out of id order in its manifest. */
const ZOO: FixtureHostSpec = {
  packs: {
    'acme/zoo': {
      tools: [
        { name: 'zebra', returns: 'z' },
        { name: 'ant', returns: 'a' },
        { name: 'mole.rat', returns: 'm' },
        { name: 'bee', returns: 'b' },
      ],
    },
  },
};

/** Runs one loop round after `offers` and answers the tool names the round advertised. */
async function roundAfter(offers: string[], uses = 'uses: [web, user-input, acme/zoo]\n', host: FixtureHostSpec = ZOO) {
  const outcome = await runFixture(
    platform,
    lua(["models.use('writer')", ...offers, "messages:user('go')", 'return models.loop()'].join('\n'), `${uses}${WRITER}`),
    { host, model: [{ content: 'done' }] },
  );
  expect(resultOf(outcome)).toBe('done');
  return advertised(outcome.requests)[0];
}

describe('the order of the rendered tool list', () => {
  it('lists tools.offer tools in first-offer order, not catalog order', async () => {
    expect(await roundAfter(["tools.offer({ 'web/search', 'web/fetch' })"])).toEqual(['web_search', 'web_fetch']);
    expect(await roundAfter(["tools.offer('zoo/zebra')", "tools.offer({ 'zoo/ant', 'zoo/zebra', 'user-input/ask' })"])).toEqual([
      'zoo_zebra',
      'zoo_ant',
      'user-input_ask',
    ]);
  });

  it('reads only the sequence part of an array: keyed entries and anything after a hole are not offered', async () => {
    expect(await roundAfter(["tools.offer({ 'web/search', nil, 'web/fetch', extra = 'user-input/ask' })"])).toEqual(['web_search']);
    expect(await roundAfter(["packs.offer({ 'zoo', nil, 'web', extra = 'user-input' })"])).toEqual(['zoo_ant', 'zoo_bee', 'zoo_mole_rat', 'zoo_zebra']);
  });

  it('lists the tools.offer tools first, then each offered Pack in first-offer order with its tools in id order', async () => {
    expect(await roundAfter(["packs.offer('zoo')", "packs.offer('web')", "tools.offer('web/search')", "tools.offer({ 'web/search' })"])).toEqual([
      'web_search',
      'zoo_ant',
      'zoo_bee',
      'zoo_mole_rat',
      'zoo_zebra',
      'web_fetch',
    ]);
  });

  it('puts a tool offered both ways once, at the place of its first tools.offer', async () => {
    expect(await roundAfter(["tools.offer('zoo/bee')", "packs.offer({ 'zoo', 'zoo' })", "tools.offer(packs.get('zoo').tools)", "packs.offer('zoo')"])).toEqual([
      'zoo_bee',
      'zoo_ant',
      'zoo_mole_rat',
      'zoo_zebra',
    ]);
  });

  it('puts local tools after the offered ones, in definition order, then the task built-ins', async () => {
    expect(
      await roundAfter([
        'tools.allow_tasks()',
        "tools.offer_local('zulu', 'Z', {}, function() end)",
        "tools.offer_local('alpha', 'A', {}, function() end)",
        "packs.offer('user-input')",
        "tools.offer('web/fetch')",
      ]),
    ).toEqual(['web_fetch', 'user-input_ask', 'zulu', 'alpha', 'task', 'task_cancel', 'task_status', 'await_tasks']);
  });

  it('gives a local tool that shadows an offered wire name the local place, and drops the catalog tool', async () => {
    expect(
      await roundAfter([
        "tools.offer({ 'web/search', 'web/fetch' })",
        "tools.offer_local('web_search', 'Local search', { query = 'string' }, function(args) return 'local ' .. args.query end)",
      ]),
    ).toEqual(['web_fetch', 'web_search']);
  });
});

describe('canonical id order and Pack order', () => {
  it('lists tools.required() and tools.extras() in canonical id order, whatever order the catalog gives', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "local function ids(list) local out = {} for i, t in ipairs(list) do out[i] = t.id end return table.concat(out, ',') end",
          "return ids(tools.required()) .. '|' .. ids(tools.extras()) .. '|' .. ids(packs.get('zoo').tools)",
        ].join('\n'),
        'uses: [acme/zoo]\n',
      ),
      { host: ZOO },
    );
    expect(resultOf(outcome)).toBe('zoo/ant,zoo/bee,zoo/mole.rat,zoo/zebra|user-input/ask,web/fetch,web/search|zoo/ant,zoo/bee,zoo/mole.rat,zoo/zebra');
  });

  it('sorts packs.required() and packs.extras() by Pack id, not declaration order', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "local function names(list) local out = {} for i, p in ipairs(list) do out[i] = p.name end return table.concat(out, ',') end",
          "return names(packs.required()) .. '|' .. names(packs.extras())",
        ].join('\n'),
        'uses: [web, acme/zoo, user-input]\n',
      ),
      { host: ZOO },
    );
    expect(resultOf(outcome)).toBe('user-input,web,zoo|subagents');

    const extras = await runFixture(
      platform,
      lua("local out = {} for i, p in ipairs(packs.extras()) do out[i] = p.name end return table.concat(out, ',')", 'uses: [user-input]\n'),
    );
    expect(resultOf(extras)).toBe('subagents,web');
  });

  it('lists the run offering in alphabetical order in the unbound_tool message, whatever order the catalog adds them in', async () => {
    const outcome = await runFixture(platform, lua("return tools.call('missing', {})", 'uses: [acme/zoo]\n'), { host: ZOO });
    expect(errorOf(outcome)).toMatchObject({
      kind: 'Tool',
      message:
        'tool "missing" is not a tool in this run; catalog tools: ["user-input/ask", "web/fetch", "web/search", "zoo/ant", "zoo/bee", "zoo/mole.rat", "zoo/zebra"]',
    });
  });

  it('lists the seeded names of tools.calls in sorted order', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "tools.offer({ 'zoo/zebra', 'zoo/ant' })",
          "tools.call('zoo/bee')",
          "local ok, err = pcall(function() return tools.calls['nope'] end)",
          'return tostring(err)',
        ].join('\n'),
        'uses: [acme/zoo]\n',
      ),
      { host: ZOO },
    );
    expect(resultOf(outcome)).toBe(
      'tools.calls: "nope" has no seeded count; seeded names: ["zoo/ant", "zoo/bee", "zoo/zebra"] - check for typos or offer it with tools.offer',
    );
  });
});

/**
 * A third-party Pack whose `slow` tool answers after the delay its arguments name, logging
 * when each call starts and ends; added to a fixture Host.
 */
function timedHost(model: ScriptedReply[]) {
  const log: string[] = [];
  const timed: Pack = {
    manifest: {
      fqName: 'acme/timed',
      description: 'Answers after a delay',
      tools: [
        {
          id: 'timed/slow',
          description: 'Answer after ms milliseconds.',
          parameters: { type: 'object', properties: { name: { type: 'string' }, ms: { type: 'integer' } } },
          output: 'plain',
          trusted: true,
        },
      ],
    },
    async call(_tool, args, context) {
      log.push(`start ${String(args.name)}`);
      await context.store.append('order.txt', `start ${String(args.name)}\n`);
      await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
      log.push(`end ${String(args.name)}`);
      await context.store.append('order.txt', `end ${String(args.name)}\n`);
      return { ok: true, output: `answer ${String(args.name)}` };
    },
  };
  const host = fixtureHost({}, [], model);
  return { host: { ...host, packs: [...host.packs, timed] }, log };
}

describe('tool-call batches', () => {
  it('starts the catalog calls of a batch together, in call order, and answers in call order when a later call lands first', async () => {
    const calls: NonNullable<ScriptedReply['tool_calls']> = [
      { id: 'c1', name: 'timed_slow', arguments: { name: 'first', ms: 60 } },
      { id: 'c2', name: 'timed_slow', arguments: { name: 'second', ms: 1 } },
      { id: 'c3', name: 'timed_slow', arguments: { name: 'third', ms: 30 } },
      { id: 'c4', name: 'timed_slow', arguments: { name: 'fourth', ms: 0 } },
    ];
    const { host, log } = timedHost([{ tool_calls: calls }, { content: 'done' }]);
    const model = host.models.provider({}, 'writer') as unknown as { requests: { messages: { role: string; content: string; tool_call_id?: string }[] }[] };
    const outcome = await runOnHost(platform, host, {
      prompt: lua(
        [
          "models.use('writer')",
          "tools.offer('timed/slow')",
          "messages:user('go')",
          'models.loop()',
          'local out = {}',
          "for i = 3, 6 do out[#out + 1] = messages[i].tool_call_id .. '=' .. messages[i].content end",
          "return table.concat(out, ',')",
        ].join('\n'),
        `uses: [acme/timed]\n${WRITER}`,
      ),
    });
    expect(resultOf(outcome)).toBe('c1=answer first,c2=answer second,c3=answer third,c4=answer fourth');
    expect(log.slice(0, 4)).toEqual(['start first', 'start second', 'start third', 'start fourth']);
    expect(log.indexOf('end second')).toBeLessThan(log.indexOf('end first'));
    const toolMessages = model.requests[1]!.messages.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.tool_call_id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    const results = outcome.events.filter((event) => event.type === 'tool_result');
    expect(results.map((event) => event.tool_call_id)).toEqual(['c1', 'c2', 'c3', 'c4']);
  });

  it('stops a batch at a local tool or a task built-in, which run alone in the model’s order, then sends the rest as a new batch', async () => {
    const calls: NonNullable<ScriptedReply['tool_calls']> = [
      { id: 'c1', name: 'timed_slow', arguments: { name: 'a', ms: 20 } },
      { id: 'c2', name: 'grab', arguments: { value: 'b' } },
      { id: 'c3', name: 'task_status', arguments: {} },
      { id: 'c4', name: 'timed_slow', arguments: { name: 'd', ms: 0 } },
      { id: 'c5', name: 'timed_slow', arguments: { name: 'e', ms: 0 } },
    ];
    const { host } = timedHost([{ tool_calls: calls }, { content: 'done' }]);
    const outcome = await runOnHost(platform, host, {
      prompt: lua(
        [
          "models.use('writer')",
          'tools.allow_tasks()',
          "tools.offer('timed/slow')",
          "tools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args)",
          "  store.append('order.txt', 'grab ' .. args.value .. '\\n')",
          "  return 'grabbed ' .. args.value",
          'end)',
          "messages:user('Use every tool.')",
          'models.loop()',
          "return #messages .. '|' .. store.read('order.txt')",
        ].join('\n'),
        `uses: [acme/timed]\n${WRITER}`,
      ),
    });
    expect(resultOf(outcome)).toBe('8|start a\nend a\ngrab b\nstart d\nstart e\nend d\nend e\n');
    const recorded = outcome.events.filter((event) => event.type === 'tool_result').map((event) => event.tool_call_id);
    expect(recorded).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
  });

  it('runs the local calls of one reply one at a time, in the model’s order, sharing their closure', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "models.use('writer')",
          'local count, seen = 0, {}',
          "tools.offer_local('grab', 'Grab', { value = 'string' }, function(args)",
          '  count = count + 1',
          '  seen[#seen + 1] = args.value .. count',
          "  return 'grabbed ' .. args.value",
          'end)',
          "messages:user('go')",
          'models.loop()',
          "return count .. '|' .. table.concat(seen, ',') .. '|' .. messages[3].tool_call_id .. messages[4].tool_call_id .. messages[5].tool_call_id",
        ].join('\n'),
        WRITER,
      ),
      {
        model: [
          {
            tool_calls: [
              { id: 'x', name: 'grab', arguments: { value: 'p' } },
              { id: 'y', name: 'grab', arguments: { value: 'q' } },
              { id: 'z', name: 'grab', arguments: { value: 'r' } },
            ],
          },
          { content: 'done' },
        ],
      },
    );
    expect(resultOf(outcome)).toBe('3|p1,q2,r3|xyz');
  });

  it('records one assistant record with every call, then the tool records in call order, then the reply', async () => {
    const outcome = await runFixture(
      platform,
      lua(
        [
          "models.use('writer')",
          "tools.offer('web/search')",
          "tools.offer_local('grab', 'Grab', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)",
          "messages:user('go')",
          'models.loop()',
          'local out = {}',
          'for i, m in ipairs(messages) do',
          '  local ids = {}',
          "  for j, c in ipairs(m.tool_calls or {}) do ids[j] = c.id .. ':' .. c.name end",
          "  out[i] = m.role .. (m.tool_call_id and ('/' .. m.tool_call_id) or '') .. (#ids > 0 and ('[' .. table.concat(ids, ',') .. ']') or '')",
          'end',
          "return table.concat(out, ' ')",
        ].join('\n'),
        `uses: [web]\n${WRITER}`,
      ),
      {
        host: { web: { search: { '*': 'results' } } },
        model: [
          {
            tool_calls: [
              { id: 's1', name: 'web_search', arguments: { query: 'a' } },
              { id: 'g1', name: 'grab', arguments: { value: 'b' } },
              { id: 's2', name: 'web_search', arguments: { query: 'c' } },
            ],
          },
          { content: 'done' },
        ],
      },
    );
    expect(resultOf(outcome)).toBe('user assistant[s1:web_search,g1:grab,s2:web_search] tool/s1 tool/g1 tool/s2 assistant');
  });
});
