/**
 * Whether a run in flight would replay faithfully on another build (DESIGN.md Part 3, "Deploys
 * never break a run in flight"): its whole journal replayed on a Host that calls nothing, with
 * the fork check's dry replay (fork.ts), on the run's own prompt source, never a local file (a
 * run always resumes on its own source, so a prompt edit alone breaks no run; the Engine, its
 * Lua runtime and the configuration are what can). The replay stops once it has taken every
 * journal entry: what it asks for next is where a suspended run waits, and it reproduces.
 */
import type { JournalEntry } from '../engine/journal.ts';
import type { LuaPlatform } from '../engine/lua/vm.ts';
import type { Json } from '../json/json.ts';
import { parsePrompt } from '../prompt/parse.ts';
import type { Prompt } from '../prompt/types.ts';
import { checkFork } from './fork.ts';
import type { HostConfig } from './host.ts';

/** What a run's replay needs, as `GET /runs/:id/journal` answers it. */
export interface ReplayMaterial {
  run_id: string;
  prompt: string;
  status: string;
  /** The prompt source the run started on, which it resumes on. */
  source: string;
  args: { [name: string]: Json };
  untrusted_args?: string[];
  seed: string;
  journal: JournalEntry[];
  /** The configured Packs the run was prepared with (their tool lists), or null before it was. */
  packs: Json;
  /** The build the run started on (run-build.ts), or null for a run older than builds. */
  build: Json;
}

/** The first step of a run's journal that a replay no longer reproduces. */
export interface DifferingStep {
  /** Chain and sequence number of the journaled entry (the ask id form `<chain>-<seq>`), when the replay reached one. */
  chain: string | null;
  seq: number | null;
  /** The section the journaled effect was asked from, when the journal says (a tool call's origin). */
  section: string | null;
  /** The step in words an author reads: where, what the journal recorded, what is asked now. */
  words: string;
}

/** A run's replay on a build: it reproduces its journal, or the first step that differs. */
export type ReplayVerdict = { reproduces: true; entries: number } | { reproduces: false; step: DifferingStep };

/** Parsed prompt sources, shared by the runs of one prompt version (thousands of runs, a few versions). */
const parsed = new Map<string, ReturnType<typeof parsePrompt>>();
const PARSED_KEPT = 256;

function parseSource(source: string, name: string): ReturnType<typeof parsePrompt> {
  const key = `${name}\u0000${source}`;
  let result = parsed.get(key);
  if (result === undefined) {
    if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
    parsed.set(key, (result = parsePrompt(source, `${name}.md`)));
  }
  return result;
}

/**
 * Replays the run `material` holds on `host` (the build to check: its Packs' manifests, from
 * the configuration; nothing is called) and `platform` (the Engine's Lua runtime).
 */
export async function checkReplay(platform: LuaPlatform, host: HostConfig, material: ReplayMaterial): Promise<ReplayVerdict> {
  const parsedSource = parseSource(material.source, material.prompt);
  if (!parsedSource.ok) {
    const first = parsedSource.errors[0];
    const place = first?.line === undefined ? '' : `${first.line}:${first.column ?? 1}: `;
    return differs(`the run's own prompt source no longer parses on this build: ${first ? `${place}${first.message}` : 'no title'}`);
  }
  const checked = await checkFork({
    platform,
    host: availableHost(host),
    prompt: parsedSource.prompt satisfies Prompt,
    args: material.args,
    ...(material.untrusted_args ? { untrustedArgs: material.untrusted_args } : {}),
    seed: material.seed,
    runId: material.run_id,
    prefix: { ok: true, journal: material.journal, firstReplaced: null },
  });
  if (checked.ok) return { reproduces: true, entries: material.journal.length };
  const entry = checked.diverged;
  const section = entry?.request.op === 'tool.call' ? (entry.request.origin?.section ?? null) : null;
  return { reproduces: false, step: { chain: entry?.chain ?? null, seq: entry?.seq ?? null, section, words: checked.message } };
}

const differs = (words: string): ReplayVerdict => ({ reproduces: false, step: { chain: null, seq: null, section: null, words } });

/**
 * `host` with every Pack able to serve: the run was prepared (it is in flight), and whether a
 * service answers is the deployment's environment, not its build; a replay calls none.
 */
function availableHost(host: HostConfig): HostConfig {
  return { ...host, packs: host.packs.map((pack) => ({ manifest: pack.manifest, call: pack.call.bind(pack) })) };
}
