/**
 * The layouts of the values that cross between the section driver and the Lua runtime
 * (src/engine/entry/protocol.ts): each decodes what its encoder wrote, field for field, and
 * the entry's fields are the ones main.lua's __rv_bind reads, in the same order.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeBatch,
  decodeRound,
  encodeBatch,
  encodeEntry,
  encodeReply,
  encodeRound,
  ENTRY_FIELDS,
  madeRecordTexts,
  replyCall,
  replyCallCount,
  ROUND_TEXTS_AT,
  type BatchCall,
  type EntryFacts,
  type RoundYield,
} from '../../src/engine/entry/protocol.ts';
import { LUA_SOURCES } from '../../src/engine/lua/runtime/sources.generated.ts';

const loopRound: RoundYield = {
  head: '{"config":{},"role":"writer","turn":',
  role: 'writer',
  turn: 2,
  tools: '[{"name":"web_search"}]',
  toolMap: '{"web_search":"web/search"}',
  fuse: true,
  oneOff: false,
  from: 3,
  count: 2,
  made: false,
};

describe('the entry layout', () => {
  it('hands __rv_bind the fields in the order main.lua names them', () => {
    const bind = /function __rv_bind\(\)[^]*?local ([^=]+)= L\.entry\(\)/.exec(LUA_SOURCES.main);
    const luaNames = bind![1]!.split(',').map((name) => name.trim());
    const snake = ENTRY_FIELDS.map((field) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`));
    expect(luaNames).toEqual(snake);
  });

  it('writes each fact at its field position', () => {
    const facts: EntryFacts = {
      kind: 'task',
      name: 'Work',
      prologue: 2,
      epilogue: 1,
      hasProse: true,
      argsText: '["a"]',
      runArgsText: '{}',
      itemText: null,
      runId: 'run-9',
      sectionName: 'Work',
      taskId: '0.1',
      promptName: 'p',
      promptTitle: 'P',
      promptDescription: 'd',
    };
    const values = encodeEntry(facts);
    expect(values).toHaveLength(14);
    ENTRY_FIELDS.forEach((field, index) => expect(values[index]).toBe(facts[field]));
  });
});

describe('the model round layout', () => {
  it('reads back a loop round with its changed record texts after the fields', () => {
    const values = encodeRound(loopRound, ['{"role":"user"}', '{"role":"assistant"}']);
    expect(decodeRound(values)).toEqual(loopRound);
    expect(values.slice(ROUND_TEXTS_AT)).toEqual(['{"role":"user"}', '{"role":"assistant"}']);
  });

  it('reads back a one-off round (from 0 on the wire) as starting at its single record', () => {
    const oneOff: RoundYield = { ...loopRound, toolMap: null, fuse: false, oneOff: true, from: 1, count: 1 };
    const values = encodeRound(oneOff, ['{"role":"user"}']);
    expect(values[7]).toBe(0);
    expect(decodeRound(values)).toEqual(oneOff);
  });

  it('reads back the records the driver made (a negative count on the wire), and a tool list that did not change', () => {
    const made: RoundYield = { ...loopRound, tools: null, toolMap: null, made: true, count: 3 };
    const values = encodeRound(made, []);
    expect(values[8]).toBe(-3);
    expect(decodeRound(values)).toEqual(made);
  });

  it('lays a reply out as content, calls, assistant record, then the fused batch answers, whose records the driver keeps', () => {
    const calls = [
      { id: 'c1', name: 'web_search', argumentsJson: '{"query":"a"}' },
      { id: 'c2', name: 'web_fetch', argumentsJson: '{}' },
    ];
    const values = encodeReply('thinking', calls, '{"role":"assistant"}');
    expect(replyCallCount(values)).toBe(2);
    expect([replyCall(values, 0), replyCall(values, 1)]).toEqual(calls);
    values.push(true, 'out 1', '{"tool":1}', false, 'out 2', '{"tool":2}');
    expect(madeRecordTexts(values)).toEqual(['{"role":"assistant"}', '{"tool":1}', '{"tool":2}']);
  });
});

describe('the tool-call batch layout', () => {
  it('reads back every call, a script call without a call id among them', () => {
    const calls: BatchCall[] = [
      { tool: 'web/search', name: 'web_search', args: { query: 'lua' }, caller: 'model', callId: 'c1', turn: 1 },
      { tool: 'web/fetch', name: 'fetch', args: [], caller: 'script', callId: null, turn: 0 },
    ];
    const values = encodeBatch(calls);
    expect(values).toHaveLength(1 + 6 * calls.length);
    expect(decodeBatch(values)).toEqual(calls);
  });
});
