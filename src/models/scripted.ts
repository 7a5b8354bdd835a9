/**
 * The scripted provider: replies taken in order by every model round, for prompt tests and
 * `runvil run --script`. Users test their prompts with it, without a network or a key.
 */
import type { Json } from '../json/json.ts';
import type { ModelOutcome, ModelProvider, ModelRequest } from './provider.ts';

/** One scripted reply as a test file writes it. */
export interface ScriptedReply {
  content?: string;
  tool_calls?: { id: string; name: string; arguments?: Json }[];
  /** The round fails with this message instead (a provider's failure, as a recorded run saw it). */
  fails?: string;
  /**
   * The chain whose rounds this reply answers (`0.1`, `0.f0.2`): a recorded run's task or
   * fanout arm, whose rounds ran beside others' and finished in any order. Untagged replies
   * answer the rounds of every chain, in order (recording.ts).
   */
  task?: string;
}

/** What a scripted reply makes of a round. */
export function scriptedOutcome(reply: ScriptedReply): ModelOutcome {
  if (reply.fails !== undefined) return { ok: false, message: reply.fails };
  return {
    ok: true,
    reply: {
      content: reply.content ?? '',
      tool_calls: (reply.tool_calls ?? []).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments ?? {} })),
    },
  };
}

/** The message of a round the script has no reply for. */
export const SCRIPT_EXHAUSTED = 'scripted model has no reply left';

/** Answers rounds from a list of replies; records every request it saw. */
export class ScriptedProvider implements ModelProvider {
  private next = 0;
  readonly requests: ModelRequest[] = [];

  constructor(private readonly replies: readonly ScriptedReply[]) {}

  async round(request: ModelRequest): Promise<ModelOutcome> {
    this.requests.push(structuredClone(request));
    const reply = this.replies[this.next++];
    return reply ? scriptedOutcome(reply) : { ok: false, message: SCRIPT_EXHAUSTED };
  }
}
