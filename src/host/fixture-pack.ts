/**
 * Third-party Packs described by a test file (`host.packs`): a manifest built from the
 * description and tools that answer their fixed output text or failure text.
 */
import type { Json } from '../json/json.ts';
import type { Pack, ToolContext, ToolManifest, ToolOutcome } from './pack.ts';
import { callIdOf, callClosed, noResultWithin } from './tool-calls.ts';

/** One fixture tool: its manifest fields and what every call to it answers. */
export interface FixtureToolSpec {
  /** The tool's own name; its tool id is `<pack id>/<name>`. */
  name: string;
  description?: string;
  /** JSON Schema of the arguments; `{ type: object, properties: {} }` by default. */
  parameters?: Json;
  /** `plain` by default. */
  output?: 'plain' | 'structured';
  /** True by default. */
  trusted?: boolean;
  /** The tool's output text. */
  returns?: string;
  /** The tool's model-safe failure text; wins over `returns`. */
  fails?: string;
  /**
   * true: the call waits in the run's call ledger, as on an HTTP tool service's 202, and its
   * result comes after every step that can run meanwhile; `never`: no result comes, and the
   * call fails at its timeout.
   */
  later?: true | 'never';
  /** Seconds a `later` call waits (default 900); the fixture Host's clock jumps to the deadline. */
  timeout?: number;
}

/** One fixture Pack. */
export interface FixturePackSpec {
  description?: string;
  prelude?: string;
  /** Why the Pack cannot serve (a prompt that declares it is refused with the requirements notice); it serves when absent. */
  unavailable?: string;
  tools?: FixtureToolSpec[];
}

/** The parameter schema of a tool that takes no arguments. */
export const NO_PARAMETERS: Json = { type: 'object', properties: {} };

/** Builds a Pack named `fqName` (such as `acme/stats`) from its fixture description. */
export function fixturePack(fqName: string, spec: FixturePackSpec): Pack {
  const packId = fqName.split('/').pop()!;
  const answers = new Map<string, ToolOutcome>();
  const later = new Map<string, { mode: true | 'never'; timeout: number }>();
  const tools: ToolManifest[] = (spec.tools ?? []).map((tool) => {
    const id = `${packId}/${tool.name}`;
    answers.set(id, tool.fails !== undefined ? { ok: false, message: tool.fails } : { ok: true, output: tool.returns ?? '' });
    if (tool.later !== undefined) later.set(id, { mode: tool.later, timeout: tool.timeout ?? DEFAULT_LATER_TIMEOUT });
    return {
      id,
      description: tool.description ?? '',
      parameters: tool.parameters ?? NO_PARAMETERS,
      output: tool.output ?? 'plain',
      trusted: tool.trusted ?? true,
    };
  });
  const unavailable = spec.unavailable;
  return {
    ...(unavailable !== undefined ? { unavailableReason: () => unavailable } : {}),
    manifest: {
      fqName,
      description: spec.description ?? `The fixture Pack ${fqName}`,
      tools,
      ...(spec.prelude !== undefined ? { prelude: spec.prelude } : {}),
    },
    async call(tool, _args, context) {
      const answer = answers.get(tool) ?? { ok: false, message: `${tool}: ${fqName} has no such tool` };
      const wait = later.get(tool);
      return wait ? answerLater(tool, answer, wait, context) : answer;
    },
  };
}

/** How long a `later` fixture call waits by default: an HTTP tool's default timeout. */
const DEFAULT_LATER_TIMEOUT = 900;

/** A fixture call whose answer comes later, through the run's call ledger, as an HTTP tool service's would. */
async function answerLater(tool: string, answer: ToolOutcome, wait: { mode: true | 'never'; timeout: number }, context: ToolContext): Promise<ToolOutcome> {
  const ledger = context.calls;
  if (!ledger || !context.effect) return { ok: false, message: `${tool}: this host cannot receive tool results` };
  const callId = await callIdOf(context.runId, context.effect);
  if (ledger.open({ callId, tool, chain: context.effect.chain, timeoutSeconds: wait.timeout }).state === 'sending') {
    ledger.markWaiting(callId);
    // After the steps that can run meanwhile (each answers in microtasks), as a callback would.
    if (wait.mode === true) setTimeout(() => ledger.settle(callId, answer.ok ? { output: answer.output } : { error: answer.message }), 0);
  }
  const end = await ledger.wait(callId);
  if (end.kind === 'expired') return { ok: false, message: noResultWithin(tool, wait.timeout) };
  if (end.kind === 'closed') return { ok: false, message: callClosed(tool) };
  const result = end.result;
  // A fixture's results are its own, never cut off as oversized.
  return 'output' in result ? { ok: true, output: String(result.output) } : { ok: false, message: 'error' in result ? result.error : `${tool}: oversized` };
}
