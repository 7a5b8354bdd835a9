/**
 * The Lua side of the protocol tests: chunks run in a real VM with protocol.lua loaded as P
 * (and json.lua as J, the runtime's JSON encoder, which writes the texts the driver's records
 * must equal), and the helpers that carry a table's named fields across as (name, value) pairs.
 */
import { afterAll, beforeAll } from 'vitest';
import type { LuaScalar, LuaVm } from '../../src/engine/lua/vm.ts';
import { LUA_SOURCES } from '../../src/engine/lua/runtime/sources.generated.ts';
import { newPlatform } from './helpers.ts';

/** A VM for the file's tests (opened before them, closed after), and how to run protocol chunks in it. */
export function useProtocolVm(): (body: string, args?: LuaScalar[]) => LuaScalar[] {
  let vm: LuaVm;
  beforeAll(async () => {
    vm = await (await newPlatform()).newVm({});
  });
  afterAll(() => vm.close());
  return (body, args = []) => runProtocolLua(vm, body, args);
}

let chunks = 0;

/**
 * Runs `body` in `vm` with protocol.lua loaded as P, json.lua as J and `args` as `...`; answers
 * what it returns. from_pairs and to_pairs carry a table's named fields as (name, value) values.
 */
export function runProtocolLua(vm: LuaVm, body: string, args: LuaScalar[] = []): LuaScalar[] {
  const source = `local P = (function(...)\n${LUA_SOURCES.protocol}\nend)()
local J = (function(...)\n${LUA_SOURCES.json}\nend)({ null = setmetatable({}, {}), raise = function(_, message) error(message, 0) end, typename = type })
local function from_pairs(...)
  local t = {}
  for i = 1, select('#', ...), 2 do local k, v = select(i, ...); t[k] = v end
  return t
end
local function to_pairs(t)
  local keys, out, n = {}, {}, 0
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do out[n + 1], out[n + 2] = k, t[k]; n = n + 2 end
  return table.unpack(out, 1, n)
end
${body}`;
  return vm.runChunk({ name: `protocol-test-${chunks++}`, source }, args);
}

/** A field name as the Lua side spells it. */
export const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** An object's fields as Lua (name, value) pairs, names in snake case. */
export function toPairs(object: object): LuaScalar[] {
  return Object.entries(object).flatMap(([name, value]) => [snake(name), value as LuaScalar]);
}

/** An object from Lua (name, value) pairs, with the fields Lua holds as nil set to null. */
export function fromPairs(values: LuaScalar[], fields: readonly string[]): Record<string, LuaScalar> {
  const object: Record<string, LuaScalar> = Object.fromEntries(fields.map((field) => [snake(field), null]));
  for (let i = 0; i < values.length; i += 2) object[String(values[i])] = values[i + 1]!;
  return object;
}

/** An object with its field names in snake case. */
export const snakeKeys = (object: object) => Object.fromEntries(Object.entries(object).map(([name, value]) => [snake(name), value]));
