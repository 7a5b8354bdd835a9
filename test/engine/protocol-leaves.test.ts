/**
 * The protocol's layouts of what the leaves answer and take, run on both sides: the catalog,
 * a var read and an event's fields, each encoded in TypeScript (src/engine/entry/protocol-leaves.ts)
 * and read in Lua (protocol.lua, in a real VM), and the other way round, field by named field.
 * A layout changed on one side only fails here.
 */
import { describe, expect, it } from 'vitest';
import {
  CATALOG_PACK_FIELDS,
  CATALOG_TOOL_FIELDS,
  CATALOG_UNAVAILABLE_FIELDS,
  decodeCatalog,
  decodeEventJson,
  decodeEventPairs,
  decodeVarRead,
  encodeCatalog,
  encodeEventPairs,
  encodeVarKeys,
  encodeVarRead,
  VAR_TAGS,
  varPath,
  type CatalogView,
  type VarRead,
} from '../../src/engine/entry/protocol-leaves.ts';
import type { Json } from '../../src/json/json.ts';
import type { LuaScalar } from '../../src/engine/lua/vm.ts';
import { fromPairs, useProtocolVm, toPairs } from './protocol-vm.ts';

const lua = useProtocolVm();

describe('the catalog', () => {
  const catalog: CatalogView = {
    packs: [
      { id: 'web', declared: true },
      { id: 'acme/crm', declared: false },
    ],
    unavailable: [{ id: 'mail', reason: 'the server did not answer' }],
    tools: [
      { id: 'web/search', description: 'Search the web.', pack: 'web', wire: 'web_search', output: 'plain', trusted: false },
      { id: 'acme/crm/find', description: 'Find a "customer".\n', pack: 'acme/crm', wire: null, output: 'structured', trusted: true },
    ],
  };
  const empty: CatalogView = { packs: [], unavailable: [], tools: [] };

  /** The catalog as Lua reads it, every item's fields by name, a list at a time: (name, value) pairs per item, then a separator. */
  const luaRead = (values: LuaScalar[]) => {
    const body = `local c = P.decode_catalog(table.pack(...))
local out = {}
for _, list in ipairs({ 'packs', 'unavailable', 'tools' }) do
  out[#out + 1] = #c[list]
  for _, item in ipairs(c[list]) do
    local fields = table.pack(to_pairs(item))
    out[#out + 1] = fields.n
    for i = 1, fields.n do out[#out + 1] = fields[i] end
  end
end
return table.unpack(out)`;
    const out = lua(body, values);
    let at = 0;
    const list = (fields: readonly string[]) =>
      Array.from({ length: Number(out[at++]) }, () => {
        const n = Number(out[at++]);
        return fromPairs(out.slice(at, (at += n)), fields);
      });
    return { packs: list(CATALOG_PACK_FIELDS), unavailable: list(CATALOG_UNAVAILABLE_FIELDS), tools: list(CATALOG_TOOL_FIELDS) };
  };

  it('names the same fields in the same order on both sides', () => {
    expect(lua('return table.unpack(P.CATALOG_PACK_FIELDS)')).toEqual([...CATALOG_PACK_FIELDS]);
    expect(lua('return table.unpack(P.CATALOG_UNAVAILABLE_FIELDS)')).toEqual([...CATALOG_UNAVAILABLE_FIELDS]);
    expect(lua('return table.unpack(P.CATALOG_TOOL_FIELDS)')).toEqual([...CATALOG_TOOL_FIELDS]);
  });

  for (const [what, view] of [
    ['a catalog with Packs, an unavailable one, and a tool left out of the offering (no wire name)', catalog],
    ['an empty catalog', empty],
  ] as const) {
    it(`reaches tools.lua with every item under its names: ${what}`, () => {
      const values = encodeCatalog(view);
      expect(luaRead(values)).toEqual(view);
      expect(decodeCatalog(values)).toEqual(view);
    });

    it(`is written by Lua as the driver writes it: ${what}`, () => {
      // Each list as its length, then per item its pair count and its (name, value) pairs.
      const body = `local v, at = table.pack(...), 1
local c = { packs = {}, unavailable = {}, tools = {} }
for _, list in ipairs({ 'packs', 'unavailable', 'tools' }) do
  local count = v[at]
  at = at + 1
  for k = 1, count do
    local n = v[at]
    c[list][k] = from_pairs(table.unpack(v, at + 1, at + n))
    at = at + 1 + n
  end
end
return P.encode_catalog(c)`;
      const args: LuaScalar[] = [];
      for (const list of [view.packs, view.unavailable, view.tools]) {
        args.push(list.length);
        for (const item of list) args.push(2 * Object.keys(item).length, ...toPairs(item));
      }
      expect(lua(body, args)).toEqual(encodeCatalog(view));
    });
  }
});

describe('a var read', () => {
  const reads: [string, Json | undefined, VarRead][] = [
    ['nothing at the path', undefined, { kind: 'absent' }],
    ['JSON null', null, { kind: 'null' }],
    ['an object (read through a view)', { a: 1 }, { kind: 'table' }],
    ['a list (read through a view)', [1, 2], { kind: 'table' }],
    ['text', 'hello "there"', { kind: 'scalar', value: 'hello "there"' }],
    ['an empty text', '', { kind: 'scalar', value: '' }],
    ['an integer', 42, { kind: 'scalar', value: 42 }],
    ['a float', 1.5, { kind: 'scalar', value: 1.5 }],
    ['false', false, { kind: 'scalar', value: false }],
  ];

  it('names the same tags on both sides', () => {
    expect(lua('return to_pairs(P.VAR_TAGS)')).toEqual(Object.entries(VAR_TAGS).sort().flat());
  });

  for (const [what, value, read] of reads) {
    it(`reaches state.lua as its kind and value: ${what}`, () => {
      const values = encodeVarRead(value);
      expect(decodeVarRead(values)).toEqual(read);
      const [kind, luaValue] = lua('return P.decode_var_read(...)', values);
      expect(read.kind === 'scalar' ? { kind, value: luaValue } : { kind }).toEqual(read);
      expect(lua('return P.encode_var_read(...)', [read.kind, 'value' in read ? read.value : null])).toEqual(values);
    });
  }

  it('refuses a tag it does not know, naming it', () => {
    expect(() => decodeVarRead(['cell', 1])).toThrow('the leaf var_get answered an unknown tag cell');
  });

  it("reads a path's keys from their JSON, the root's as [] or the {} of an empty Lua table", () => {
    expect(varPath('["a",1,"b"]')).toEqual(['a', 1, 'b']);
    expect(varPath('[]')).toEqual([]);
    expect(varPath('{}')).toEqual([]);
    expect(lua('local keys = J.decode(...)\nreturn table.unpack(keys)', [encodeVarKeys(['a', 'b', 3])])).toEqual(['a', 'b', 3]);
  });
});

describe("an event's fields", () => {
  it('cross as (name, value) pairs when all are plain, read in name order whatever order Lua sent them', () => {
    const body = `local flat, n = P.event_pairs(from_pairs(...))
return n, table.unpack(flat, 1, n)`;
    const fields = { tool_call_id: 'c1', alias: 'web_search', trusted: false, tools: 3, ratio: 0.5, content: '' };
    const [n, ...pairs] = lua(body, toPairs(fields));
    expect(n).toBe(2 * Object.keys(fields).length);
    const decoded = decodeEventPairs(pairs);
    expect(decoded).toEqual(fields);
    expect(Object.keys(decoded)).toEqual(Object.keys(fields).sort());
    expect(JSON.stringify(decoded)).toBe(lua('return J.try_encode(from_pairs(...))', toPairs(fields))[0]);
    expect(decodeEventPairs(encodeEventPairs(fields))).toEqual(fields);
  });

  it('cross as pairs with no fields at all', () => {
    expect(lua('local flat, n = P.event_pairs({})\nreturn #flat, n')).toEqual([0, 0]);
    expect(decodeEventPairs([])).toEqual({});
  });

  const notPlain: [string, string][] = [
    ['a table field', '{ calls = { 1, 2 } }'],
    ['an infinite number', '{ n = math.huge }'],
    ['a negative infinite number', '{ n = -math.huge }'],
    ['NaN', '{ n = 0/0 }'],
    ['a list key', '{ [1] = "a" }'],
    ['a function', '{ f = print }'],
  ];
  for (const [what, fields] of notPlain) {
    it(`cross as JSON text when a field is not plain: ${what}`, () => {
      expect(lua(`return P.event_pairs(${fields})`)).toEqual([null]);
    });
  }

  it('read from JSON text keep a field named __proto__ as a field, on no prototype', () => {
    const fields = decodeEventJson('{"__proto__":{"polluted":true},"calls":[{"id":"c1"}]}');
    expect(Object.keys(fields)).toEqual(['__proto__', 'calls']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const pairs = decodeEventPairs(['__proto__', 'x', 'a', 1]);
    expect(Object.keys(pairs)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});
