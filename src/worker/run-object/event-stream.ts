/**
 * A run's events as server-sent events: the stored history after the client's last seen
 * event (`Last-Event-ID` or `?after=`), then live events as they are appended, until the
 * run ends. Each event is one `data:` line of JSON with `id:` its seq. A client that
 * reconnects after the end gets 204, which tells an EventSource to stop.
 */
import type { StreamEvent } from './run-view.ts';

/** What the stream reads from a run. */
export interface EventSourceOfRun {
  events(after: number): StreamEvent[];
  ended(): boolean;
  /** Calls `listener` after every change of the run; answers the unsubscribe. */
  subscribe(listener: () => void): () => void;
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
export function eventStream(run: EventSourceOfRun, after: number): Response {
  if (run.ended() && run.events(after).length === 0) return new Response(null, { status: 204 });
  let last = after;
  let unsubscribe = () => {};
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const close = () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        clearInterval(heartbeat);
        controller.close();
      };
      const flush = () => {
        if (closed) return;
        for (const event of run.events(last)) {
          controller.enqueue(encoder.encode(`id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`));
          last = event.seq;
        }
        if (run.ended()) close();
      };
      unsubscribe = run.subscribe(() => {
        try {
          flush();
        } catch {
          close();
        }
      });
      heartbeat = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(': keep-alive\n\n'));
      }, HEARTBEAT_MS);
      flush();
    },
    cancel() {
      closed = true;
      unsubscribe();
      clearInterval(heartbeat);
    },
  });
  return new Response(stream, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}
