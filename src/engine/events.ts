/**
 * Run events: the JSON records a run reports, in order, to whoever watches it.
 */
import type { Json } from '../prompt/types.ts';

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

/** The run's event stream: numbers events and hands each to the listener as it happens. */
export class EventLog {
  private readonly events: RunEvent[] = [];

  constructor(private readonly listener?: (event: RunEvent) => void) {}

  /** Records an event of `type` at `place` with extra fields. */
  emit(type: string, place: EventPlace, fields: Record<string, Json | undefined> = {}): RunEvent {
    const event: RunEvent = { seq: this.events.length + 1, type, ...place, ...fields };
    this.events.push(event);
    this.listener?.(event);
    return event;
  }

  /** Every event so far. */
  all(): RunEvent[] {
    return this.events.slice();
  }
}
