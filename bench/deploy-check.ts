/**
 * `npm run bench:deploy`: `runvil deploy-check` over 1,000 suspended runs on the local server
 * (issue 31's goal: at least 100 runs a second on the 2-core machine), beside two baselines
 * measured in the same process, so the figure is a ratio too:
 *
 * - fetch alone: the same listing and journal fetches, as many in flight, with no replay (the
 *   most the check could reach with free replays);
 * - replay alone: one of the runs replayed N times in this process, on one thread (what one
 *   core replays with no fetching).
 *
 * Each run uploads-and-starts `bench-deploy`, which writes a file, reads the clock and asks
 * twice; the first ask answered, it is suspended on the second with three journal entries.
 * The runs are started over HTTP in parallel batches. BENCH_SCALE=0.1 makes it 100 runs.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, killLocalServer, startLocalServer, type LocalServer } from '../scripts/local-server.mjs';
import { cliPlatform } from '../src/cli/platform.ts';
import { replayHosts } from '../src/cli/replay-host.ts';
import { EMPTY_CONFIG } from '../src/config/deployment-config.ts';
import { checkReplay, type ReplayMaterial } from '../src/host/replay-check.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const RUNS = Math.max(10, Math.round(1000 * scale));
const BATCH = 16;
const TOKEN = 'bench-deploy-root';

const PROMPT = `---
name: bench-deploy
description: Writes a file, reads the clock, asks twice.
runvil: 0
uses: [user-input]
args:
  n: { type: integer }
---
# Bench deploy

## Ask
\`\`\`lua
store.write('n.txt', tostring(args.n))
var.at = sys.now()
var.owner = tools.call('user-input/ask', { question = 'Who owns ' .. json.encode({ n = args.n }) .. '?' })
var.date = tools.call('user-input/ask', { question = 'When?' })
return var.owner .. var.date
\`\`\`
`;

let server: LocalServer | undefined;

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${server!.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}` },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** Starts one run and answers its first ask; it is then suspended on the second. */
async function seedOne(n: number): Promise<void> {
  const started = await call('POST', '/prompts/bench-deploy/runs?wait=30', { args: { n } });
  const ask = started.pending?.[0];
  if (started.status !== 'suspended' || !ask) throw new Error(`run ${started.run_id} did not suspend: ${JSON.stringify(started)}`);
  await call('POST', `/runs/${started.run_id}/asks/${ask.ask_id}`, { answer: 'ann' });
}

async function listedSuspended(): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { runs: { run_id: string }[]; next_cursor: string | null } = await call(
      'GET',
      `/runs?status=suspended&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    ids.push(...page.runs.map((run) => run.run_id));
    cursor = page.next_cursor;
  } while (cursor);
  return ids;
}

/** The check's fetching alone: list, then every journal with `inFlight` requests at a time. */
async function fetchAlone(inFlight: number): Promise<{ seconds: number; sample: ReplayMaterial }> {
  const started = performance.now();
  const ids = await listedSuspended();
  let sample: ReplayMaterial | undefined;
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < ids.length) {
        const material = (await call('GET', `/runs/${ids[next++]!}/journal`)) as ReplayMaterial;
        sample ??= material;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, sample: sample! };
}

/** `runvil deploy-check` as a user runs it (its own process); the wall time and its count line. */
function deployCheck(): Promise<{ seconds: number; status: number | null; line: string; stdout: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/runvil.mjs', 'deploy-check', '--url', server!.base], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, RUNVIL_API_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (status) =>
      resolve({ seconds: (performance.now() - started) / 1000, status, line: /^checked .*$/m.exec(stderr)?.[0] ?? stderr.trim(), stdout }),
    );
  });
}

async function main(): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'runvil-bench-deploy-'));
  try {
    server = await startLocalServer({ port: await freePort(), token: TOKEN, stateDir });
    await call('PUT', '/prompts/bench-deploy', PROMPT);
    const seeding = performance.now();
    for (let n = 0; n < RUNS; n += BATCH) await Promise.all(Array.from({ length: Math.min(BATCH, RUNS - n) }, (_, k) => seedOne(n + k)));
    for (let i = 0; (await listedSuspended()).length < RUNS; i++) {
      if (i > 600) throw new Error(`the index never listed ${RUNS} suspended runs`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log(`seeded ${RUNS} suspended runs in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

    const fetched = await fetchAlone(8);
    const replayPlatform = await cliPlatform();
    const host = await replayHosts(EMPTY_CONFIG, {})(null);
    const REPLAYS = Math.min(RUNS, 300);
    const replaying = performance.now();
    for (let i = 0; i < REPLAYS; i++) {
      const verdict = await checkReplay(replayPlatform, host, fetched.sample);
      if (!verdict.reproduces) throw new Error(`the sample run does not reproduce: ${verdict.step.words}`);
    }
    const replaySeconds = (performance.now() - replaying) / 1000;
    const checked = await deployCheck();
    if (checked.status !== 0 || !checked.stdout.includes(`${RUNS} suspended runs checked: ${RUNS} reproduce`)) {
      throw new Error(`deploy-check did not pass over the runs: ${JSON.stringify(checked)}`);
    }

    const rows = [
      ['fetch alone (8 in flight, no replay)', RUNS / fetched.seconds],
      ['replay alone (one run, one thread, in-process)', REPLAYS / replaySeconds],
      ['runvil deploy-check (wall time, with its start)', RUNS / checked.seconds],
    ] as const;
    console.log(
      `\ndeploy-check over ${RUNS} suspended runs (${fetched.sample.journal.length} journal entries each), load average ${loadavg()[0]!.toFixed(1)}:`,
    );
    for (const [what, rate] of rows) console.log(`  ${what.padEnd(50)} ${rate.toFixed(0).padStart(6)} runs/s`);
    console.log(`  its own count line: ${checked.line}`);
    console.log(`  deploy-check / fetch alone: ${(rows[2][1] / rows[0][1]).toFixed(2)}x; goal: at least 100 runs/s`);
  } finally {
    await killLocalServer(server);
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
