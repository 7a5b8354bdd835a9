/**
 * The text so far of each model step in flight, for whoever starts watching a run in the
 * middle of a step (an event stream's client that reconnects): it gets each step's text so
 * far as one delta, then the rest as it comes, and after the step only the events, whose
 * `model_turn_completed` holds the whole reply. Deltas are never journaled (harness.ts's
 * ModelDelta), so this is the only place the text of a step in flight is kept.
 */
import type { RunEvent } from '../engine/events.ts';
import type { ModelDelta } from './harness.ts';

/** The steps in flight of one run, one at most per task (a chain waits on its round). */
export class StepTexts {
  private readonly steps = new Map<string, { step: number; text: string }>();

  /** Takes a delta as the Host reports it: its text added to its step's, or (a restart) the step's text cleared. */
  take(delta: ModelDelta): void {
    const held = this.steps.get(delta.task);
    if (!held || held.step !== delta.step) this.steps.set(delta.task, { step: delta.step, text: delta.text });
    else held.text = delta.restart ? delta.text : held.text + delta.text;
  }

  /**
   * Takes an event of the run: any event of a task after its step started ends the step (its
   * `model_turn_completed`, or whatever follows a failed round); the run's end ends them all.
   */
  event(event: RunEvent): void {
    if (event.type === 'run_completed' || event.type === 'run_failed') {
      this.steps.clear();
      return;
    }
    const held = this.steps.get(event.task);
    if (held && event.seq > held.step) this.steps.delete(event.task);
  }

  /** One delta per step in flight, with its text so far (none for a step that has no text yet). */
  inFlight(): ModelDelta[] {
    const out: ModelDelta[] = [];
    for (const [task, { step, text }] of this.steps) if (text !== '') out.push({ type: 'model_delta', step, task, text });
    return out;
  }
}
