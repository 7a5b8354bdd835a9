/**
 * The run object's side of "a run becomes a test; a run forks": its test file, what a fork
 * of it starts from, and the checks and file changes of a fork it starts itself. The run
 * object (run-object.ts) calls these with its state and Host.
 */
import type { JournalEntry } from '../../engine/journal.ts';
import { checkFork, rebaseJournal } from '../../host/fork.ts';
import type { HostConfig } from '../../host/host.ts';
import { servicesOf } from '../../host/harness.ts';
import { runTestFile } from '../../host/run-test-file.ts';
import { isolatePlatform } from '../workerd-lua/lua-platform.ts';
import { parsePromptCached } from '../deployment/parsed-prompts.ts';
import type { ForkSource, ForkSpec, Refusal } from './run-object-api.ts';
import type { RunState } from './run-state.ts';
import { isFinal } from './run-view.ts';

/** The test file of the run `state` holds, served by `host`; refused unless the run completed or failed. */
export function testFileOf(state: RunState, host: HostConfig): { ok: true; text: string } | Refusal {
  const meta = state.meta()!;
  const progress = state.progress();
  if (!isFinal(progress.status)) {
    return {
      ok: false,
      reason: 'not-ended',
      status: 409,
      message: `run ${meta.run_id} is ${progress.status}; a test file is made from a run that has ended (completed or failed)`,
    };
  }
  if (progress.status === 'cancelled') {
    return {
      ok: false,
      reason: 'cancelled',
      status: 409,
      message: `run ${meta.run_id} was cancelled: a test file reproduces how a run ended, and a cancellation comes from outside the run (POST /runs/:id/fork starts a new run from its journal instead)`,
    };
  }
  const parsed = parsePromptCached(state.source(), `${meta.prompt}.md`);
  const declared = new Set(parsed.ok ? parsed.prompt.frontmatter.uses.map((entry) => entry.fqName) : []);
  const served = host.packs.filter((pack) => declared.has(pack.manifest.fqName) && !pack.manifest.fqName.startsWith('runvil/'));
  const services = servicesOf(host.services);
  const unavailable = new Map<string, string>();
  for (const pack of served) {
    const reason = pack.unavailableReason?.(services) ?? null;
    if (reason !== null) unavailable.set(pack.manifest.fqName, reason);
  }
  const text = runTestFile({
    run_id: meta.run_id,
    prompt: meta.prompt,
    source: state.source(),
    args: state.args(),
    ...(meta.untrusted_args ? { untrusted_args: meta.untrusted_args } : {}),
    seed: meta.seed,
    journal: state.journal(),
    ending:
      progress.status === 'completed'
        ? { status: 'completed', result: state.result() ?? '' }
        : { status: 'failed', error: progress.error ?? { kind: 'Lua', message: '' } },
    // The Engine's events (they say where they happened); the run object's own (asks, suspensions) are no part of a replay.
    events: state
      .events()
      .filter((event) => 'turn' in event)
      .map((event) => ({ type: event.type, task: String(event.task) })),
    packs: served.map((pack) => pack.manifest),
    unavailable,
  });
  return { ok: true, text };
}

/** What a fork of the run starts from; refused while it runs (its journal still grows). */
export function forkSourceOf(state: RunState): ForkSource | Refusal {
  const meta = state.meta()!;
  const status = state.progress().status;
  if (status === 'running') {
    return {
      ok: false,
      reason: 'running',
      status: 409,
      message: `run ${meta.run_id} is running; a fork starts from a journal that stands still: fork it once it has suspended or ended`,
    };
  }
  return {
    ok: true,
    run_id: meta.run_id,
    status,
    prompt: meta.prompt,
    source: state.source(),
    args: state.args(),
    ...(meta.untrusted_args ? { untrusted_args: meta.untrusted_args } : {}),
    seed: meta.seed,
    journal: state.journal(),
    packs: state.packSnapshots(),
    build: state.build(),
  };
}

/** Checks that the fork's prompt reproduces its journal; the journal it starts from (cut where a changed answer made the rest stale). */
export async function checkedForkJournal(spec: ForkSpec, host: HostConfig, runId: string): Promise<{ ok: true; journal: JournalEntry[] } | Refusal> {
  const parsed = parsePromptCached(spec.source, `${spec.prompt}.md`);
  if (!parsed.ok)
    return { ok: false, reason: 'fork-diverges', status: 409, message: `the fork's prompt does not parse: ${parsed.errors[0]?.message ?? 'no title'}` };
  const checked = await checkFork({
    platform: await isolatePlatform(),
    host,
    prompt: parsed.prompt,
    args: spec.args,
    ...(spec.untrusted_args ? { untrustedArgs: spec.untrusted_args } : {}),
    seed: spec.seed,
    runId,
    prefix: { ok: true, journal: rebaseJournal(spec.journal, spec.forked_from.run_id, runId), firstReplaced: spec.first_replaced },
  });
  if (!checked.ok) {
    return {
      ok: false,
      reason: 'fork-diverges',
      status: 409,
      message: `the prompt cannot reproduce the first ${spec.forked_from.at} journal entries of run ${spec.forked_from.run_id}: ${checked.message}`,
    };
  }
  return checked;
}
