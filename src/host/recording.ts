/**
 * A recording: the outputs a run's catalog tools gave, in call order (a test file's
 * `recorded:` key, which `GET /runs/:id/test.yaml` writes from a run's journal). A Host
 * with a recording answers each catalog tool call from it, before any fixture: each chain
 * (task) takes the recorded calls made under its id, in order. A call that is not the one
 * recorded next (another tool, other arguments) ends the run with kind Determinism, naming
 * the step, the section and both calls; a chain whose recorded calls are used up goes on to
 * the Host's fixtures. An operator ask (`user-input/ask`) takes its answer from the test's
 * `answers:`; only an ask the recording holds next (one that failed, or one a task made) is
 * answered from it. Likewise a model round of a chain with replies tagged with its id (the
 * test's `model:` entries with a `task`) takes the next of them; a chain with none left goes
 * to the scripted model's untagged replies. A clock read (`sys.now()`) takes the chain's next
 * recorded reading (the test's `clock:`); once they are used up, the Host's clock answers.
 *
 * Why by chain: the chains of a run go on side by side, and their effects finish in whatever
 * order the world answers them, which is the order the journal holds. Offline every answer
 * is at hand at once, so the chains ask in the scheduler's order; taken in one list, a reply
 * or an answer would reach another chain than the one that got it.
 */
import { DeterminismViolation } from '../engine/journal.ts';
import { canonicalJson, sameJson } from '../json/canonical-json.ts';
import { clip, effectWords, sectionWords } from '../engine/effect-words.ts';
import { answered, failed, type EffectAnswer, type EffectRequest } from '../engine/effects.ts';
import type { Json } from '../json/json.ts';
import { scriptedOutcome, type ScriptedReply } from '../models/scripted.ts';
import { choicesOf, questionOf } from './ask-choices.ts';
import { fitAnswer } from './ask-answer.ts';
import { formOf } from './ask-form.ts';

/** The tool through which a run asks its operator; its answers live in `answers:`. */
export const ASK_TOOL = 'user-input/ask';

/** One recorded catalog tool call, as a test file's `recorded:` lists it. */
export interface RecordedCall {
  /** The tool id, such as `web/fetch`. */
  tool: string;
  /** The arguments the run called it with. */
  args: Json;
  /** The chain that called it: `0` for the run's main chain (the default), `0.1` for a task. */
  task: string;
  /** The section that called it, for messages (not compared). */
  section?: string;
  /** What the tool gave: its output (text, or any JSON for a structured tool), or its model-safe failure text. */
  outcome: { ok: true; output: Json } | { ok: false; message: string };
}

/** One clock read a run made (`sys.now()`), as a test file's `clock:` lists it. */
export interface ClockReading {
  /** What it read: milliseconds since the epoch. */
  now: number;
  /** The chain that read it: `0` for the run's main chain (the default). */
  task: string;
}

/** What a recording holds, each list in the order the run made it. */
export interface RecordedEffects {
  /** Catalog tool calls (a test file's `recorded:`). */
  calls?: readonly RecordedCall[];
  /** Model replies tagged with the chain (`task`) they answer. */
  replies?: readonly ScriptedReply[];
  /** Clock reads (a test file's `clock:`). */
  clock?: readonly ClockReading[];
}

type ToolCallRequest = Extract<EffectRequest, { op: 'tool.call' }>;

/** `items` split by chain, each list in the order given. */
export function listsByChain<T>(items: readonly T[], chainOf: (item: T) => string): Map<string, T[]> {
  const chains = new Map<string, T[]>();
  for (const item of items) {
    const list = chains.get(chainOf(item));
    if (list) list.push(item);
    else chains.set(chainOf(item), [item]);
  }
  return chains;
}

/** Answers catalog tool calls, tagged model rounds and clock reads from a recording, chain by chain, in call order. */
export class Recording {
  private readonly byChain = new Map<string, { calls: { call: RecordedCall; index: number }[]; next: number }>();
  private readonly replies: Map<string, ScriptedReply[]>;
  private readonly clock: Map<string, ClockReading[]>;
  /** Recorded asks whose answer is none of the ask's choices (`index` in the recorded calls), refused as the API refuses them. */
  readonly refused: { index: number; message: string }[] = [];

  constructor({ calls = [], replies = [], clock = [] }: RecordedEffects) {
    calls.forEach((call, index) => {
      let chain = this.byChain.get(call.task);
      if (!chain) this.byChain.set(call.task, (chain = { calls: [], next: 0 }));
      chain.calls.push({ call, index });
    });
    this.replies = listsByChain(replies, (reply) => reply.task ?? '0');
    this.clock = listsByChain(clock, (reading) => reading.task);
  }

  /** The next reply tagged for `chain`'s model rounds; undefined when it has none left (the scripted model answers). */
  reply(chain: string): EffectAnswer | undefined {
    const reply = this.replies.get(chain)?.shift();
    if (!reply) return undefined;
    const outcome = scriptedOutcome(reply);
    return outcome.ok ? answered(outcome.reply as unknown as Json) : failed('model', outcome.message);
  }

  /** The next clock reading recorded for `chain`; undefined when it has none left (the Host's clock answers). */
  now(chain: string): EffectAnswer | undefined {
    const reading = this.clock.get(chain)?.shift();
    return reading ? answered(reading.now) : undefined;
  }

  /**
   * The recorded answer of a tool call made by `chain`; undefined when the call goes to the
   * Host (the chain's recording is used up, or an ask the recording does not hold next).
   * Throws DeterminismViolation when the recording holds another call next.
   */
  answer(chain: string, request: ToolCallRequest): EffectAnswer | undefined {
    const queue = this.byChain.get(chain);
    const next = queue?.calls[queue.next];
    if (!queue || !next) return undefined;
    if (request.tool === ASK_TOOL && next.call.tool !== ASK_TOOL) return undefined;
    const recorded = next.call;
    if (recorded.tool !== request.tool || !sameJson(recorded.args ?? {}, request.args ?? {})) {
      const now = effectWords(request);
      const then = `${callWords(recorded)}${recorded.section !== undefined ? `, made ${sectionWords(recorded.section)}` : ''}`;
      throw new DeterminismViolation(
        `the run no longer follows its recording at tool call ${queue.next + 1} of chain ${chain} (recorded: entry ${next.index + 1}), ${sectionWords(request.origin?.section)}: the recording holds ${then}; the prompt now asks for ${now}`,
      );
    }
    queue.next++;
    if (!recorded.outcome.ok) return failed('tool', recorded.outcome.message);
    const output = recorded.outcome.output;
    // A recorded ask's answer is an operator's answer: one of the ask's choices when it offers some, an object that fits its form when it has one, as the API takes it.
    if (request.tool !== ASK_TOOL) return answered(output);
    const choices = choicesOf(request.args);
    const form = formOf(request.args);
    if (choices === null && form === null) return answered(output);
    const fitted = fitAnswer({ id: `made by chain ${chain}`, question: questionOf(request.args), choices, form }, output);
    if (!fitted.ok) {
      this.refused.push({ index: next.index, message: fitted.message });
      return failed('tool', fitted.message);
    }
    return answered(fitted.text);
  }

  /** The recorded calls no chain reached, in words (empty when the run made them all). */
  unused(): string[] {
    const left: { index: number; line: string }[] = [];
    for (const [chain, queue] of this.byChain) {
      queue.calls.forEach(({ call, index }, n) => {
        if (n < queue.next) return;
        const where = call.section !== undefined ? `, ${sectionWords(call.section)}` : '';
        left.push({ index, line: `recorded: entry ${index + 1} (tool call ${n + 1} of chain ${chain}${where}): ${callWords(call)}` });
      });
    }
    return left.sort((a, b) => a.index - b.index).map((item) => item.line);
  }
}

function callWords(call: RecordedCall): string {
  return `a call of ${call.tool} with arguments ${clip(canonicalJson(call.args ?? {}))}`;
}
