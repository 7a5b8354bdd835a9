/**
 * The conversation records' JSON texts, made on both sides: the records the driver makes
 * (src/engine/entry/protocol-records.ts) are the texts the runtime's own JSON encoder
 * (json.lua, in a real VM) writes for the same records, key for key, byte for byte, and the
 * texts protocol.lua makes (a round's head, a one-off round's record) are what the encoder
 * writes and what the driver reads. A record's text enters a round's digest, which a replay
 * compares: the two sides may never differ.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/json/canonical-json.ts';
import type { Json } from '../../src/json/json.ts';
import type { ReplyCall } from '../../src/engine/entry/protocol.ts';
import {
  assistantRecordText,
  assistantRecordValue,
  contextWindowOf,
  decodeRoundHead,
  decodeToolMap,
  toolEntryText,
  toolRecordText,
  toolRecordValue,
  type ToolListEntry,
} from '../../src/engine/entry/protocol-records.ts';
import { TASK_BUILTIN_TOOLS } from '../../src/engine/task-builtins.ts';
import { useProtocolVm } from './protocol-vm.ts';

const lua = useProtocolVm();

/** What json.lua writes for `value` (given as JSON text, decoded in Lua first). */
const luaEncoded = (json: string) => lua('return J.try_encode(J.decode(...))', [json])[0];

const contents = ['', 'plain', 'a "quoted" word', 'lines\nand\ttabs\u0001', 'é ünïcode ✓', '<untrusted nonce="x">out</untrusted>'];

describe('an assistant record', () => {
  const calls: ReplyCall[] = [
    { id: 'call_1', name: 'web_search', argumentsJson: canonicalJson({ query: 'lua "5.4"', limit: 3 }) },
    { id: 'call "2"', name: 'web_fetch', argumentsJson: canonicalJson({ url: 'https://e.x/?q=é', headers: { b: '2', a: '1' } }) },
  ];

  for (const content of contents) {
    it(`is the text json.lua writes, with calls and without: ${JSON.stringify(content)}`, () => {
      for (const made of [[], calls.slice(0, 1), calls]) {
        const text = assistantRecordText(content, made);
        const value = assistantRecordValue(
          content,
          made.map((call) => ({ id: call.id, name: call.name, arguments: JSON.parse(call.argumentsJson) as Json })),
        );
        expect(luaEncoded(text)).toBe(text);
        expect(JSON.parse(text)).toEqual(value);
        expect(JSON.stringify(value)).toBe(text);
      }
    });
  }
});

describe("a model call's tool record", () => {
  for (const content of contents) {
    it(`is the text json.lua writes: ${JSON.stringify(content)}`, () => {
      for (const callId of ['call_1', 'call "2"\n']) {
        const text = toolRecordText(content, callId);
        expect(lua('return J.try_encode({ content = select(1, ...), role = "tool", tool_call_id = select(2, ...) })', [content, callId])[0]).toBe(text);
        expect(JSON.parse(text)).toEqual(toolRecordValue(content, callId));
        expect(JSON.stringify(toolRecordValue(content, callId))).toBe(text);
      }
    });
  }
});

describe("a one-off round's user record, made in Lua", () => {
  for (const content of contents) {
    it(`is the text json.lua writes, which the driver reads: ${JSON.stringify(content)}`, () => {
      const [made, encoded] = lua('local text = ...\nreturn P.user_record(J.encode_string(text)), J.try_encode({ content = text, role = "user" })', [content]);
      expect(made).toBe(encoded);
      expect(JSON.parse(String(made))).toEqual({ content, role: 'user' });
    });
  }
});

describe("a round's head, made in Lua", () => {
  const heads: [string, Json, number | null][] = [
    ['writer', {}, null],
    ['a "quoted" role', { model: 'scripted', temperature: 0.5 }, null],
    ['small', { context_window: 4096, model: 'x' }, 4096],
    ['nested', { options: { context_window: 99 } }, null],
    ['a role whose name says context_window', { context_window: 'large' }, null],
  ];
  for (const [role, config, window] of heads) {
    it(`is the text json.lua writes, read back by the driver: role ${JSON.stringify(role)}`, () => {
      const configJson = canonicalJson(config);
      for (const turn of [1, 12]) {
        const body = `local config_json, role, turn = ...
local head = P.round_head(P.round_head_start(config_json, J.encode_string(role)), turn)
return head, J.try_encode({ config = J.decode(config_json), role = role, turn = turn })`;
        const [head, encoded] = lua(body, [configJson, role, turn]);
        expect(head).toBe(encoded);
        expect(decodeRoundHead(String(head))).toEqual({ config, role, turn });
        expect(contextWindowOf(String(head))).toBe(window);
      }
    });
  }
});

describe("a round's tool list and tool map", () => {
  const entries: ToolListEntry[] = [
    ...TASK_BUILTIN_TOOLS,
    { name: 'web_search', description: 'Search the "web".\n', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
    { name: 'lookup', description: '', parameters: {} },
  ];

  it("lays out an entry the same in Lua (a catalog or local tool's) and in the driver (a task built-in's)", () => {
    for (const entry of entries) {
      const body = 'local name, description, parameters_json = ...\nreturn P.tool_entry(J.encode_string(name), J.encode_string(description), parameters_json)';
      const [text] = lua(body, [entry.name, entry.description, JSON.stringify(entry.parameters)]);
      expect(text).toBe(toolEntryText(entry));
      expect(JSON.parse(String(text))).toEqual(entry);
    }
  });

  it("sends a task built-in's entry as the bytes it always had (a round's tools enter its digest)", () => {
    for (const builtin of TASK_BUILTIN_TOOLS) expect(toolEntryText(builtin)).toBe(JSON.stringify(builtin));
  });

  it('lists the entries as one JSON list, an empty list too', () => {
    const texts = entries.map(toolEntryText);
    expect(lua('return P.json_list({ ... })', texts)).toEqual([`[${texts.join(',')}]`]);
    expect(lua('return P.json_list({})')).toEqual(['[]']);
  });

  it('maps wire names to tool ids, read by the driver with every wire name as a name', () => {
    const map: [string, string][] = [
      ['web_search', 'web/search'],
      ['__proto__', 'odd/proto'],
      ['toString', 'odd/to-string'],
      ['say "hi"', 'odd/quoted'],
    ];
    const body = `local n = select('#', ...) // 2
local wires, ids = {}, {}
for i = 1, n do wires[i], ids[i] = J.encode_string((select(i, ...))), J.encode_string((select(n + i, ...))) end
return P.tool_map(wires, ids)`;
    const [text] = lua(body, [...map.map(([wire]) => wire), ...map.map(([, id]) => id)]);
    const decoded = decodeToolMap(String(text));
    expect(Object.entries(decoded)).toEqual(map);
    expect(Object.getPrototypeOf(decoded)).toBeNull();
    expect(({} as Record<string, unknown>)['odd/proto']).toBeUndefined();
    expect(Object.entries(decodeToolMap(String(lua('return P.tool_map({}, {})')[0])))).toEqual([]);
  });
});
