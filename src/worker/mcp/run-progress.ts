/**
 * Progress of a call's run for a caller that sent a progress token: each section entered,
 * each tool call and each ask of the run (its event stream, run-object/event-stream.ts,
 * from its start) becomes a `notifications/progress` on the call, until the call answers.
 */
import type { Env } from '../env.ts';
import { runObject } from '../run-object/run-ids.ts';
import { isFinal, type ObjectView, type StreamEvent } from '../run-object/run-view.ts';

/** Sends one progress message (the count of messages so far is the progress). */
export type ProgressSender = (progress: number, message: string) => Promise<void>;

/** What a run's event says to a caller watching its progress, or null for events it need not hear. */
export function progressMessage(event: StreamEvent): string | null {
  switch (event.type) {
    case 'section_entered':
      return `section ${String(event.section ?? '')}`;
    case 'tool_call_succeeded':
    case 'tool_call_failed':
      return `tool call ${String(event.tool ?? event.alias ?? '')}${event.type === 'tool_call_failed' ? ' (failed)' : ''}`;
    case 'ask_pending':
      return `asks: ${String(event.question ?? '')}`;
    default:
      return null;
  }
}

/** Ends following a run once the run as the call answers it (`view`) has been told: its pending ask asked, or its end. */
export type StopFollowing = (view: ObjectView | null) => Promise<void>;

/** How long a stop waits for the events that explain the view to be read (they are stored already, so this is a bound for a broken stream). */
const DRAIN_BOUND_MS = 2_000;

/**
 * Follows run `runId`'s events, sending each progress message, until stopped. The stop
 * first lets the follower read up to what explains the answer (the pending ask's
 * `ask_pending`, or the run's end, where its stream closes), so the caller hears every
 * step before the result, then cancels the stream.
 */
export function followProgress(env: Env, runId: string, send: ProgressSender): StopFollowing {
  let aborted = false;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  const asked = new Set<string>();
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((waiter) => waiter());
  const finished = (async () => {
    const response = await runObject(env, runId).fetch(new Request('https://run/events'));
    if (!response.body || aborted) return void response.body?.cancel();
    reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let progress = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done || aborted) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((line) => line.startsWith('data: '));
        if (!data) continue;
        const event = JSON.parse(data.slice(6)) as StreamEvent;
        const message = progressMessage(event);
        if (message !== null && !aborted) await send(++progress, message);
        if (event.type === 'ask_pending' && typeof event.ask_id === 'string') asked.add(event.ask_id);
        wake();
      }
    }
  })()
    // Progress is a courtesy: a stream that breaks leaves the call to answer as it would.
    .catch(() => {})
    .finally(wake);
  let streamDone = false;
  void finished.then(() => (streamDone = true));

  return async (view) => {
    const explained = (): boolean => {
      if (streamDone || view === null) return true;
      // An ended run's stream closes once every event is sent; a suspended one has asked its pending asks.
      if (isFinal(view.status)) return false;
      const asks = view.pending.filter((entry) => entry.kind === 'ask');
      return asks.length === 0 || asks.every((ask) => asked.has(ask.ask_id));
    };
    await new Promise<void>((resolve) => {
      const bound = setTimeout(resolve, DRAIN_BOUND_MS);
      const check = () => {
        if (!explained()) return;
        clearTimeout(bound);
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
    aborted = true;
    void (reader as ReadableStreamDefaultReader<Uint8Array> | null)?.cancel().catch(() => {});
  };
}
