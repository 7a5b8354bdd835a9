/**
 * The protocol between the section driver and the Lua runtime, run on both sides: every
 * message kind is encoded in Lua (src/engine/lua/runtime/protocol.lua, in a real VM) and
 * decoded in TypeScript (src/engine/entry/protocol.ts), and the other way round, field by
 * named field. A layout changed on one side only fails here.
 */
import { describe, expect, it } from 'vitest';
import {
  BATCH_CALL_FIELDS,
  decodeBatch,
  decodeEffect,
  decodeEnd,
  decodeRequest,
  decodeRound,
  encodeBatch,
  encodeBatchAnswers,
  encodeEnd,
  encodeEntry,
  encodeReply,
  encodeRequest,
  encodeRound,
  ENTRY_FIELDS,
  failure,
  awaitAnswer,
  fusedRecordsOf,
  replyCall,
  replyCallCount,
  ROUND_FIELDS,
  ROUND_TEXTS_AT,
  type BatchAnswer,
  type BatchCall,
  type EngineRequest,
  type EntryEnd,
  type EntryFacts,
  type TaskOutcome,
  type ReplyCall,
  type RoundYield,
} from '../../src/engine/entry/protocol.ts';
import { assistantRecordText, toolRecordText } from '../../src/engine/entry/protocol-records.ts';
import type { LuaScalar } from '../../src/engine/lua/vm.ts';
import { fromPairs, useProtocolVm, snake, snakeKeys, toPairs } from './protocol-vm.ts';

const lua = useProtocolVm();

const facts: EntryFacts = {
  kind: 'task',
  name: 'Work',
  prologue: 2,
  epilogue: 1,
  hasProse: true,
  argsText: '["a"]',
  runArgsText: '{}',
  untrustedArgNames: '["payload"]',
  itemText: null,
  runId: 'run-9',
  sectionName: 'Work',
  taskId: '0.1',
  promptName: 'p',
  promptTitle: 'P',
  promptDescription: 'd',
};

describe('the entry', () => {
  it('names the same fields in the same order on both sides', () => {
    expect(lua('return table.unpack(P.ENTRY_FIELDS)')).toEqual(ENTRY_FIELDS.map(snake));
  });

  it('reaches __rv_bind with every fact under its name, and Lua writes what the driver writes', () => {
    expect(fromPairs(lua('return to_pairs(P.decode_entry(...))', encodeEntry(facts)), ENTRY_FIELDS)).toEqual(snakeKeys(facts));
    expect(lua('return P.encode_entry(from_pairs(...))', toPairs(facts))).toEqual(encodeEntry(facts));
  });
});

describe('a store or clock effect', () => {
  it('crosses as its op and payload', () => {
    const values = lua(`return P.encode_effect('store.write', '{"path":"a.txt","text":"hi"}')`);
    expect(values[0]).toBe('effect');
    expect(decodeEffect(values.slice(1))).toEqual({ op: 'store.write', payloadText: '{"path":"a.txt","text":"hi"}' });
  });
});

const loopRound: RoundYield = {
  head: '{"config":{},"role":"writer","turn":2}',
  role: 'writer',
  turn: 2,
  tools: '[{"name":"web_search"}]',
  toolMap: '{"web_search":"web/search"}',
  fuse: true,
  oneOff: false,
  from: 3,
  count: 2,
  fusedRecords: false,
};

/** Encodes `round` in Lua, with `texts` as its changed records. */
function luaRound(round: RoundYield, texts: string[]): LuaScalar[] {
  return lua('local n = ...\nreturn P.encode_round(from_pairs(select(n + 2, ...)), { select(2, ...) }, n)', [texts.length, ...texts, ...toPairs(round)]);
}

/** Decodes a round's values (after 'effect') in Lua: its fields by name, and its texts. */
function luaDecodedRound(values: LuaScalar[]): { round: Record<string, LuaScalar>; texts: LuaScalar[] } {
  const body = `local round, texts = P.decode_round(...)
local out = table.pack(#texts, table.unpack(texts))
for _, v in ipairs({ to_pairs(round) }) do out[#out + 1] = v end
return table.unpack(out)`;
  const out = lua(body, values);
  const n = Number(out[0]);
  return { texts: out.slice(1, 1 + n), round: fromPairs(out.slice(1 + n), ROUND_FIELDS) };
}

describe('a model round', () => {
  const cases: [string, RoundYield, string[]][] = [
    ['a loop round whose tool list changed, its changed records after the fields', loopRound, ['{"role":"user"}', '{"role":"assistant"}']],
    ['a loop round whose tool list did not change (no list sent)', { ...loopRound, tools: null, toolMap: null, from: 5, count: 1 }, ['{"role":"user"}']],
    [
      'a one-off round over its own single record',
      { ...loopRound, tools: 'null', toolMap: null, fuse: false, oneOff: true, from: 1, count: 1 },
      ['{"content":"2+2?","role":"user"}'],
    ],
    [
      "a round after a fused one, naming the driver's records instead of sending them",
      { ...loopRound, tools: null, toolMap: null, fusedRecords: true, count: 3 },
      [],
    ],
  ];

  for (const [what, round, texts] of cases) {
    it(`reads back ${what}`, () => {
      const values = luaRound(round, texts);
      expect(values[0]).toBe('effect');
      const rest = values.slice(1);
      expect(decodeRound(rest)).toEqual(round);
      expect(rest.slice(ROUND_TEXTS_AT)).toEqual(texts);
      expect(encodeRound(round, texts)).toEqual(rest);
      expect(luaDecodedRound(rest)).toEqual({ round: snakeKeys(round), texts });
    });
  }

  it('sends no texts with a round that names the fused records, whatever the list holds', () => {
    const round = { ...loopRound, fusedRecords: true, count: 2 };
    expect(luaRound(round, ['{"stale":1}', '{"stale":2}']).slice(1 + ROUND_TEXTS_AT)).toEqual([]);
  });
});

/** A reply as Lua reads it, after the leaf's leading true and the answer's own (ok): every field by name. */
function luaReply(values: LuaScalar[]): Record<string, LuaScalar> {
  const body = `local values = table.pack(true, ...)
local reply = P.decode_reply(values, 2)
local named = { content = reply.content, count = reply.count, record = reply.record, fused = reply.fused }
for k = 1, reply.count do
  named['call' .. k .. '_id'], named['call' .. k .. '_name'], named['call' .. k .. '_arguments_json'] = P.reply_call(reply, k)
  if reply.fused then named['result' .. k .. '_text'], named['result' .. k .. '_record'] = P.fused_result(reply, k) end
end
return to_pairs(named)`;
  return fromPairs(lua(body, values), ['record']);
}

describe("a model round's answer", () => {
  const calls: ReplyCall[] = [
    { id: 'c1', name: 'web_search', argumentsJson: '{"query":"a"}' },
    { id: 'c2', name: 'web_fetch', argumentsJson: '{}' },
  ];
  const named = (reply: { content: string; record: string | null; fused: boolean }, replyCalls: ReplyCall[]) => ({
    ...reply,
    count: replyCalls.length,
    ...Object.fromEntries(
      replyCalls.flatMap((call, k) =>
        [`call${k + 1}_id`, `call${k + 1}_name`, `call${k + 1}_arguments_json`].map((key, i) => [key, [call.id, call.name, call.argumentsJson][i]]),
      ),
    ),
  });

  it('reaches Lua as content, calls and the assistant record of a loop round', () => {
    const values = encodeReply('thinking', calls, '{"role":"assistant"}');
    expect(replyCallCount(values)).toBe(2);
    expect([replyCall(values, 0), replyCall(values, 1)]).toEqual(calls);
    expect(luaReply(values)).toEqual(named({ content: 'thinking', record: '{"role":"assistant"}', fused: false }, calls));
  });

  it('reaches Lua as the bare content of a one-off round, with no record', () => {
    expect(luaReply(encodeReply('4', [], null))).toEqual(named({ content: '4', record: null, fused: false }, []));
  });

  it("carries a fused round's results after the reply, and the records the driver keeps for the next round", () => {
    const values = encodeReply('thinking', calls, '{"role":"assistant"}');
    const results: BatchAnswer[] = [
      { ok: true, text: 'out 1', record: '{"tool":1}' },
      { ok: false, text: 'failed 2', record: '{"tool":2}' },
    ];
    values.push(...encodeBatchAnswers(results));
    expect(fusedRecordsOf(values).texts).toEqual(['{"role":"assistant"}', '{"tool":1}', '{"tool":2}']);
    expect(luaReply(values)).toEqual({
      ...named({ content: 'thinking', record: '{"role":"assistant"}', fused: true }, calls),
      result1_text: 'out 1',
      result1_record: '{"tool":1}',
      result2_text: 'failed 2',
      result2_record: '{"tool":2}',
    });
  });

  it("gives a fused round's records as values equal, key for key, to what JSON.parse makes of their texts", () => {
    const madeCalls = [
      { id: 'call_1', name: 'grab_grab', argumentsJson: '{"value":"x"}' },
      { id: 'call "2"', name: 'web_fetch', argumentsJson: '{"__proto__":{"polluted":true},"headers":{"a":"1"},"url":"https://e.x/?q=\\"é\\"\\n"}' },
    ];
    const texts = ['out "1"\n\u0001', '<untrusted>é</untrusted>'];
    // As the driver writes them (protocol-records.ts).
    const assistant = assistantRecordText('thinking', madeCalls);
    const toolRecords = madeCalls.map((c, k) => toolRecordText(texts[k]!, c.id));
    const values = encodeReply('thinking', madeCalls, assistant);
    values.push(...encodeBatchAnswers(madeCalls.map((_, k) => ({ ok: true, text: texts[k]!, record: toolRecords[k]! }))));
    const made = fusedRecordsOf(values);
    expect(made.texts).toEqual([assistant, ...toolRecords]);
    expect(made.values).toEqual(made.texts.map((text) => JSON.parse(text)));
    expect(made.values.map((value) => JSON.stringify(value))).toEqual(made.texts);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reaches Lua as a failure: its kind and message', () => {
    expect(lua('local values = table.pack(true, ...)\nreturn values[2], P.failure(values, 1)', failure('context', 'too long'))).toEqual([
      false,
      'context',
      'too long',
    ]);
  });
});

describe('a tool-call batch', () => {
  const calls: BatchCall[] = [
    { tool: 'web/search', name: 'web_search', args: { query: 'lua' }, caller: 'model', callId: 'c1', turn: 1 },
    { tool: 'web/fetch', name: 'fetch', args: [], caller: 'script', callId: null, turn: 0 },
  ];
  /** A call's fields as the Lua runtime holds them (its arguments as JSON text), as (name, value) pairs. */
  const luaCall = (call: BatchCall) =>
    toPairs({ tool: call.tool, name: call.name, argsJson: JSON.stringify(call.args), caller: call.caller, callId: call.callId, turn: call.turn });

  it('reads back every call Lua sends, a script call without a call id among them', () => {
    const width = 2 * BATCH_CALL_FIELDS.length;
    const body = `local count = ...
local values = table.pack(...)
local calls = {}
for k = 1, count do
  local first = 2 + (k - 1) * ${width}
  calls[k] = from_pairs(table.unpack(values, first, first + ${width} - 1))
end
return P.encode_batch(calls)`;
    const values = lua(body, [calls.length, ...calls.flatMap(luaCall)]);
    expect(values[0]).toBe('batch');
    expect(decodeBatch(values.slice(1))).toEqual(calls);
    expect(encodeBatch(calls)).toEqual(values.slice(1));
  });

  it('names the same call fields on both sides', () => {
    expect(lua('return table.unpack(P.BATCH_CALL_FIELDS)')).toEqual(BATCH_CALL_FIELDS.map((field) => (field === 'args' ? 'args_json' : snake(field))));
  });

  it("reaches Lua as each call's ok, text and record, in call order", () => {
    const answers: BatchAnswer[] = [
      { ok: true, text: 'found', record: '{"role":"tool"}' },
      { ok: false, text: 'no such page', record: null },
    ];
    const body = `local values = table.pack(...)
local out = {}
for k, a in ipairs(P.decode_batch_answers(values, 0, 2)) do out['ok' .. k], out['text' .. k], out['record' .. k] = a.ok, a.text, a.record end
return to_pairs(out)`;
    expect(fromPairs(lua(body, encodeBatchAnswers(answers)), ['record2'])).toEqual({
      ok1: true,
      text1: 'found',
      record1: '{"role":"tool"}',
      ok2: false,
      text2: 'no such page',
      record2: null,
    });
  });
});

describe('an Engine operation and the entry end', () => {
  const requests: [string, LuaScalar[], EngineRequest][] = [
    ['P.encode_call(...)', ['Summary', '["a",1]'], { op: 'call', section: 'Summary', argsJson: '["a",1]' }],
    ['P.encode_await(...)', ['["0.1","0.2"]', true], { op: 'await', idsJson: '["0.1","0.2"]', forModel: true }],
    ['P.encode_await(...)', ['["0.1"]', false], { op: 'await', idsJson: '["0.1"]', forModel: false }],
    ['P.encode_fanout(...)', ['Arm', '[1,2,3]'], { op: 'fanout', section: 'Arm', itemsJson: '[1,2,3]' }],
    ['P.encode_jump(...)', ['Done'], { op: 'jump', section: 'Done' }],
    ['P.encode_pause()', [], { op: 'pause' }],
    ['P.encode_kept()', [], { op: 'kept' }],
  ];
  for (const [call, args, request] of requests) {
    it(`reads ${call} as ${JSON.stringify(request)}, and writes it back the same`, () => {
      const values = lua(`return ${call}`, args);
      expect(decodeRequest(values)).toEqual(request);
      expect(encodeRequest(request)).toEqual(values);
    });
  }

  it('refuses an operation it does not know, naming it', () => {
    expect(() => decodeRequest(['teleport', 'Somewhere'])).toThrow('the Lua runtime asked for an unknown operation teleport');
  });

  const ends: [string, LuaScalar[], EntryEnd][] = [
    ['P.end_return(...)', ['42'], { end: 'return', text: '42' }],
    ['P.end_fall()', [], { end: 'fall' }],
    [
      'P.end_error(...)',
      ['tool', 'no such page', 'stack traceback:\n\t[string "Main"]:3'],
      { end: 'error', kind: 'tool', message: 'no such page', traceback: 'stack traceback:\n\t[string "Main"]:3' },
    ],
    [
      'P.end_error(...)',
      ['lua', 'attempt to index a nil value', null],
      { end: 'error', kind: 'lua', message: 'attempt to index a nil value', traceback: null },
    ],
    ['P.end_stop()', [], { end: 'stop' }],
  ];
  for (const [call, args, entryEnd] of ends) {
    it(`reads ${call} as the entry's end ${entryEnd.end}, and writes it back the same`, () => {
      const values = lua(`return ${call}`, args);
      expect(decodeEnd(values)).toEqual(entryEnd);
      expect(encodeEnd(entryEnd).slice(0, values.length)).toEqual(values);
    });
  }
});

describe("an await's answer", () => {
  const outcomes: TaskOutcome[] = [
    { id: '0.0', status: 'completed', result: 'done "well"', error: null },
    { id: '0.1', status: 'completed', result: null, error: null },
    { id: '0.2', status: 'failed', result: null, error: { kind: 'tool', message: 'no such page' } },
    { id: '0.3', status: 'cancelled', result: null, error: { kind: 'cancelled', message: 'the task was cancelled' } },
  ];

  it("reaches tasks.lua as each task's outcome by name, and whether any had seen untrusted text", () => {
    const body = `local text, tainted = ...
local out = { tostring(tainted) }
for _, o in ipairs(J.decode(text)) do
  out[#out + 1] = table.concat({ o.id, o.status, tostring(o.result), tostring(o.kind), tostring(o.message) }, '|')
end
return table.unpack(out)`;
    for (const tainted of [true, false]) {
      const read = lua(body, awaitAnswer(outcomes, tainted)).map((value) => String(value).replace(/userdata: 0x[0-9a-f]+|table: 0x[0-9a-f]+/, 'null'));
      expect(read).toEqual([
        String(tainted),
        '0.0|completed|done "well"|nil|nil',
        '0.1|completed|null|nil|nil',
        '0.2|failed|nil|tool|no such page',
        '0.3|cancelled|nil|cancelled|the task was cancelled',
      ]);
    }
  });
});
