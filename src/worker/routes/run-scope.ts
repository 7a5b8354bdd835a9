/**
 * The scopes that name the prompt of the run a route acts on: answering an ask of a run of
 * prompt P takes `asks:answer:P`, cancelling one `runs:start:P`. The run's prompt is looked
 * up only for a caller whose scopes do not cover every prompt (the root, `admin` and `*`
 * scopes pass without it), from the run object, or its final record once the object has
 * let the run go.
 */
import type { Context } from 'hono';
import type { Env } from '../env.ts';
import type { ScopeOf } from '../http/auth.ts';
import { ApiError } from '../http/http-error.ts';
import { allows } from '../keys/scopes.ts';
import { readRunRecord } from '../outbox/run-store-kv.ts';
import { runObject } from '../run-object/run-ids.ts';

/** The scope `<family>:<the prompt of run :id>`, for requireScope. */
export function runPromptScope(family: 'runs:start' | 'asks:answer'): ScopeOf {
  return async (c: Context<{ Bindings: Env }>) => {
    if (allows(c.get('principal'), `${family}:*`)) return `${family}:*`;
    return `${family}:${await promptOfRun(c.env, c.req.param('id') ?? '')}`;
  };
}

/** The prompt run `runId` runs, or a 404. */
export async function promptOfRun(env: Env, runId: string): Promise<string> {
  const view = await runObject(env, runId).view();
  if (view) return view.prompt;
  const record = await readRunRecord(env.RUNVIL_KV, runId);
  if (!record) throw new ApiError(404, `no run ${JSON.stringify(runId)}`);
  return record.prompt;
}
