/**
 * The run's event log: numbering, the events a replay only counts, and fields whose names
 * came from data (a prompt's event, a JSON text) staying ordinary keys.
 */
import { describe, expect, it } from 'vitest';
import { EventLog, type RunEvent } from '../../src/engine/events.ts';

const place = { section: 'Main', task: '0', turn: 1 };

describe('the event log', () => {
  it('numbers events in order and hands each to the listener as it is made', () => {
    const heard: RunEvent[] = [];
    const log = new EventLog((event) => heard.push(event));
    log.emit('log', place, { message: 'one' });
    log.emit('log', place, () => ({ message: 'two' }));
    expect(heard.map((event) => [event.seq, event.message])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
    expect(log.all()).toEqual(heard);
  });

  it('only counts the events the host already holds, without making their fields', () => {
    let made = 0;
    const log = new EventLog(undefined, 2);
    for (let i = 0; i < 3; i++) log.emit('log', place, () => ({ message: String(++made) }));
    expect(made).toBe(1);
    expect(log.all()).toEqual([{ seq: 3, type: 'log', ...place, message: '1' }]);
  });

  for (const name of ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty']) {
    it(`keeps a field named ${name} as an ordinary key of the event, its prototype untouched`, () => {
      const log = new EventLog();
      const fields = JSON.parse(`{"${name}": {"polluted": true}}`) as Record<string, never>;
      log.emit('custom', place, fields);
      const [event] = log.all();
      expect(Object.getPrototypeOf(event)).toBe(Object.prototype);
      expect(Object.hasOwn(event!, name)).toBe(true);
      expect(JSON.parse(JSON.stringify(event))[name]).toEqual({ polluted: true });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  }
});
