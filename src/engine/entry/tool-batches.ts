/**
 * Tool-call batches: the calls start together, in call order, and answer in call order. A
 * call's output is untrusted text unless its tool is trusted, and wrapped as such; a model's
 * call reports its events here, where its answer is at hand.
 */
import type { EffectAnswer, EffectRequest } from '../effects.ts';
import type { RunContext } from '../run-context.ts';
import { wrapUntrusted } from '../untrusted-envelope.ts';
import type { LuaScalar } from '../lua/vm.ts';
import type { EntrySpec } from './entry-types.ts';
import { encodeBatchAnswers, type BatchAnswer, type BatchCall } from './protocol.ts';
import { toolRecordText } from './protocol-records.ts';

/** The effect request of one tool call, as the journal keeps it. */
export function toolRequest(run: RunContext, spec: EntrySpec, call: BatchCall): EffectRequest {
  return {
    op: 'tool.call',
    tool: call.tool,
    name: call.name,
    args: call.args,
    origin: { execution: run.runId, section: spec.section.name, caller: call.caller },
    call_id: call.callId,
  };
}

/**
 * A batch's answers as the Lua runtime reads them: (ok, text, record) per call, untrusted
 * output wrapped, a model's failed call wrapped too (the model reads it as data), and a
 * model's call given its tool record's JSON text; its events reported here.
 */
export function finishBatch(run: RunContext, spec: EntrySpec, calls: BatchCall[], answers: EffectAnswer[]): LuaScalar[] {
  const batchAnswers: BatchAnswer[] = [];
  calls.forEach((call, k) => {
    const answer = answers[k]!;
    const trusted = run.catalog.tools.find((tool) => tool.id === call.tool)?.trusted ?? false;
    const output = answer.ok ? (typeof answer.value === 'string' ? answer.value : JSON.stringify(answer.value)) : answer.error.message;
    const wrap = !answer.ok ? call.caller === 'model' : !trusted;
    // A catalog tool's failure text counts as untrusted as well, whoever called it.
    if (!answer.ok || !trusted) run.taint.mark(spec.chain);
    const text = wrap ? wrapUntrusted(output, run.seed.nonce) : output;
    batchAnswers.push({
      ok: answer.ok,
      text,
      record: call.caller === 'model' ? toolRecordText(text, call.callId) : null,
    });
    if (call.caller !== 'model') return;
    const place = { section: spec.section.name, task: spec.chain, turn: call.turn };
    const id = { alias: call.name, tool: call.tool, tool_call_id: call.callId };
    if (answer.ok) run.events.emit('tool_call_succeeded', place, id);
    else run.events.emit('tool_call_failed', place, { ...id, error: answer.error.message });
    run.events.emit('tool_result', place, { alias: call.name, content: text, tool: call.tool, tool_call_id: call.callId, trusted: answer.ok && trusted });
  });
  return encodeBatchAnswers(batchAnswers);
}
