/**
 * An effect in words a prompt's author reads: "a call of web/fetch with arguments
 * {"url":"…"}", "a model round for role "default"", "a write of notes.md". A replay that
 * differs from its journal, a fork whose prompt no longer reproduces the run, and a test
 * whose prompt left its recording all say what was recorded and what the prompt asks for
 * now with these, never with a digest.
 */
import type { EffectRequest, StepRequest } from './effects.ts';
import { canonicalJson } from '../json/canonical-json.ts';

/** The longest JSON text of arguments (or of a message) a description quotes before it cuts it short. */
const QUOTE_CHARS = 160;

/** A text cut to `limit` characters, with an ellipsis when it was longer. */
export function clip(text: string, limit = QUOTE_CHARS): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** A heading reference for a section name (`## Fetch`), or the run's start for none. */
export function sectionWords(section: string | null | undefined): string {
  return section === null || section === undefined ? 'before any section' : `in section "## ${section}"`;
}

/** One effect (or scheduler step record) in words. */
export function effectWords(request: EffectRequest | StepRequest): string {
  switch (request.op) {
    case 'tool.call':
      return `a call of ${request.tool} with arguments ${clip(canonicalJson(request.args ?? {}))}`;
    case 'model.round':
      return `a model round for role "${request.role}"`;
    case 'store.read':
      return `a read of the store file ${JSON.stringify(request.path)}`;
    case 'store.write':
      return `a write of the store file ${JSON.stringify(request.path)} (${request.text.length} characters)`;
    case 'store.append':
      return `an append to the store file ${JSON.stringify(request.path)} (${request.text.length} characters)`;
    case 'store.delete':
      return `a delete of the store file ${JSON.stringify(request.path)}`;
    case 'store.list':
      return `a listing of the store under ${JSON.stringify(request.prefix)}`;
    case 'sys.now':
      return 'a clock read (sys.now)';
    case 'scheduler.step':
      return 'a scheduler step (which tasks went on)';
  }
}

/**
 * What differs between a journaled effect and the one a run asks for now, in a sentence:
 * both effects in words, and for two model rounds of the same role (whose journal keeps a
 * digest, not the conversation) what the round sends now.
 */
export function differenceWords(recorded: EffectRequest | StepRequest, now: EffectRequest): string {
  const before = effectWords(recorded);
  const after = effectWords(now);
  if (recorded.op === 'model.round' && now.op === 'model.round' && recorded.role === now.role) {
    return `the journal recorded ${before} over the conversation as it stood then; the prompt now sends ${after} over a different conversation (the section's prose, the messages before it, the tools offered or the model config changed)${lastMessageWords(now)}`;
  }
  if (recorded.op === 'tool.call' && now.op === 'tool.call' && recorded.tool === now.tool) {
    const args = clip(canonicalJson(now.args ?? {}));
    if (args !== clip(canonicalJson(recorded.args ?? {})))
      return `the journal recorded ${before}; the prompt now asks for the same tool with arguments ${args}`;
    // The same tool and arguments: the call differs in who made it.
    return `the journal recorded ${before} ${callerWords(recorded)}; the prompt now makes it ${callerWords(now)}`;
  }
  return `the journal recorded ${before}; the prompt now asks for ${after}`;
}

/** Who made a tool call: the caller, the section, the run (execution) and the model's call id. */
function callerWords(request: Extract<EffectRequest, { op: 'tool.call' }>): string {
  const origin = request.origin;
  const id = request.call_id === null ? '' : ` as its call ${JSON.stringify(request.call_id)}`;
  return `from ${origin?.caller === 'model' ? 'the model' : 'Lua'}${id} ${sectionWords(origin?.section)} of run ${JSON.stringify(origin?.execution ?? '')}`;
}

/** `; its last message now: user: "…"` for a model round whose request is at hand, else nothing. */
function lastMessageWords(request: Extract<EffectRequest, { op: 'model.round' }>): string {
  let messages: unknown;
  try {
    messages = (request.request as { messages?: unknown } | null)?.messages;
  } catch {
    return '';
  }
  if (!Array.isArray(messages) || messages.length === 0) return '';
  const last = messages[messages.length - 1] as { role?: unknown; content?: unknown };
  if (typeof last?.content !== 'string') return '';
  return `; its last message now: ${String(last.role)}: ${JSON.stringify(clip(last.content))}`;
}
