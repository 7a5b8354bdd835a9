/**
 * The answer to a start with `?stream=1` (`POST /prompts/:name/runs`, `POST /hooks/:name`):
 * the run's event stream from its start, model text as it arrives included, to its end. A
 * run that suspends ends the response there, after its `run_suspended`, with one last
 * message naming what it waits on: `{"type": "run_pending", "run_id", "status", "pending"}`,
 * each pending ask as `GET /runs/:id` shows it (its answer URL and token). Whoever answers
 * follows the run on `GET /runs/:id/events` from the last `id:` read.
 */
import type { Context } from 'hono';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { bearerToken } from '../http/auth.ts';
import { endWhenRevoked } from '../keys/key-watch.ts';
import { runObject } from '../run-object/run-ids.ts';
import { publicView } from '../waits/ask-view.ts';

const encoder = new TextEncoder();

/** True when the request asks for the run's stream (`?stream=1`); a 400 for a value that is neither 1 nor 0. */
export function wantsStream(c: Context<{ Bindings: Env }>): boolean {
  const given = c.req.query('stream');
  if (given === undefined || given === '0' || given === 'false') return false;
  if (given === '1' || given === 'true') {
    if (c.req.query('wait') !== undefined) throw new ApiError(400, '`?stream=1` answers with the run as it goes: leave out `?wait=`', { field: 'wait' });
    return true;
  }
  throw new ApiError(400, "`stream` must be 1 (the run's event stream as the answer) or 0", { field: 'stream' });
}

/** The run's event stream as the response, ended at the run's end or suspension (then with its pending asks). */
export async function streamedRun(c: Context<{ Bindings: Env }>, runId: string): Promise<Response> {
  const run = runObject(c.env, runId);
  const response = await run.fetch(new Request('https://run/events?until=suspended'));
  if (response.body === null) throw new ApiError(404, `no run ${JSON.stringify(runId)}`);
  // The object's stream as it is, and at its end, for a run that suspended, the closing message.
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async flush(controller) {
        const view = await run.view();
        if (view?.status !== 'suspended') return;
        const { pending } = await publicView(c.env, view);
        controller.enqueue(encoder.encode(`data: ${JSON.stringify({ type: 'run_pending', run_id: runId, status: view.status, pending })}\n\n`));
      },
    }),
  );
  // A stream read with a key ends when the key is revoked, as GET /runs/:id/events does.
  const key = bearerToken(c.req.raw);
  const principal = c.get('principal');
  const streamed = principal?.kind === 'key' && key !== null ? endWhenRevoked(body, c.env.RUNVIL_DB, key) : body;
  const headers = new Headers(response.headers);
  headers.set('location', `/runs/${runId}`);
  return new Response(streamed, { status: 200, headers });
}
