/**
 * A run's events as server-sent events: the stored history after the client's last seen
 * event (`Last-Event-ID` or `?after=`), then live events as they are appended, until the
 * run ends. Each event is one `data:` line of JSON with `id:` its seq. A client that
 * reconnects after the end gets 204, which tells an EventSource to stop.
 *
 * Between them go the model steps' text as it arrives (`model_delta`, model-deltas.ts), with
 * no `id:`: they are no stored event, so a reconnecting client's `Last-Event-ID` stays the
 * last stored event it read. Such a client gets, after the events it missed, each step in
 * flight's text so far as one delta, then the rest; after a step, only its stored events.
 * A delta goes out after every event stored before it, so it never precedes its step's
 * `model_turn_started`.
 */
import type { ModelDelta } from '../../host/harness.ts';
import type { StreamEvent } from './run-view.ts';

/** What the stream reads from a run. */
export interface EventSourceOfRun {
  events(after: number): StreamEvent[];
  /** The seq of the last event stored (cheap: a delta need not read the stream when nothing is new). */
  lastSeq?: () => number;
  ended(): boolean;
  /** Calls `listener` after every change of the run; answers the unsubscribe. */
  subscribe(listener: () => void): () => void;
  /** The model steps' text: each step in flight's so far, and each delta as it arrives. */
  deltas?: { inFlight(): ModelDelta[]; watch(watcher: (delta: ModelDelta) => void): () => void };
  /** True while the run waits on answers (`run_suspended`): a stream that ends there (`?until=suspended`) closes. */
  suspended?: () => boolean;
}

/** How long a stream lasts: to the run's end, or to its end or suspension (a streamed start's response). */
export type StreamUntil = 'ended' | 'suspended';

/** Which end the object's stream request asks for (`?until=suspended`). */
export function streamUntil(request: Request): StreamUntil {
  return new URL(request.url).searchParams.get('until') === 'suspended' ? 'suspended' : 'ended';
}

/** How often a comment line keeps an idle connection open. */
export const HEARTBEAT_MS = 15_000;

const encoder = new TextEncoder();

/** The event with seq after which the client wants the stream. */
export function resumePoint(request: Request): number {
  const url = new URL(request.url);
  const given = request.headers.get('last-event-id') ?? url.searchParams.get('after') ?? '0';
  const after = Number(given);
  return Number.isSafeInteger(after) && after >= 0 ? after : 0;
}

/** The SSE response for a run, from the event after `after`. */
export function eventStream(run: EventSourceOfRun, after: number, until: StreamUntil = 'ended'): Response {
  if (run.ended() && run.events(after).length === 0) return new Response(null, { status: 204 });
  const over = () => run.ended() || (until === 'suspended' && run.suspended?.() === true);
  let last = after;
  let unsubscribe = () => {};
  let unwatch = () => {};
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const close = () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        unwatch();
        clearInterval(heartbeat);
        controller.close();
      };
      const send = (delta: ModelDelta) => controller.enqueue(encoder.encode(`data: ${JSON.stringify(delta)}\n\n`));
      const flush = () => {
        if (closed) return;
        for (const event of run.events(last)) {
          controller.enqueue(encoder.encode(`id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`));
          last = event.seq;
        }
        if (over()) close();
      };
      unsubscribe = run.subscribe(() => {
        try {
          flush();
        } catch {
          close();
        }
      });
      unwatch =
        run.deltas?.watch((delta) => {
          try {
            if (!run.lastSeq || run.lastSeq() > last) flush();
            if (!closed) send(delta);
          } catch {
            close();
          }
        }) ?? unwatch;
      heartbeat = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(': keep-alive\n\n'));
      }, HEARTBEAT_MS);
      flush();
      if (!closed) for (const delta of run.deltas?.inFlight() ?? []) send(delta);
    },
    cancel() {
      closed = true;
      unsubscribe();
      unwatch();
      clearInterval(heartbeat);
    },
  });
  return new Response(stream, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}
