/**
 * A run's model text as it arrives, for its event stream's watchers: the Host's deltas
 * (harness.ts's ModelDelta) renumbered to the stream, the text so far of each step in flight
 * (StepTexts) for a watcher that joins mid-step, and the watchers told of each delta. Nothing
 * here is stored: deltas are never journaled, and a replay, answered from the journal, makes
 * none.
 *
 * A delta's `step` is the Engine's seq of the round's `model_turn_started`; the stream numbers
 * its events itself (it holds the run object's own events too), so the step is sent as the
 * stream's seq of that event. A round whose `model_turn_started` this object did not store
 * was started by an execution that died mid-round (a restart, an eviction): the replay sends
 * it again, and its first delta is a restart, so a watcher drops the text the lost attempt
 * sent.
 */
import type { RunEvent } from '../../engine/events.ts';
import type { ModelDelta } from '../../host/harness.ts';
import { StepTexts } from '../../host/step-texts.ts';
import type { StreamEvent } from './run-view.ts';

/** Told each delta as it goes on the stream. */
export type DeltaWatcher = (delta: ModelDelta) => void;

/** The model deltas of one run object. */
export class ModelDeltas {
  private readonly texts = new StepTexts();
  private readonly watchers = new Set<DeltaWatcher>();
  /** Each task's round in flight: the Engine's seq of its model_turn_started and the stream's. */
  private readonly steps = new Map<string, { engine: number; stream: number }>();

  /** `storedStep(task)`: the stream's seq of the task's last stored model_turn_started (for a round this object did not see start). */
  constructor(private readonly storedStep: (task: string) => number | null) {}

  /** Takes an event as the stream stores it: any event of a task after its step started ends the step, the run's end every step. */
  event(event: StreamEvent): void {
    if (typeof event.task === 'string' || event.type === 'run_completed' || event.type === 'run_failed') this.texts.event(event as unknown as RunEvent);
  }

  /** A task's round started: the Engine's seq of its model_turn_started, stored as the stream's `streamSeq`. */
  started(task: string, engineSeq: number, streamSeq: number): void {
    this.steps.set(task, { engine: engineSeq, stream: streamSeq });
  }

  /** Takes a delta from the Host, and tells the watchers. */
  take(delta: ModelDelta): void {
    let step = this.steps.get(delta.task);
    if (!step || step.engine !== delta.step) {
      const stream = this.storedStep(delta.task);
      if (stream === null) return;
      step = { engine: delta.step, stream };
      this.steps.set(delta.task, step);
      // The round started in an execution that is gone: its text so far is void.
      this.tell({ type: 'model_delta', step: stream, task: delta.task, text: '', restart: true });
    }
    this.tell(delta.restart ? { ...delta, step: step.stream } : { type: 'model_delta', step: step.stream, task: delta.task, text: delta.text });
  }

  /**
   * The text so far of each step in flight, one delta each, for a watcher that joins now. It
   * carries `restart: true`: a watcher that had part of the text (it reconnects) replaces it.
   */
  inFlight(): ModelDelta[] {
    return this.texts.inFlight().map((delta) => ({ ...delta, restart: true }));
  }

  /** Tells `watcher` every delta from now on; answers the unsubscribe. */
  watch(watcher: DeltaWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private tell(delta: ModelDelta): void {
    this.texts.take(delta);
    for (const watcher of [...this.watchers]) watcher(delta);
  }
}
