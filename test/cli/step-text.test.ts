import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { stepTextPrinter } from '../../src/cli/step-text.ts';
import type { RunEvent } from '../../src/engine/events.ts';

function printer(asEvents = false) {
  let err = '';
  const io = { out: () => undefined, err: (text: string) => void (err += text), stdin: new PassThrough(), stdinIsTerminal: false, env: {} };
  return { print: stepTextPrinter(io, asEvents), err: () => err };
}

const event = (type: string, task = '0'): RunEvent => ({ seq: 9, type, section: 'A', task, turn: 1 });
const delta = (step: number, task: string, text: string) => ({ type: 'model_delta' as const, step, task, text });

describe("runvil run's printer of a model step's text", () => {
  it("writes a step's pieces on one line, ended by the step's next event", () => {
    const { print, err } = printer();
    print.delta(delta(3, '0', 'Hel'));
    print.delta(delta(3, '0', 'lo'));
    print.event(event('model_turn_completed'));
    print.event(event('run_completed'));
    expect(err()).toBe('Hello\n');
  });

  it("names a task's text, and starts a new line when another step's text comes between", () => {
    const { print, err } = printer();
    print.delta(delta(4, '0.0', 'one'));
    print.delta(delta(6, '0.1', 'two'));
    print.delta(delta(4, '0.0', ' more'));
    print.end();
    expect(err()).toBe('[task 0.0] one\n[task 0.1] two\n[task 0.0]  more\n');
  });

  it('says when the stream broke off and the model was asked again', () => {
    const { print, err } = printer();
    print.delta(delta(3, '0', 'Hel'));
    print.delta({ ...delta(3, '0', ''), restart: true });
    print.delta(delta(3, '0', 'Hello'));
    print.end();
    expect(err()).toBe('Hel\n[the stream broke off; the model was asked again]\nHello\n');
  });

  it('with --events, writes each piece as a model_delta JSON line', () => {
    const { print, err } = printer(true);
    print.delta(delta(3, '0', 'Hi'));
    print.event(event('model_turn_completed'));
    expect(err()).toBe('{"type":"model_delta","step":3,"task":"0","text":"Hi"}\n');
  });
});
