/**
 * A tool loop's catalog calls run with their round when every call of the reply names a
 * catalog tool ("Tool-call batches": the catalog calls of a reply run together, their
 * answers in call order); a reply with a local tool among its calls goes through the Lua
 * loop. Either way the run reports the same events, and a replay resumes from any point of
 * its journal, the point between a round and its calls included, to the same result and
 * events, performing only what the journal lacks. The round caps a loop stops at come from
 * its role.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { runOnHost, type HostConfig } from '../../src/host/host.ts';
import { grabPackNoting } from '../../bench/workloads.ts';
import type { ModelProvider } from '../../src/models/provider.ts';
import { lua, newPlatform, resultOf } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

/**
 * A stateless model, deciding from the tool results it is sent: two catalog calls, then a
 * local call beside a catalog one, then its final reply.
 */
const model: ModelProvider = {
  async round(request) {
    const results = request.messages.filter((message) => message.role === 'tool').length;
    const grab = (id: string, value: string) => ({ id, name: 'grab_grab', arguments: { value } });
    if (results === 0) return { ok: true, reply: { content: '', tool_calls: [grab('c1', 'a'), grab('c2', 'b')] } };
    if (results === 2) return { ok: true, reply: { content: '', tool_calls: [{ id: 'c3', name: 'shout', arguments: { text: 'hey' } }, grab('c4', 'c')] } };
    return { ok: true, reply: { content: 'done', tool_calls: [] } };
  },
};

const loop = lua(
  [
    "models.use('writer')",
    'tools.offer(tools.required())',
    "tools.offer_local('shout', 'Shout a text', { text = 'string' }, function(args) return args.text:upper() end)",
    "messages:user('Go.')",
    'local reply = models.loop()',
    'local seen = {}',
    "for i, m in ipairs(messages) do seen[i] = m.role .. ':' .. (m.content or '') end",
    "return reply .. ' | ' .. table.concat(seen, ' / ') .. ' | ' .. tools.calls['grab/grab'] .. ' ' .. tools.calls.shout",
  ].join('\n'),
  'uses: [bench/grab]\nmodels:\n  writer: {}\n',
);

const host = (performed: string[]): HostConfig => ({
  packs: [grabPackNoting(performed)],
  operator: { ask: async () => ({ ok: false, message: 'no operator here' }) },
  models: { provider: () => model },
});

describe('a tool loop with catalog calls and a local one', () => {
  it('runs both rounds of calls to the same conversation, counts and events', async () => {
    const performed: string[] = [];
    const outcome = await runOnHost(platform, host(performed), { prompt: loop });
    expect(resultOf(outcome)).toBe(
      'done | user:Go. / assistant: / tool:grabbed a / tool:grabbed b / assistant: / tool:HEY / tool:grabbed c / assistant:done | 3 1',
    );
    expect(performed).toEqual(['a', 'b', 'c']);
    const calls = outcome.events.filter((event) => ['model_turn_completed', 'assistant_tool_calls', 'tool_call_succeeded', 'tool_result'].includes(event.type));
    expect(calls.map((event) => `${event.type}@${event.turn}:${String((event as { tool_call_id?: string }).tool_call_id ?? '')}`)).toEqual([
      'model_turn_completed@1:',
      'assistant_tool_calls@1:',
      'tool_call_succeeded@1:c1',
      'tool_result@1:c1',
      'tool_call_succeeded@1:c2',
      'tool_result@1:c2',
      'model_turn_completed@2:',
      'assistant_tool_calls@2:',
      'tool_call_succeeded@2:c3',
      'tool_result@2:c3',
      'tool_call_succeeded@2:c4',
      'tool_result@2:c4',
      'model_turn_completed@3:',
    ]);
  });

  it("reports a local call's events with their fields in name order, as the JSON encoder writes them", async () => {
    const outcome = await runOnHost(platform, host([]), { prompt: loop });
    const local = outcome.events.filter((event) => (event as { tool_call_id?: string }).tool_call_id === 'c3');
    expect(local.map((event) => JSON.stringify(event))).toEqual([
      '{"seq":15,"type":"tool_call_succeeded","section":"Only","task":"0","turn":2,"alias":"shout","tool_call_id":"c3"}',
      '{"seq":16,"type":"tool_result","section":"Only","task":"0","turn":2,"alias":"shout","content":"HEY","tool_call_id":"c3","trusted":true}',
    ]);
  });

  it('resumes from every prefix of its journal to the same result and events, performing only what the prefix lacks', async () => {
    const first = await runOnHost(platform, host([]), { prompt: loop });
    const journal = first.journal;
    // Three rounds and three catalog calls: the cut after entry 1 falls between the first
    // round and its two calls, and after entry 2 between those two calls.
    expect(journal.map((entry) => entry.request.op)).toEqual(['model.round', 'tool.call', 'tool.call', 'model.round', 'tool.call', 'model.round']);
    for (let cut = 0; cut <= journal.length; cut++) {
      const performed: string[] = [];
      const resumed = await runOnHost(platform, host(performed), { prompt: loop, journal: journal.slice(0, cut) });
      expect(resultOf(resumed), `cut ${cut}`).toBe(resultOf(first));
      expect(resumed.events, `cut ${cut}`).toEqual(first.events);
      expect(resumed.journal, `cut ${cut}`).toEqual(journal);
      const grabbed = journal
        .slice(cut)
        .flatMap((entry) => (entry.request.op === 'tool.call' ? [String((entry.request.args as { value: string }).value)] : []));
      expect(performed, `cut ${cut}`).toEqual(grabbed);
    }
  });
});

describe('the conversation a round sends after the loop appended its records', () => {
  /** A model that notes each conversation it is sent: one catalog call per round until two results follow the last user message. */
  function noting(sent: string[][]): ModelProvider {
    return {
      async round(request) {
        sent.push(request.messages.map((m) => `${m.role}:${m.content ?? ''}`));
        const lastUser = request.messages.map((m) => m.role).lastIndexOf('user');
        const results = request.messages.slice(lastUser).filter((m) => m.role === 'tool').length;
        if (results < 2)
          return { ok: true, reply: { content: '', tool_calls: [{ id: `g${sent.length}`, name: 'grab_grab', arguments: { value: String(sent.length) } }] } };
        return { ok: true, reply: { content: `done ${sent.length}`, tool_calls: [] } };
      },
    };
  }
  // Two loops: between them the prompt adds a message and replaces the first one, so the
  // second loop's first round sends more than the records the loop itself appended.
  const twoLoops = lua(
    [
      "models.use('writer')",
      'tools.offer(tools.required())',
      "messages:user('Go.')",
      'local first = models.loop()',
      "messages:user('More.')",
      "messages[1] = { role = 'user', content = 'Went.' }",
      'local second = models.loop()',
      'local seen = {}',
      "for i, m in ipairs(messages) do seen[i] = m.role .. ':' .. (m.content or '') end",
      "return first .. ' | ' .. second .. ' | ' .. table.concat(seen, ' / ')",
    ].join('\n'),
    'uses: [bench/grab]\nmodels:\n  writer: {}\n',
  );

  it('is the conversation as messages holds it, round after round, live and on replay', async () => {
    const sent: string[][] = [];
    const config: HostConfig = { ...host([]), models: { provider: () => noting(sent) } };
    const live = await runOnHost(platform, config, { prompt: twoLoops });
    expect(resultOf(live)).toBe(
      'done 3 | done 6 | user:Went. / assistant: / tool:grabbed 1 / assistant: / tool:grabbed 2 / assistant:done 3 / user:More. / assistant: / tool:grabbed 4 / assistant: / tool:grabbed 5 / assistant:done 6',
    );
    expect(sent[1]).toEqual(['user:Go.', 'assistant:', 'tool:grabbed 1']);
    expect(sent[2]).toEqual(['user:Go.', 'assistant:', 'tool:grabbed 1', 'assistant:', 'tool:grabbed 2']);
    // The second loop's first round: the replaced first message and the added one.
    expect(sent[3]).toEqual(['user:Went.', 'assistant:', 'tool:grabbed 1', 'assistant:', 'tool:grabbed 2', 'assistant:done 3', 'user:More.']);
    expect(sent[5]).toEqual([...sent[3]!, 'assistant:', 'tool:grabbed 4', 'assistant:', 'tool:grabbed 5']);
    // A replay sends nothing and reaches the same digests, result and events.
    const replayed = await runOnHost(platform, { ...host([]), models: { provider: () => noting([]) } }, { prompt: twoLoops, journal: live.journal });
    expect(resultOf(replayed)).toBe(resultOf(live));
    expect(replayed.events).toEqual(live.events);
  });
});

describe('a conversation record in json.encode', () => {
  it("is the record's JSON, whether the prompt added it or the loop did, alone or inside a table", async () => {
    const encoded = lua(
      [
        "models.use('writer')",
        'tools.offer(tools.required())',
        "tools.offer_local('shout', 'Shout a text', { text = 'string' }, function(args) return args.text:upper() end)",
        "messages:user('Go.')",
        'models.loop()',
        "return json.encode(messages[1]) .. '\\n' .. json.encode(messages[2]) .. '\\n' .. json.encode(messages[3]) .. '\\n' .. json.encode({ first = messages[1], n = #messages })",
      ].join('\n'),
      'uses: [bench/grab]\nmodels:\n  writer: {}\n',
    );
    const outcome = await runOnHost(platform, host([]), { prompt: encoded });
    const [user, assistant, tool, wrapped] = resultOf(outcome).split('\n');
    expect(JSON.parse(user!)).toEqual({ content: 'Go.', role: 'user' });
    expect(JSON.parse(assistant!)).toEqual({
      content: '',
      role: 'assistant',
      tool_calls: [
        { arguments: { value: 'a' }, id: 'c1', name: 'grab_grab' },
        { arguments: { value: 'b' }, id: 'c2', name: 'grab_grab' },
      ],
    });
    expect(JSON.parse(tool!)).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
    expect(wrapped).toBe(`{"first":${user},"n":8}`);
  });
});

describe("a fused round's records in the next request", () => {
  it('are what their JSON texts parse to, key for key and byte for byte, live and on replay', async () => {
    const tricky = ['a "quoted" é\n', '\u0001 <tag> \\ /'];
    const requests: string[][] = [];
    const provider: ModelProvider = {
      async round(request) {
        requests.push(request.messages.map((message) => JSON.stringify(message)));
        if (request.messages.some((message) => message.role === 'tool')) return { ok: true, reply: { content: 'done', tool_calls: [] } };
        const calls = tricky.map((value, k) => ({
          id: `c "${k}"`,
          name: 'grab_grab',
          arguments: Object.assign(JSON.parse('{"__proto__":{"polluted":true}}'), { value }),
        }));
        return { ok: true, reply: { content: 'thinking "hard"', tool_calls: calls } };
      },
    };
    const prompt = lua(
      [
        "models.use('writer')",
        'tools.offer(tools.required())',
        "messages:user('Go.')",
        'models.loop()',
        'local texts = {}',
        'for i = 1, #messages do texts[i] = json.encode(messages[i]) end',
        "return table.concat(texts, '\\n')",
      ].join('\n'),
      'uses: [bench/grab]\nmodels:\n  writer: {}\n',
    );
    const config: HostConfig = { ...host([]), models: { provider: () => provider } };
    const live = await runOnHost(platform, config, { prompt });
    // The records as the conversation holds them (Lua's JSON of each), against what the
    // provider was sent for them in the second round.
    const held = resultOf(live).split('\n');
    expect(requests[1]).toEqual(held.slice(0, 4));
    expect(JSON.parse(requests[1]![1]!).tool_calls[1].arguments).toEqual(JSON.parse('{"__proto__":{"polluted":true},"value":"\\u0001 <tag> \\\\ /"}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // A replay that ends with a live round sends the same records.
    requests.length = 0;
    const replayed = await runOnHost(platform, config, { prompt, journal: live.journal.slice(0, -1) });
    expect(resultOf(replayed)).toBe(resultOf(live));
    expect(requests).toEqual([held.slice(0, 4)]);
  });
});

describe('a model round in the journal', () => {
  it('is its op, role and digest, in that order: the request the provider got is not journaled', async () => {
    const outcome = await runOnHost(platform, host([]), { prompt: loop });
    const round = outcome.journal.find((entry) => entry.request.op === 'model.round')!;
    expect(JSON.stringify(round.request)).toMatch(/^\{"op":"model\.round","role":"writer","digest":"[0-9a-f]{16}"\}$/);
    expect(Object.keys(round.request)).toEqual(['op', 'role', 'digest']);
  });
});

describe('the tool list a round sends', () => {
  // The section's tool list is fixed at its first loop round, so a round hands it to the
  // driver only the first time; every loop round's request must still carry it, one-off
  // rounds (models.infer, no tools) in between or not.
  const rounds = lua(
    [
      "models.use('writer')",
      'tools.offer(tools.required())',
      "messages:user('Go.')",
      'local first = models.loop()',
      "local aside = models.infer('Aside.')",
      "messages:user('Again.')",
      "return first .. ' ' .. aside .. ' ' .. models.loop()",
    ].join('\n'),
    'uses: [bench/grab]\nmodels:\n  writer: {}\n',
  );
  /** A grab call, then a final reply, for a loop; a plain reply to a one-off round. Notes the tool names of each round. */
  const noting = (offered: string[]): ModelProvider => ({
    async round(request) {
      offered.push((request.tools ?? []).map((tool) => tool.name).join(','));
      const last = request.messages[request.messages.length - 1]!;
      if (request.tools === null || last.role === 'tool') return { ok: true, reply: { content: `done${request.messages.length}`, tool_calls: [] } };
      return { ok: true, reply: { content: '', tool_calls: [{ id: `c${request.messages.length}`, name: 'grab_grab', arguments: { value: 'x' } }] } };
    },
  });

  it("is the section's list in every loop round, before and after a one-off round without tools, live and on replay", async () => {
    const offered: string[] = [];
    const outcome = await runOnHost(platform, { ...host([]), models: { provider: () => noting(offered) } }, { prompt: rounds });
    expect(resultOf(outcome)).toBe('done3 done1 done7');
    expect(offered).toEqual(['grab_grab', 'grab_grab', '', 'grab_grab', 'grab_grab']);
    // A replay sends the same rounds: every round's digest matches its journal entry.
    const replayed = await runOnHost(platform, { ...host([]), models: { provider: () => noting([]) } }, { prompt: rounds, journal: outcome.journal });
    expect(replayed.journal).toEqual(outcome.journal);
    expect(resultOf(replayed)).toBe('done3 done1 done7');
  });
});

describe('a reply with hundreds of tool calls', () => {
  /** A model whose first reply calls `count` tools (a local `shout` first when `local`), then ends. */
  const wide = (count: number, local: boolean): ModelProvider => ({
    async round(request) {
      if (request.messages.some((message) => message.role === 'tool')) return { ok: true, reply: { content: 'done', tool_calls: [] } };
      const calls = Array.from({ length: count }, (_, k) => ({ id: `c${k}`, name: 'grab_grab', arguments: { value: `v${k}` } }));
      if (local) calls[0] = { id: 'c0', name: 'shout', arguments: { text: 'hey' } } as never;
      return { ok: true, reply: { content: '', tool_calls: calls } };
    },
  });
  const widePrompt = lua(
    [
      "models.use('writer')",
      'tools.offer(tools.required())',
      "tools.offer_local('shout', 'Shout a text', { text = 'string' }, function(args) return args.text:upper() end)",
      "messages:user('Go.')",
      'local reply = models.loop()',
      "return reply .. ' ' .. #messages .. ' ' .. messages[3].content .. ' ' .. messages[#messages - 1].content",
    ].join('\n'),
    'uses: [bench/grab]\nmodels:\n  writer: {}\n',
  );

  // Each call's values cross into Lua at once: far more than the 20 stack slots a C function
  // may use unasked, which once wrote past the Lua stack.
  for (const local of [false, true]) {
    it(`runs all 300 calls, live and on replay${local ? ', with a local tool among them' : ''}`, async () => {
      const performed: string[] = [];
      const config = { ...host(performed), models: { provider: () => wide(300, local) } };
      const live = await runOnHost(platform, config, { prompt: widePrompt });
      expect(resultOf(live)).toBe(`done 303 ${local ? 'HEY' : 'grabbed v0'} grabbed v299`);
      expect(performed).toHaveLength(local ? 299 : 300);
      const replayed = await runOnHost(platform, config, { prompt: widePrompt, journal: live.journal });
      expect(resultOf(replayed)).toBe(resultOf(live));
      expect(replayed.events).toEqual(live.events);
      expect(performed).toHaveLength(local ? 299 : 300);
    });
  }
});

describe("the round cap (DESIGN.md: a role's round_cap, 32 when it sets none)", () => {
  /** A model that never gives a final reply: every round calls the local tool `again`. */
  const endless: ModelProvider = {
    async round(request) {
      return { ok: true, reply: { content: '', tool_calls: [{ id: `c${request.messages.length}`, name: 'again', arguments: {} }] } };
    },
  };
  const capped = (body: string) =>
    lua(
      ["tools.offer_local('again', 'Again', {}, function() return 'again' end)", "messages:user('Loop.')", body].join('\n'),
      'models:\n  plain: {}\n  short: { round_cap: 3 }\n',
    );
  const rounds = async (body: string) => {
    const outcome = await runOnHost(platform, { ...host([]), models: { provider: () => endless } }, { prompt: capped(body) });
    if (outcome.status !== 'failed') throw new Error('the loop ended');
    return [outcome.error.kind, outcome.error.message, outcome.events.filter((event) => event.type === 'model_turn_completed').length];
  };

  it('stops a role without round_cap after 32 rounds', async () => {
    expect(await rounds("models.use('plain')\nmodels.loop()")).toEqual(['Tool', 'models.loop reached its round cap of 32 rounds without a final reply', 32]);
  });

  it("gives a model handle its own role's cap, whatever role is in use", async () => {
    expect(await rounds("models.use('plain')\nmodels.get('short'):loop()")).toEqual([
      'Tool',
      'models.loop reached its round cap of 3 rounds without a final reply',
      3,
    ]);
  });
});
