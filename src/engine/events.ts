/**
 * Run events: the JSON records a run reports, in order, to whoever watches it.
 */
import type { Json } from '../json/json.ts';
import type { RunMeter } from './run-meter.ts';

/** One event: `seq` orders them; `section`, `task` and `turn` say where it happened. */
export interface RunEvent {
  seq: number;
  type: string;
  section: string | null;
  task: string;
  turn: number;
  [field: string]: Json | undefined;
}

/** Where an event happens: the section entry's name, its chain, its model round. */
export interface EventPlace {
  section: string | null;
  task: string;
  turn: number;
}

/** An event's fields beyond its type and place. */
export type EventFields = Record<string, Json | undefined>;

/**
 * The run's event stream: numbers events and hands each to the listener as it happens. The
 * first `known` events are only counted: a host that already holds them from an earlier
 * execution of the run (a replay emits them again) needs neither them nor their cost.
 */
export class EventLog {
  private readonly events: RunEvent[] = [];
  private count = 0;

  constructor(
    private readonly listener?: (event: RunEvent) => void,
    private readonly known = 0,
  ) {}

  /**
   * The run's meter (run-meter.ts), which counts each event against the run's caps: one past
   * a cap is dropped. The run's last event (`run_failed`, `run_completed`) is never dropped.
   */
  meter: RunMeter | undefined;

  /**
   * Records an event of `type` at `place` with extra fields: an object, or a function that
   * makes them, called only when the event is made (not for a known one a replay counts).
   */
  emit(type: string, place: EventPlace, fields: EventFields | (() => EventFields) = {}): void {
    const final = type === 'run_failed' || type === 'run_completed';
    if (final) this.meter = undefined;
    const seq = ++this.count;
    if (seq <= this.known) {
      this.meter?.event(seq);
      return;
    }
    // The place's fields written out and one spread (which defines keys, so `__proto__` is an
    // ordinary one): every tool round makes five events, and a fork replays them all.
    const extra = typeof fields === 'function' ? fields() : fields;
    const event: RunEvent = { seq, type, section: place.section, task: place.task, turn: place.turn, ...extra };
    if (this.meter && !this.meter.event(seq, event)) {
      this.count--;
      return;
    }
    this.events.push(event);
    this.listener?.(event);
  }

  /** The seq of the last event made or counted (0 before the first). */
  get last(): number {
    return this.count;
  }

  /** Every event so far, after the known ones. */
  all(): RunEvent[] {
    return this.events.slice();
  }
}
