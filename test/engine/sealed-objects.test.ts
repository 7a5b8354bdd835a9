/**
 * Sealed objects are sealed (docs/language.md, "The sandbox"): no write, rawset, metatable
 * call or pairs-handed table reaches the data behind an Engine object, and a prelude sees the
 * same sealed tools, store and json as the section, so it cannot rebind what the prompt calls.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua, newPlatform, prompt } from './helpers.ts';
import { errorOf, resultOf, runFixture, WRITER } from './fixture-run.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

/** Each sealed object, as a Lua expression, with a key it holds. */
const SEALED: [string, string][] = [
  ['sys', 'run_id'],
  ['prompt', 'name'],
  ['tools', 'call'],
  ['packs', 'get'],
  ['models', 'loop'],
  ['store', 'read'],
  ['json', 'encode'],
  ['tasks', 'spawn'],
  ['compactors', 'add'],
  ['ui', 'say'],
  ['messages', 'user'],
  ['messages[1]', 'content'],
];

/** Runs Lua with var.cfg set, one message record and one tool call made, so every object above exists. */
async function value(code: string): Promise<string> {
  const setup = `var.cfg = { mode = 'fast' }\nmessages:user('hello')\ntools.call('user-input/ask')\n`;
  return resultOf(await runFixture(platform, lua(setup + code, `uses: [user-input]\n${WRITER}`), { answers: ['hi'] }));
}

describe.each(SEALED)('the sealed object %s', (object, key) => {
  it('refuses a write, new key or old, and keeps its value', async () => {
    const code = `local before = ${object}[${JSON.stringify(key)}]
local a = pcall(function() ${object}[${JSON.stringify(key)}] = 'forged' end)
local b = pcall(function() ${object}.brand_new = 'forged' end)
local c = pcall(function() ${object}[1] = 'forged' end)
return tostring(a or b or c) .. '|' .. tostring(rawequal(${object}[${JSON.stringify(key)}], before)) .. '|' .. tostring(${object}.brand_new)`;
    expect(await value(code)).toBe('false|true|nil');
  });

  it('refuses rawset, which leaves no raw field behind', async () => {
    const code = `local before = ${object}[${JSON.stringify(key)}]
local ok, err = pcall(rawset, ${object}, ${JSON.stringify(key)}, 'forged')
local ok2 = pcall(rawset, ${object}, 'extra', 1)
return tostring(ok) .. '|' .. tostring(ok2) .. '|' .. tostring(rawequal(${object}[${JSON.stringify(key)}], before)) .. '|' .. tostring(rawget(${object}, 'extra')) .. '|' .. tostring(err)`;
    const [ok, ok2, same, extra, message] = (await value(code)).split('|');
    expect([ok, ok2, same, extra]).toEqual(['false', 'false', 'true', 'nil']);
    expect(message).toMatch(/^rawset cannot write to .+: it is sealed; cannot set '/);
  });

  it('shows rawget, next and rawlen only an empty proxy', async () => {
    const code = `return tostring(rawget(${object}, ${JSON.stringify(key)})) .. '|' .. tostring(next(${object})) .. '|' .. rawlen(${object})`;
    expect(await value(code)).toBe('nil|nil|0');
  });

  it('locks its metatable: getmetatable gives a string, setmetatable fails', async () => {
    const code = `local ok = pcall(setmetatable, ${object}, { __index = function() return 'forged' end })
return type(getmetatable(${object})) .. '|' .. tostring(ok) .. '|' .. tostring(${object}.nothing_here)`;
    expect(await value(code)).toBe('string|false|nil');
  });

  it('hands out no table through pairs: the loop state is nil', async () => {
    const code = `local f, s, c = pairs(${object})
return type(f) .. '|' .. tostring(s) .. '|' .. tostring(c)`;
    expect(await value(code)).toBe('function|nil|nil');
  });

  it('refuses table.insert and table.move into it', async () => {
    const code = `local a = pcall(table.insert, ${object}, 'forged')
local b = pcall(table.move, { 'forged' }, 1, 1, 1, ${object})
return tostring(a) .. '|' .. tostring(b)`;
    expect(await value(code)).toBe('false|false');
  });
});

describe('var and tools.calls, which guard their own writes', () => {
  it.each(['var', 'var.cfg', 'var.cfg.list'])('keep rawset and setmetatable from %s, and pairs hands out no table', async (object) => {
    const code = `var.cfg.list = { 1, 2 }
local a = pcall(rawset, ${object}, 'x', 'forged')
local b = pcall(setmetatable, ${object}, {})
local f, s = pairs(${object})
local n = 0
for _ in pairs(${object}) do n = n + 1 end
return tostring(a) .. '|' .. tostring(b) .. '|' .. tostring(rawget(${object}, 'x')) .. '|' .. tostring(${object}.x) .. '|' .. tostring(s) .. '|' .. n .. '|' .. #${object} .. '|' .. type(getmetatable(${object}))`;
    const counts: Record<string, string> = { var: '1|0', 'var.cfg': '2|0', 'var.cfg.list': '2|2' };
    expect(await value(code)).toBe(`false|false|nil|nil|nil|${counts[object]}|string`);
  });

  it('keeps tools.calls read-only: rawset, writes and setmetatable all fail, and the count stands', async () => {
    const code = `local a = pcall(rawset, tools.calls, 'user-input/ask', 99)
local b = pcall(function() tools.calls['user-input/ask'] = 99 end)
local c = pcall(setmetatable, tools.calls, {})
local _, s = pairs(tools.calls)
return tostring(a) .. tostring(b) .. tostring(c) .. '|' .. tools.calls['user-input/ask'] .. '|' .. tostring(s)`;
    expect(await value(code)).toBe('falsefalsefalse|1|nil');
  });
});

describe('what pairs still yields', () => {
  it('walks the facts of sys and the fields of prompt, as before', async () => {
    const code = `local keys = {}
for k in pairs(sys) do keys[#keys + 1] = k end
for k, v in pairs(prompt) do keys[#keys + 1] = k .. '=' .. v end
return table.concat(keys, ',')`;
    expect(await value(code)).toBe(
      'execution,now,prompt_description,prompt_name,prompt_title,run_id,section_name,task_id,description=A test prompt.,name=test,title=Test',
    );
  });

  it('walks the records of messages and the fields of a record, and # and [i] still work', async () => {
    const code = `messages:assistant('there')
local seen = {}
for i, r in pairs(messages) do seen[#seen + 1] = i .. ':' .. r.role end
for k, v in pairs(messages[2]) do seen[#seen + 1] = k .. '=' .. v end
for i, r in ipairs(messages) do seen[#seen + 1] = r.content end
return #messages .. '|' .. table.concat(seen, ',')`;
    expect(await value(code)).toBe('2|1:user,2:assistant,content=there,role=assistant,hello,there');
  });

  it('walks the functions of tools, as a read of each would give them', async () => {
    const code = `local names = {}
for k, v in pairs(tools) do if type(v) == 'function' then names[#names + 1] = k end end
return table.concat(names, ',')`;
    expect(await value(code)).toBe('allow_tasks,call,extras,get,offer,offer_local,required');
  });

  it('hands out a fresh sys.replies each read, so changing one changes nothing', async () => {
    expect(await value(`local r = sys.replies\nr.x = 'forged'\nreturn tostring(sys.replies.x)`)).toBe('nil');
  });
});

describe('messages takes only records', () => {
  it.each([
    ['a string through table.insert', `table.insert(messages, 'forged')`],
    ['a bad role through table.insert', `table.insert(messages, { role = 'bogus', content = 'x' })`],
    ['a bad role through table.insert at the end', `table.insert(messages, #messages + 1, { role = 'bogus', content = 'x' })`],
    ['a number at #messages + 1', `messages[#messages + 1] = 5`],
    ['a table whose role sits behind __index', `messages[#messages + 1] = setmetatable({}, { __index = { role = 'user', content = 'x' } })`],
    ['a function', `messages[#messages + 1] = function() end`],
    ['a record with non-text content', `messages[#messages + 1] = { role = 'user', content = {} }`],
    ['a string key', `messages.extra = { role = 'user', content = 'x' }`],
    ['rawset at #messages + 1', `rawset(messages, #messages + 1, { role = 'user', content = 'x' })`],
    ['a write into the state pairs handed out', `local _, s = pairs(messages); s[#messages + 1] = 'forged'`],
    ['a write into the state pairs handed out for a record', `local _, s = pairs(messages[1]); s.content = 'forged'`],
    ['table.move of a non-record', `table.move({ 'forged' }, 1, 1, #messages + 1, messages)`],
    ['a write to a record field', `messages[1].content = 'forged'`],
  ])('refuses %s, and the model gets only real records', async (_, attempt) => {
    const code = `messages:user('hello')\nlocal ok = pcall(function() ${attempt} end)\nmodels.use('writer')\nlocal reply = models.loop()\nreturn tostring(ok) .. '|' .. #messages .. '|' .. messages[1].content .. '|' .. reply`;
    const outcome = await runFixture(platform, lua(code, WRITER), { model: [{ content: 'done' }] });
    expect(resultOf(outcome)).toBe('false|2|hello|done');
    expect(outcome.requests[0]!.messages.map((m) => [m.role, m.content])).toEqual([['user', 'hello']]);
  });

  it('still takes records through its methods, table.insert and plain assignment', async () => {
    const code = `messages:user('a')\ntable.insert(messages, { role = 'assistant', content = 'b' })\nmessages[#messages + 1] = { role = 'user', content = 'c' }\ntable.insert(messages, 1, { role = 'system', content = 's' })\nlocal out = {}\nfor _, r in ipairs(messages) do out[#out + 1] = r.role .. ':' .. r.content end\nreturn table.concat(out, ',')`;
    expect(resultOf(await runFixture(platform, lua(code, WRITER)))).toBe('system:s,user:a,assistant:b,user:c');
  });
});

/** A prompt declaring acme/probe, whose prelude is `prelude`, and a section running `block`. */
function withPrelude(block: string): ReturnType<typeof prompt> {
  return prompt(`# Probe\n\n## Only\n\n\`\`\`lua\n${block}\n\`\`\`\n`, 'uses: [acme/probe]\n');
}
const probeHost = (prelude: string) => ({
  packs: { 'acme/probe': { prelude, tools: [{ name: 'echo', description: 'Echo', returns: 'real answer' }] } },
});

/** Attempts a prelude makes on the Engine's objects while it loads; each must fail. */
const PRELUDE_ATTEMPTS: [string, string][] = [
  ['rebind tools.call', `tools.call = function() return 'forged' end`],
  ['rebind tools.get', `tools.get = function() return nil end`],
  ['rebind tools.offer', `tools.offer = function() end`],
  ['add a field to tools', `tools.extra = 1`],
  ['wrap tools through setmetatable', `setmetatable(tools, { __index = function() return function() return 'forged' end end })`],
  ['reach the metatable of tools', `getmetatable(tools).__index = {}`],
  ['rebind store.read', `store.read = function() return 'forged' end`],
  ['rebind store.write', `store.write = function() end`],
  ['wrap store through setmetatable', `setmetatable(store, {})`],
  ['rebind json.decode', `json.decode = function() return {} end`],
  ['rebind json.encode', `json.encode = function() return '"forged"' end`],
  ['replace json.null', `json.null = 'forged'`],
  ['write var', `var.forged = 1`],
  ['setmetatable on var', `setmetatable(var, {})`],
  ['grab the table pairs hands out for tools', `local _, s = pairs(tools); s.call = function() return 'forged' end`],
  ['call rawset, which a prelude does not have', `rawset(tools, 'call', function() return 'forged' end)`],
];

describe('a prelude sees the Engine objects sealed', () => {
  it.each(PRELUDE_ATTEMPTS)('cannot %s while it loads', async (_, attempt) => {
    const prelude = `probe = { ok = pcall(function() ${attempt} end) }`;
    const block = `return tostring(probe.ok) .. '|' .. tools.call('probe/echo') .. '|' .. type(store.read) .. '|' .. json.encode({ 1 })`;
    expect(resultOf(await runFixture(platform, withPrelude(block), { host: probeHost(prelude) }))).toBe('false|real answer|function|[1]');
  });

  it.each(PRELUDE_ATTEMPTS)('cannot %s from a helper the section calls later', async (_, attempt) => {
    const prelude = `probe = {}\nfunction probe.tamper() ${attempt} end`;
    const block = `local ok = pcall(probe.tamper)\nreturn tostring(ok) .. '|' .. tools.call('probe/echo') .. '|' .. json.encode({ 1 })`;
    expect(resultOf(await runFixture(platform, withPrelude(block), { host: probeHost(prelude) }))).toBe('false|real answer|[1]');
  });

  it.each(['tools', 'store', 'json', 'untrusted', 'var', 'models', 'messages', 'tasks', 'sys', 'call', 'jump', 'require', 'log', 'packs', 'prompt'])(
    'cannot replace the Engine global %s: the install refuses it as reserved',
    async (name) => {
      const outcome = await runFixture(platform, withPrelude(`return 'unreachable'`), {
        host: probeHost(`${name} = { call = function() return 'forged' end }`),
      });
      expect(errorOf(outcome)).toMatchObject({
        kind: 'Lua',
        message: `Pack \`probe\`: its prelude defines the global \`${name}\`, which is reserved as an Engine global`,
      });
    },
  );

  it('still defines globals of its own and calls tools through the real tools.call', async () => {
    const prelude = `local pack = ...\nprobe = { echo = function() return tools.call(pack .. '/echo') end }\nfunction probe_count() return 1 end`;
    const block = `return probe.echo() .. '|' .. probe_count() .. '|' .. tostring(pcall(function() probe.echo = nil end))`;
    expect(resultOf(await runFixture(platform, withPrelude(block), { host: probeHost(prelude) }))).toBe('real answer|1|false');
  });
});
