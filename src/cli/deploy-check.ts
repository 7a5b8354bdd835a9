/**
 * `runvil deploy-check --url URL`: before a deploy, every suspended run of the deployment is
 * replayed on this checkout's build (DESIGN.md Part 3, "Deploys never break a run in
 * flight"). It pages through `GET /runs?status=suspended`, fetches each run's
 * `GET /runs/:id/journal` a few at a time while the replay threads (replay-pool.ts) replay
 * the ones already fetched, and prints the runs whose replay would not reproduce their
 * journal, each with its first differing step and both builds in words; a note for each
 * prompt of prompts/ whose runs started on another version of it (they finish on their own
 * source, so that breaks nothing); and a summary. Exit 1 when a run would break, unless
 * `--force`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { canonicalConfig } from '../config/config-canonical.ts';
import { EMPTY_CONFIG } from '../config/deployment-config.ts';
import { buildWords, deploymentBuild, type DeploymentBuild } from '../host/run-build.ts';
import type { Json } from '../json/json.ts';
import type { DeployCheckCommand } from './args.ts';
import { deploymentConfigFile, loadDeploymentConfig } from './config-file.ts';
import { callDeployment, rootToken, type DeploymentFailure } from './deployment-client.ts';
import type { CliIo } from './io.ts';
import { progressLine } from './progress-line.ts';
import { startReplayPool, type ReplayOutcome, type ReplayPool } from './replay-pool.ts';

/** Runs listed a page at a time (the API's most). */
const PAGE = 200;

/** A run whose replay would not reproduce its journal. */
type Broken = Extract<ReplayOutcome, { verdict: unknown }> & { verdict: { reproduces: false } };

/** Runs `runvil deploy-check`; 0 when every suspended run reproduces (or `--force`), 1 otherwise. */
export async function deployCheckCommand(command: DeployCheckCommand, io: CliIo): Promise<number> {
  const token = rootToken(command.target, io.env);
  const configFile = command.config ?? io.env.RUNVIL_CONFIG ?? deploymentConfigFile(undefined);
  const config = configFile === null ? EMPTY_CONFIG : await loadDeploymentConfig(configFile);
  const local = await deploymentBuild({ config: canonicalConfig(config) });
  const promptsDir = io.env.RUNVIL_PROMPTS_DIR ?? 'prompts';
  const prompts = localPrompts(promptsDir);
  const get = (path: string) => callDeployment(command.target, token, 'GET', path);

  // The first page before any thread starts: an address nobody serves or a refused key says so at once.
  const first = await get(`/runs?status=suspended&limit=${PAGE}`);
  if (!first.ok) return failed(io, first.failure);

  const started = performance.now();
  const threads = command.concurrency ?? availableParallelism();
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(io.env)) if (value !== undefined) env[key] = value;
  // Started at the first run listed: the worker threads load their modules while this thread fetches and replays the first runs.
  let pool: ReplayPool | null = null;
  const replayers = () => (pool ??= startReplayPool(threads, { config: configFile, env, prompts: [...prompts] }));
  const progress = progressLine(io);
  const outcomes: ReplayOutcome[] = [];
  const skipped = { running: 0, ended: 0 };
  let listed = 0;
  let listingDone = false;
  let failure: DeploymentFailure | null = null;

  // Run ids as the pages arrive; fetchers take them as they come, so the journals of one page are fetched while the next is listed.
  const ids: string[] = [];
  const sleepers: (() => void)[] = [];
  const notify = () => sleepers.splice(0).forEach((wake) => wake());
  const take = async (): Promise<string | null> => {
    for (;;) {
      if (failure) return null;
      const id = ids.shift();
      if (id !== undefined) return id;
      if (listingDone) return null;
      await new Promise<void>((resolve) => sleepers.push(resolve));
    }
  };
  const counted = () => progress.update(outcomes.length, listed - skipped.running - skipped.ended, listingDone);
  const listing = (async () => {
    let page: { [key: string]: Json } = first.body;
    for (;;) {
      const runs = Array.isArray(page.runs) ? page.runs : [];
      for (const run of runs) {
        if (run !== null && typeof run === 'object' && !Array.isArray(run) && typeof run.run_id === 'string') ids.push(run.run_id);
      }
      listed += runs.length;
      if (runs.length > 0) replayers();
      counted();
      notify();
      if (typeof page.next_cursor !== 'string' || page.next_cursor === '' || failure) break;
      const next = await get(`/runs?status=suspended&limit=${PAGE}&cursor=${encodeURIComponent(page.next_cursor)}`);
      if (!next.ok) {
        failure ??= next.failure;
        break;
      }
      page = next.body;
    }
    listingDone = true;
    notify();
  })();
  const fetcher = async () => {
    for (let id = await take(); id !== null; id = await take()) {
      const answer = await get(`/runs/${encodeURIComponent(id)}/journal`);
      if (!answer.ok) {
        // Resumed since it was listed: it runs on the build it is on now; nothing to check.
        if (answer.failure.status === 409) skipped.running++;
        else if (answer.failure.status === 404 && /no route/.test(answer.failure.message)) failure ??= olderDeployment(command.target.url);
        else failure ??= answer.failure;
        counted();
        continue;
      }
      if (answer.body.status !== 'suspended') {
        skipped.ended++;
        continue;
      }
      outcomes.push(await replayers().replay(answer.body));
      counted();
    }
  };
  // Enough fetches in flight to keep every thread fed while the deployment answers.
  const fetchers = Array.from({ length: Math.max(4, threads * 4) }, fetcher);
  try {
    await Promise.all([listing, ...fetchers]);
  } finally {
    progress.end();
    await (pool as ReplayPool | null)?.close();
  }
  if (failure) return failed(io, failure);

  const seconds = (performance.now() - started) / 1000;
  io.err(
    `checked ${outcomes.length} suspended run${outcomes.length === 1 ? '' : 's'} in ${seconds.toFixed(1)} s (${rate(outcomes.length, seconds)} runs/s, ${threads} replay thread${threads === 1 ? '' : 's'})\n`,
  );
  return report(io, command, local, outcomes, skipped, promptsDir);
}

/** Prints the runs that would break, the notes and the summary; answers the exit status. */
function report(
  io: CliIo,
  command: DeployCheckCommand,
  local: DeploymentBuild,
  outcomes: readonly ReplayOutcome[],
  skipped: { running: number; ended: number },
  promptsDir: string,
): number {
  const broken: Broken[] = [];
  const unreadable: Extract<ReplayOutcome, { failure: string }>[] = [];
  const otherSource = new Map<string, number>();
  for (const outcome of outcomes) {
    if ('failure' in outcome) {
      unreadable.push(outcome);
      continue;
    }
    if (outcome.otherSource) otherSource.set(outcome.prompt, (otherSource.get(outcome.prompt) ?? 0) + 1);
    if (!outcome.verdict.reproduces) broken.push(outcome as Broken);
  }
  broken.sort((a, b) => a.prompt.localeCompare(b.prompt) || a.run_id.localeCompare(b.run_id));
  io.out(`deploy-check of ${command.target.url} on this checkout's ${buildWords(local)}\n`);
  for (const run of broken) {
    io.out(`\nwould break: run ${run.run_id} of ${run.prompt}\n`);
    io.out(`  started on ${startedWords(run.build, local)}\n`);
    io.out(`  ${run.verdict.step.words}\n`);
  }
  for (const outcome of unreadable) io.out(`\ncould not replay: ${outcome.failure}\n`);
  if (otherSource.size > 0) io.out('\n');
  for (const [prompt, count] of [...otherSource].sort(([a], [b]) => a.localeCompare(b))) {
    const runs = count === 1 ? '1 run' : `${count} runs`;
    io.out(`note: ${runs} of ${prompt} started on another version of ${join(promptsDir, `${prompt}.md`)}; they finish on the source they started with\n`);
  }
  const checked = outcomes.length;
  const meanwhile = skipped.running + skipped.ended > 0 ? ` (${skipped.running + skipped.ended} more resumed or ended while being checked)` : '';
  const bad = broken.length + unreadable.length;
  io.out(
    `\n${checked} suspended run${checked === 1 ? '' : 's'} checked${meanwhile}: ${checked - bad} reproduce${checked - bad === 1 ? 's' : ''} their journal on this build, ${broken.length} would not${
      unreadable.length > 0 ? `, ${unreadable.length} could not be replayed` : ''
    }\n`,
  );
  if (bad === 0) return 0;
  const them = bad === 1 ? 'that run' : `those ${bad} runs`;
  if (command.force) {
    io.err(`runvil: --force: going ahead; ${them} will fail with Determinism when ${bad === 1 ? 'it resumes' : 'they resume'} on this build\n`);
    return 0;
  }
  io.err(
    `runvil: refusing: ${them} would fail with Determinism after this deploy\n  change the build so that ${bad === 1 ? 'it reproduces' : 'they reproduce'}, keep the deployed version for ${
      bad === 1 ? 'it' : 'them'
    } (README "Deploying without breaking runs"), or pass --force to deploy anyway\n`,
  );
  return 1;
}

/** The build a run started on, in words beside the local one. */
function startedWords(build: Json, local: DeploymentBuild): string {
  if (build === null || typeof build !== 'object' || Array.isArray(build) || typeof build.id !== 'string') {
    return 'a build from before runs recorded theirs';
  }
  const started = build as unknown as DeploymentBuild;
  return started.id === local.id ? `this same ${buildWords(started)}` : `${buildWords(started)}, not this one`;
}

/** The prompts the deploy bundles (prompts/*.md), by name. */
function localPrompts(dir: string): Map<string, string> {
  const prompts = new Map<string, string>();
  if (!existsSync(dir)) return prompts;
  for (const file of readdirSync(dir).sort()) {
    if (file.endsWith('.md')) prompts.set(file.slice(0, -3), readFileSync(join(dir, file), 'utf8'));
  }
  return prompts;
}

function failed(io: CliIo, failure: DeploymentFailure): number {
  io.err(`runvil: ${failure.message}\n  ${failure.remedy}\n`);
  return 1;
}

function olderDeployment(url: string): DeploymentFailure {
  return {
    message: `${url} does not serve GET /runs/:id/journal: its Runvil is older than deploy-check, so its runs cannot be replayed here`,
    remedy: 'deploy this version once with --force (its runs in flight are not checked); every deploy after it is checked',
  };
}

const rate = (count: number, seconds: number) => (seconds > 0 ? Math.round(count / seconds) : count);
