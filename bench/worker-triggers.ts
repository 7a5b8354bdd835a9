/**
 * The Worker benchmark's `triggers` part (bench/worker.ts): what a trigger's delivery costs
 * beside a plain start. A GitHub delivery (signed with @octokit/webhooks-methods before the
 * clock starts) to `POST /hooks/bench-gh`, which checks the signature, reads the payload,
 * takes `name` by its JSON path and starts a run of `hello`, beside `POST
 * /prompts/hello/runs` with the same arg, each timed from the request to its 202 (the run
 * started). Both in the same run, interleaved: each round times a batch of each, the batch
 * first in turn alternating, and the row is the median of the rounds' ratios. Goal: at most 1.2x.
 */
import { randomUUID } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { median, now } from './worker-client.ts';
import type { LocalServer } from '../scripts/local-server.mjs';

/** The trigger's secret, in the server's environment. */
export const BENCH_GITHUB_SECRET = 'bench github webhook secret';

/** The `triggers:` of the benchmark's runvil.yaml. */
export const TRIGGERS_YAML = `triggers:
  bench-gh:
    prompt: hello
    from: github
    secret: \${RUNVIL_BENCH_GITHUB_SECRET}
    events: [issues.opened]
    args:
      name: $.sender.login
`;

interface Signed {
  body: string;
  headers: Record<string, string>;
}

async function signedDelivery(): Promise<Signed> {
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title: 'Bench', body: 'x'.repeat(2000) }, sender: { login: 'Ada' } });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': await sign(BENCH_GITHUB_SECRET, body),
    },
  };
}

/** Trigger delivery to the run started, beside a plain start. */
export async function triggerStarts(server: LocalServer, token: string, scale: number): Promise<Record<string, number>> {
  const batch = Math.max(5, Math.round(20 * scale));
  const rounds = Math.max(4, Math.round(12 * scale));
  const timed = async (path: string, init: RequestInit): Promise<number> => {
    const t0 = now();
    const response = await fetch(`${server.base}${path}`, { method: 'POST', ...init });
    const text = await response.text();
    const us = now() - t0;
    if (response.status !== 202) throw new Error(`POST ${path}: ${response.status} ${text}`);
    return us;
  };
  const plain = () => timed('/prompts/hello/runs', { headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ args: { name: 'Ada' } }) });
  const delivered = (signed: Signed) => timed('/hooks/bench-gh', { headers: signed.headers, body: signed.body });
  const runBatch = async (which: 'plain' | 'trigger'): Promise<number[]> => {
    // Signed before the clock starts: a sender's signing is no cost of the server.
    const signed = which === 'trigger' ? await Promise.all(Array.from({ length: batch }, signedDelivery)) : [];
    const times: number[] = [];
    for (let i = 0; i < batch; i++) times.push(which === 'plain' ? await plain() : await delivered(signed[i]!));
    return times;
  };
  // Untimed warm-up of both routes.
  await runBatch('plain');
  await runBatch('trigger');
  const plainAll: number[] = [];
  const triggerAll: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['plain', 'trigger'] as const) : (['trigger', 'plain'] as const);
    const times = { plain: [] as number[], trigger: [] as number[] };
    for (const which of order) times[which] = await runBatch(which);
    plainAll.push(...times.plain);
    triggerAll.push(...times.trigger);
    ratios.push(median(times.trigger) / median(times.plain));
  }
  const [plainUs, triggerUs, ratio] = [median(plainAll), median(triggerAll), median(ratios)];
  console.log(
    `run started (202), median us: POST /prompts/hello/runs ${plainUs.toFixed(0)} | POST /hooks/bench-gh (GitHub, signed) ${triggerUs.toFixed(0)} | ratio ${ratio.toFixed(2)}x (median of ${rounds} interleaved rounds of ${batch}; range ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}; goal <= 1.2x): ${ratio <= 1.2 ? 'within goal' : 'OVER GOAL'}`,
  );
  return { trigger_start_plain_us: Math.round(plainUs), trigger_start_hook_us: Math.round(triggerUs), trigger_start_ratio: +ratio.toFixed(2) };
}
