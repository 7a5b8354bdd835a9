import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/events.ts';
import { StepTexts } from '../../src/host/step-texts.ts';

const delta = (step: number, task: string, text: string, restart = false) => ({
  type: 'model_delta' as const,
  step,
  task,
  text,
  ...(restart ? { restart: true as const } : {}),
});
const event = (seq: number, type: string, task = '0'): RunEvent => ({ seq, type, section: 'A', task, turn: 1 });

describe('the text so far of the model steps in flight', () => {
  it("is each step's pieces joined, as one delta a watcher joining now gets", () => {
    const texts = new StepTexts();
    texts.event(event(4, 'model_turn_started'));
    texts.take(delta(4, '0', 'Hel'));
    texts.take(delta(4, '0', 'lo'));
    expect(texts.inFlight()).toEqual([{ type: 'model_delta', step: 4, task: '0', text: 'Hello' }]);
  });

  it('keeps one step per task, and tasks apart', () => {
    const texts = new StepTexts();
    texts.take(delta(4, '0.0', 'one'));
    texts.take(delta(5, '0.1', 'two'));
    texts.take(delta(4, '0.0', ' more'));
    expect(texts.inFlight()).toEqual([
      { type: 'model_delta', step: 4, task: '0.0', text: 'one more' },
      { type: 'model_delta', step: 5, task: '0.1', text: 'two' },
    ]);
  });

  it('forgets the text before a restart: the provider asked again', () => {
    const texts = new StepTexts();
    texts.take(delta(4, '0', 'Hel'));
    texts.take(delta(4, '0', '', true));
    expect(texts.inFlight()).toEqual([]);
    texts.take(delta(4, '0', 'Hi'));
    expect(texts.inFlight()).toEqual([{ type: 'model_delta', step: 4, task: '0', text: 'Hi' }]);
  });

  it("ends a step at its task's next event (its completion, or what follows a failed round), and all at the run's end", () => {
    const texts = new StepTexts();
    texts.take(delta(4, '0.0', 'a'));
    texts.take(delta(5, '0.1', 'b'));
    texts.event(event(6, 'model_turn_completed', '0.0'));
    expect(texts.inFlight().map((d) => d.task)).toEqual(['0.1']);
    texts.event(event(7, 'tool_call_started', '0'));
    expect(texts.inFlight().map((d) => d.task)).toEqual(['0.1']);
    texts.event(event(8, 'run_failed', '0'));
    expect(texts.inFlight()).toEqual([]);
  });

  it("a step's next round starts afresh", () => {
    const texts = new StepTexts();
    texts.take(delta(4, '0', 'first'));
    texts.event(event(5, 'model_turn_completed'));
    texts.take(delta(8, '0', 'second'));
    expect(texts.inFlight()).toEqual([{ type: 'model_delta', step: 8, task: '0', text: 'second' }]);
  });
});
