/**
 * Effects, with one driver path each: an effect's work is written once, as a plan that
 * yields the requests it needs answered and returns the values the Lua thread resumes with.
 * The leaf `answered` runs the plan at once when the scheduler answers its requests now (a
 * replay's every effect, or the only chain with its answer journaled); otherwise the thread
 * yields 'kept' and the driver runs the rest of the same plan, parking the chain for each
 * request. Either way the requests, answers and events are the same.
 */
import type { Json } from '../../json/json.ts';
import type { EffectAnswer, EffectRequest } from '../effects.ts';
import type { LuaScalar } from '../lua/vm.ts';
import type { RunContext } from '../run-context.ts';
import { storePathProblem } from '../store-path.ts';
import type { EffectPlan, EntrySpec, EntryState, Waiting } from './entry-types.ts';
import { answerRound, fusedCalls, prepareRound } from './model-rounds.ts';
import { decodeBatch, decodeEffect, failure, fusedRecordsOf } from './protocol.ts';
import { finishBatch, toolRequest } from './tool-batches.ts';

/** The plan of what base.lua yields to the leaf `answered`: an effect (`effect`, op, payload...) or a tool-call batch. */
export function* effectPlan(run: RunContext, spec: EntrySpec, entry: EntryState, op: string, rest: LuaScalar[]): EffectPlan {
  if (op === 'batch') {
    const calls = decodeBatch(rest);
    const answers = yield { requests: calls.map((call) => toolRequest(run, spec, call)), optional: false };
    return finishBatch(run, spec, calls, answers!);
  }
  if (rest[0] === 'model.round') {
    const round = prepareRound(run, spec, entry, rest);
    if ('refusal' in round) return failure('context', round.refusal);
    const [reply] = (yield { requests: [round.request], optional: false })!;
    const values = answerRound(run, spec, round.role, round.turn, reply!, round.tools);
    const calls = fusedCalls(round, values);
    if (calls) {
      const results = yield { requests: calls.map((call) => toolRequest(run, spec, call)), optional: true };
      if (results) {
        values.push(...finishBatch(run, spec, calls, results));
        entry.fusedRecords = fusedRecordsOf(values);
      }
    }
    return values;
  }
  const effect = decodeEffect(rest);
  const request = toRequest(effect.op, JSON.parse(effect.payloadText) as Record<string, Json>);
  if ('problem' in request) return failure('lua', request.problem);
  noteStoreTaint(run, spec, request);
  const [answer] = (yield { requests: [request], optional: false })!;
  return toLua(effect.op, answer!);
}

/**
 * Runs a plan as far as the scheduler answers it at once: its values, or what it waits on.
 * null: the chain is stopping (the driver then ends the entry).
 */
export function answerNow(run: RunContext, spec: EntrySpec, plan: EffectPlan): LuaScalar[] | Waiting | null {
  let next = plan.next(null);
  while (!next.done) {
    const need = next.value;
    let answers = run.scheduler.answerNow(spec.chain, need.requests, spec.section.name);
    if (answers !== null && chainStopping(run, spec)) {
      if (!need.optional) return null;
      answers = null;
    }
    if (answers === null && !need.optional) return { plan, need };
    next = plan.next(answers);
  }
  return next.value;
}

/** Runs the rest of a plan that waits, parking the chain for each need. null: the chain is stopping. */
export async function awaitPlan(run: RunContext, spec: EntrySpec, waiting: Waiting): Promise<LuaScalar[] | null> {
  const { plan } = waiting;
  let need = waiting.need;
  for (;;) {
    const answers = await run.scheduler.park(
      spec.chain,
      need.requests.map((request) => ({ request, section: spec.section.name })),
    );
    if (chainStopping(run, spec)) return null;
    const next = plan.next(answers);
    if (next.done) return next.value;
    need = next.value;
  }
}

/** Whether the entry's chain is being stopped (cancelled, or the run failing). */
export function chainStopping(run: RunContext, spec: EntrySpec): boolean {
  return run.scheduler.stopOf(spec.chain) !== null;
}

/** A store operation carries untrusted text's mark between a file and the chain (taint.ts); marking twice is harmless. */
function noteStoreTaint(run: RunContext, spec: EntrySpec, request: EffectRequest): void {
  if ('path' in request && typeof request.path === 'string') run.taint.storeOp(spec.chain, request.op, request.path);
}

/** The effect request of a store or clock effect, or the problem with its payload. */
function toRequest(op: string, payload: Record<string, Json>): EffectRequest | { problem: string } {
  const checkPath = (fname: string, path: string, allowEmpty = false) => {
    const problem = storePathProblem(path, allowEmpty);
    return problem ? { problem: `${fname}: invalid path ${JSON.stringify(path)}: ${problem}` } : null;
  };
  switch (op) {
    case 'store.read':
    case 'store.delete':
      return checkPath(op, String(payload.path)) ?? { op, path: String(payload.path) };
    case 'store.write':
    case 'store.append':
      return checkPath(op, String(payload.path)) ?? { op, path: String(payload.path), text: String(payload.text) };
    case 'store.list':
      return checkPath(op, String(payload.prefix), true) ?? { op, prefix: String(payload.prefix) };
    case 'sys.now':
      return { op };
    default:
      return { problem: `unknown effect ${op}` };
  }
}

/** The values an effect's answer resumes the Lua thread with. */
function toLua(op: string, answer: EffectAnswer): LuaScalar[] {
  if (!answer.ok) return failure(answer.error.kind, answer.error.message);
  const value = answer.value;
  if (op === 'store.list') return [true, JSON.stringify(value)];
  return [true, typeof value === 'string' ? value : JSON.stringify(value)];
}
