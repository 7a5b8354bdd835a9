/**
 * Forking a run at step N (DESIGN.md "A run becomes a test; a run forks"): a new run whose
 * journal starts with the first N entries of the original, with the operator's answers the
 * fork gives in place of the recorded ones, then goes on live.
 *
 * Before the fork starts, its prompt replays those entries on a dry Host (no Pack, model or
 * operator is called: a replay takes every answer from the journal). A prompt that cannot
 * reproduce them is refused, with the first step that differs. An answer the fork changes
 * makes what the original did after it stale: the journal is cut at the first entry that no
 * longer matches after a changed answer, and the fork goes live from there.
 */
import type { JournalEntry } from '../engine/journal.ts';
import type { LuaPlatform } from '../engine/lua/vm.ts';
import { effectWords, sectionWords } from '../engine/effect-words.ts';
import type { Prompt } from '../prompt/types.ts';
import type { Json } from '../json/json.ts';
import { runOnHost, type HostConfig } from './host.ts';
import { ScriptedOperator } from './operator.ts';
import { ASK_TOOL } from './recording.ts';
import { choicesOf, questionOf } from './ask-choices.ts';
import { fitAnswer } from './ask-answer.ts';
import { formOf } from './ask-form.ts';

/** The ask id of a journal entry (`<chain>-<seq>`), as the API and the run's asks name it. */
export const askIdOfEntry = (entry: JournalEntry): string => `${entry.chain}-${entry.seq}`;

/** A journal's first entries with answers replaced, or why the request does not fit the journal. */
export type ForkPrefix = { ok: true; journal: JournalEntry[]; firstReplaced: number | null } | { ok: false; field: 'at' | 'answers'; message: string };

/**
 * The first `at` entries of `journal`, with each ask of `answers` (by ask id) answered with
 * the given answer. `at` must lie from 0 to the journal's length, every ask id must be an ask
 * those entries hold, an ask with choices takes only one of them, and an ask with a form
 * only an object that fits it (its text is then the object's canonical JSON).
 */
export function forkPrefix(journal: readonly JournalEntry[], at: number, answers: ReadonlyMap<string, Json>): ForkPrefix {
  if (!Number.isSafeInteger(at) || at < 0 || at > journal.length) {
    return {
      ok: false,
      field: 'at',
      message: `\`at\` must be a whole number from 0 to ${journal.length} (the run's journal has ${journal.length} entries); got ${JSON.stringify(at)}`,
    };
  }
  const prefix = journal.slice(0, at);
  const asks = new Map<string, number>();
  prefix.forEach((entry, index) => {
    if (entry.request.op === 'tool.call' && entry.request.tool === ASK_TOOL) asks.set(askIdOfEntry(entry), index);
  });
  let firstReplaced: number | null = null;
  for (const [askId, answer] of answers) {
    const index = asks.get(askId);
    if (index === undefined) {
      const held = asks.size > 0 ? `they hold the asks ${[...asks.keys()].join(', ')}` : 'they hold no ask';
      return {
        ok: false,
        field: 'answers',
        message: `\`answers\` names the ask ${JSON.stringify(askId)}, which the first ${at} journal entries do not hold (${held}); an ask after them is answered live`,
      };
    }
    const entry = prefix[index]!;
    // As the live route refuses it: an answer Lua gets is one the ask offered.
    const args = entry.request.op === 'tool.call' ? entry.request.args : undefined;
    const fitted = fitAnswer({ id: askId, question: questionOf(args), choices: choicesOf(args), form: formOf(args) }, answer);
    if (!fitted.ok) return { ok: false, field: 'answers', message: `\`answers\`: ${fitted.message}` };
    prefix[index] = { ...entry, answer: { ok: true, value: fitted.text } };
    firstReplaced = firstReplaced === null ? index : Math.min(firstReplaced, index);
  }
  return { ok: true, journal: prefix, firstReplaced };
}

/**
 * The journal as the run `runId` would have made it: a tool call's request names the run
 * that made it (`origin.execution`, `sys.execution`), which for a fork is the fork.
 */
export function rebaseJournal(journal: readonly JournalEntry[], from: string, runId: string): JournalEntry[] {
  return journal.map((entry) => {
    const request = entry.request;
    if (request.op !== 'tool.call' || request.origin?.execution !== from) return entry;
    return { ...entry, request: { ...request, origin: { ...request.origin, execution: runId } } };
  });
}

/** What a fork's prompt replays. */
export interface ForkReplay {
  platform: LuaPlatform;
  /** The Host the fork will run on; only its Packs' manifests are used here. */
  host: HostConfig;
  prompt: Prompt;
  args: { [name: string]: Json };
  untrustedArgs?: readonly string[];
  seed: string;
  runId: string;
  prefix: Extract<ForkPrefix, { ok: true }>;
}

/**
 * The journal a fork starts from, or the first step its prompt cannot reproduce (`diverged`:
 * the journaled entry there, when the replay reached one).
 */
export type ForkCheck = { ok: true; journal: JournalEntry[] } | { ok: false; message: string; diverged?: JournalEntry };

/**
 * Replays the fork's journal on a dry Host and answers the journal the fork starts from:
 * the prefix, cut where a changed answer made the rest stale. Refuses a prompt that leaves
 * the journal before any changed answer.
 */
export async function checkFork(replay: ForkReplay): Promise<ForkCheck> {
  let journal = replay.prefix.journal;
  const firstReplaced = replay.prefix.firstReplaced;
  // No entry to reproduce: the fork is a fresh run, and a prompt its Host refuses at prepare
  // (a Pack that could not serve the original) ends the fork as it ended the original.
  if (journal.length === 0) return { ok: true, journal };
  // Each pass that cuts keeps fewer entries, so this ends.
  for (;;) {
    const outcome = await dryReplay(replay, journal);
    if (outcome.ok) return { ok: true, journal };
    const index = outcome.diverged === undefined ? -1 : journal.indexOf(outcome.diverged);
    if (firstReplaced !== null && index > firstReplaced) {
      journal = journal.slice(0, index);
      continue;
    }
    return { ok: false, message: outcome.message, ...(outcome.diverged ? { diverged: outcome.diverged } : {}) };
  }
}

type DryOutcome = { ok: true } | { ok: false; message: string; diverged?: JournalEntry };

/** Replays `journal` with no Pack, model or operator, stopping the run as soon as it has taken every entry. */
async function dryReplay(replay: ForkReplay, journal: JournalEntry[]): Promise<DryOutcome> {
  const controller = new AbortController();
  let replayed = false;
  const outcome = await runOnHost(replay.platform, dryHost(replay.host), {
    prompt: replay.prompt,
    args: replay.args,
    ...(replay.untrustedArgs ? { untrustedArgs: replay.untrustedArgs } : {}),
    seed: replay.seed,
    runId: replay.runId,
    journal,
    signal: controller.signal,
    onReplayed: () => {
      replayed = true;
      controller.abort('the fork has replayed its journal');
    },
  });
  if (replayed) return { ok: true };
  if (outcome.status === 'completed') return { ok: true };
  if (outcome.error.kind === 'Determinism') return { ok: false, message: outcome.error.message, ...(outcome.diverged ? { diverged: outcome.diverged } : {}) };
  const next = outcome.diverged;
  const where = next
    ? `: the journal's effect ${next.seq} of chain ${next.chain}${next.request.op === 'tool.call' ? `, ${sectionWords(next.request.origin?.section)}` : ''}, ${effectWords(next.request)}`
    : '';
  return {
    ok: false,
    message: `the prompt now ends with error[${outcome.error.kind}] (${outcome.error.message}) before it reaches the rest of the journal${where}`,
    ...(next ? { diverged: next } : {}),
  };
}

/**
 * The Host's Packs (their manifests and availability, so the catalog is the fork's), with
 * nothing behind them: a replay answers every effect from the journal, and the run stops
 * before it would perform one.
 */
function dryHost(host: HostConfig): HostConfig {
  return {
    packs: host.packs.map((pack) => ({
      manifest: pack.manifest,
      call: async () => ({ ok: false, message: 'a fork check performs no tool call' }),
      ...(pack.unavailableReason ? { unavailableReason: (services) => pack.unavailableReason!(services) } : {}),
    })),
    ...(host.services ? { services: host.services } : {}),
    models: { provider: () => 'a fork check calls no model' },
    operator: new ScriptedOperator([]),
  };
}

/** A change a store effect made to a run's files. */
export type StoreChange = { op: 'write' | 'append'; path: string; text: string } | { op: 'delete'; path: string };

/** The change a journaled store effect made to the run's files (a fork's files start as the original's stood at N). */
export function fileChangesOf(entry: JournalEntry): StoreChange[] {
  const { request, answer } = entry;
  if (!answer.ok) return [];
  switch (request.op) {
    case 'store.write':
      return [{ op: 'write', path: request.path, text: request.text }];
    case 'store.append':
      return [{ op: 'append', path: request.path, text: request.text }];
    case 'store.delete':
      return [{ op: 'delete', path: request.path }];
    default:
      return [];
  }
}
