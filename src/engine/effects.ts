/**
 * Effects: every piece of I/O the Engine asks for. The Engine issues a request, the
 * Harness (src/host) performs it and answers; the answer is journaled before Lua sees it.
 */
import type { Json } from '../json/json.ts';

/** Who made a tool call, as the chapter's tool-call records name it. */
export interface CallOrigin {
  execution: string;
  section: string;
  caller: 'script' | 'model';
}

/** A request the Engine hands to the Harness. */
export type EffectRequest =
  | { op: 'store.read'; path: string }
  | { op: 'store.write'; path: string; text: string }
  | { op: 'store.append'; path: string; text: string }
  | { op: 'store.list'; prefix: string }
  | { op: 'store.delete'; path: string }
  | { op: 'sys.now' }
  | { op: 'tool.call'; tool: string; name: string; args: Json; origin: CallOrigin; call_id: string | null }
  /**
   * A model round. `digest` stands for the whole request in the journal; `request` (the
   * role, config, messages and tools the provider gets) is not journaled: a long
   * conversation would make the journal grow with the square of its rounds. `step`, the seq
   * of the round's `model_turn_started` event, names the round in the deltas of its streamed
   * reply (a side channel of the effect, never journaled: a replay makes none).
   */
  | { op: 'model.round'; role: string; digest: string; readonly request: Json; readonly step?: number };

/**
 * What the journal keeps of a request: all of it, except a model round's `request`. Its
 * fields in the order the journal's text has always had them.
 */
export function journaled(request: EffectRequest): EffectRequest {
  if (request.op !== 'model.round') return request;
  return { op: request.op, role: request.role, digest: request.digest } as EffectRequest;
}

/** The Harness's answer: a JSON value, or an error with a Lua-side kind and a model-safe message. */
export type EffectAnswer = { ok: true; value: Json } | { ok: false; error: { kind: string; message: string } };

/** Where an effect comes from, for the Harness's records. */
export interface EffectContext {
  runId: string;
  chain: string;
  seq: number;
  section: string | null;
}

/** Performs effects. Implemented by src/host; a Promise may stay pending while a run waits. */
export interface Harness {
  perform(request: EffectRequest, context: EffectContext): Promise<EffectAnswer>;
}

/** A successful answer. */
export const answered = (value: Json): EffectAnswer => ({ ok: true, value });

/** A failed answer. */
export const failed = (kind: string, message: string): EffectAnswer => ({ ok: false, error: { kind, message } });

/**
 * A scheduler step record's request: the step released the chains its answer lists
 * (scheduler.ts). Only runs with concurrent chains journal any.
 */
export interface StepRequest {
  op: 'scheduler.step';
}
