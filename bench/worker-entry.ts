/**
 * The Worker the Worker benchmark serves (bench/worker.ts): the real app and run object,
 * the run object's Host holding the peers' W3 pieces (the in-process `grab` tool and a
 * stateless scripted model, ../shared/bench-peers/README.md), and bench-only routes:
 * `POST /bench/evict/:id`, which drops a run object's memory so that the next answer
 * resumes the run by replay, `POST /bench/answer/:id/:ask_id`, which answers a W3 ask and
 * times the resume inside the Worker, `POST /bench/answer-batch`, which times a batch of
 * them back to back, and `GET /bench/fanout?name=fanout|calls&items=N`, which runs
 * the fanout measurement of worker-fanout.ts on the isolate's own LuaPlatform (the one its
 * runs use) and answers it as JSON, `GET /bench/b1?iterations=N`, which measures B1 on
 * that platform against bare VMs of the isolate's factory (worker-b1.ts), and
 * `POST /bench/notify-cost?piece=&count=`, which times one piece of a notification's
 * delivery in a run object (worker-notify-cost.ts).
 */
import '../src/worker/workerd-lua/lua-factory.ts';
import type { HostConfig } from '../src/host/host.ts';
import type { Operator } from '../src/host/operator.ts';
import type { ModelProvider } from '../src/models/provider.ts';
import { userInputPack } from '../packs/index.ts';
import { createApp } from '../src/worker/app.ts';
import { requireApiToken } from '../src/worker/http/auth.ts';
import { runObject } from '../src/worker/run-object/run-ids.ts';
import { isolatePlatform } from '../src/worker/workerd-lua/lua-platform.ts';
import { RunObject as WorkerRunObject } from '../src/worker/run-object/run-object.ts';
import { measureFanout } from './worker-fanout.ts';
import { measureB1 } from './worker-b1.ts';
import { createWorkerdLuaFactory } from '../src/worker/workerd-lua/lua-factory.ts';
import glue from 'wasmoon/dist/glue.wasm';
import type { NotifyTarget } from '../src/config/deployment-config.ts';
import type { D1Database } from '../src/worker/platform-types.ts';
import { modelDirectory } from '../src/models/directory.ts';
import { grabPack, w3Reply } from './workloads.ts';
import { httpToolPacks } from '../src/host/remote/http/http-tool-pack.ts';
import { textVars } from '../src/worker/env.ts';
import { resolveConfigValue } from '../src/config/deployment-config.ts';
import { doNotifyPiece, NOTIFY_PIECES, type NotifyPiece } from './worker-notify-cost.ts';

/** The peers' scripted model: N grab calls (N read from the first user message), then the ask. */
const scriptedModel: ModelProvider = {
  async round(request) {
    const call = w3Reply(request.messages);
    if (!call) return { ok: false, message: 'the bench model answers W3 conversations only' };
    return { ok: true, reply: { content: '', tool_calls: [call], usage: { input_tokens: 10, output_tokens: 5 } } };
  },
};

/**
 * The run object with the bench Host. Runs of the prompt `w3-bare` (W3 under another name)
 * have nothing to deliver: no index rows, no notify target, so that bench/worker.ts can
 * measure what the outbox's deliveries cost W3 beside runs of `w3`, which have both.
 */
export class RunObject extends WorkerRunObject {
  protected override host(operator: Operator): HostConfig {
    // The HTTP tool services of the bundled runvil.yaml (the `callbacks` part names its own).
    const http = httpToolPacks(this.config().packs.values(), { vars: textVars(this.env) });
    // A role with `provider: openai` streams from the environment's OPENAI_BASE_URL (the `stream` part's loopback server).
    const real = modelDirectory(textVars(this.env));
    const models = {
      provider: (config: Parameters<typeof real.provider>[0], role: string) => (config.provider === 'openai' ? real.provider(config, role) : scriptedModel),
    };
    return { packs: [grabPack, userInputPack(), ...http], models, operator };
  }

  protected override indexDb(): D1Database | undefined {
    return this.bare() ? undefined : super.indexDb();
  }

  protected override notifyTargets(): readonly NotifyTarget[] {
    return this.bare() ? [] : super.notifyTargets();
  }

  private bare(): boolean {
    return (this.ctx.storage.kv.get('meta') as { prompt?: string } | undefined)?.prompt === 'w3-bare';
  }

  /** Does one piece of a notification's delivery `count` times (worker-notify-cost.ts), to the first notify target. */
  async notifyPiece(piece: NotifyPiece, count: number): Promise<void> {
    const target = super.notifyTargets()[0]!;
    const vars = textVars(this.env);
    const [url, secret] = [resolveConfigValue(target.url, vars), resolveConfigValue(target.secret, vars)];
    if (!url.ok || !secret.ok) throw new Error('the bench notify target does not resolve');
    await doNotifyPiece({ storage: this.ctx.storage, url: url.value, secret: secret.value }, piece, count);
  }

  /** Drops this object's memory (its storage stays). */
  async evict(): Promise<void> {
    this.ctx.abort('evicted by the benchmark');
  }
}

const app = createApp();
app.post('/bench/evict/:id', requireApiToken, async (c) => {
  await (runObject(c.env, c.req.param('id')) as unknown as RunObject).evict().catch(() => undefined);
  return c.json({ evicted: true });
});

/** A W3 answer's call: it settles once the run has ended; the resume alone (no wait for the index write). */
const RESUME = { waitMs: 60_000, indexed: false };

/**
 * The W3 resume without the local HTTP: the Worker answers the ask through the run object's
 * RPC, which answers once the run has ended, timed in the Worker (workerd's clock moves on
 * I/O, and the call is I/O to the Worker). It times the resume: the answer route also waits
 * for the answer's own index write (read-your-writes), which runs beside the resume and is
 * timed over HTTP (bench/worker-inbox.ts).
 */
app.post('/bench/answer/:id/:ask_id', requireApiToken, async (c) => {
  const run = runObject(c.env, c.req.param('id'));
  const t0 = performance.now();
  const answered = await run.answer(c.req.param('ask_id'), 'blue', null, RESUME);
  if (!answered.ok) return c.json({ error: answered.message }, 409);
  return c.json({ ms: performance.now() - t0, view: answered.view });
});

/**
 * Back-to-back W3 resumes, each of its own run: the answers are sent one after the other and
 * timed together, inside the Worker. workerd's clock moves in whole milliseconds, on I/O; the
 * total over a batch gives the mean resume to a fraction of a millisecond.
 */
app.post('/bench/answer-batch', requireApiToken, async (c) => {
  const asks = await c.req.json<{ run: string; ask: string }[]>();
  const runs = asks.map(({ run }) => runObject(c.env, run));
  const views = [];
  const t0 = performance.now();
  for (const [i, { ask }] of asks.entries()) {
    const answered = await runs[i]!.answer(ask, 'blue', null, RESUME);
    if (!answered.ok) return c.json({ error: answered.message }, 409);
    views.push(answered.view);
  }
  return c.json({ ms: performance.now() - t0, views });
});

/**
 * Seeds the index with `runs` runs (newest last, one second apart, over four prompts and
 * the five statuses) and `asks` pending asks, generated inside SQLite (a recursive CTE), so
 * that `GET /runs` and `GET /asks` can be timed at the scale of a deployment. Its rows
 * belong to no run object.
 */
app.post('/bench/seed-index', requireApiToken, async (c) => {
  const runs = Number(c.req.query('runs') ?? '0');
  const asks = Number(c.req.query('asks') ?? '0');
  const db = c.env.RUNVIL_DB;
  await db.batch([
    db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT OR IGNORE INTO runs (run_id, prompt, status, created_at, ended_at, pending_count, version)
         SELECT printf('%064x', 1000000000 + i), 'seed-' || (i % 4), CASE i % 5 WHEN 0 THEN 'running' WHEN 1 THEN 'suspended' WHEN 2 THEN 'completed' WHEN 3 THEN 'failed' ELSE 'cancelled' END,
           strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'), NULL, i % 2, 1 FROM n`,
      )
      .bind(runs),
    db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT OR IGNORE INTO asks (run_id, ask_id, prompt, task, question, choices, asked_at, expires_at, status, answered_by, closed_at, version)
         SELECT printf('%064x', 2000000000 + i), '0-1', 'seed-' || (i % 4), '0', 'Approve deploy ' || i || '?', '["yes","no"]',
           strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'), NULL, 'pending', NULL, NULL, 1 FROM n`,
      )
      .bind(asks),
  ]);
  return c.json({ runs, asks });
});

/** Times one piece of a notification's delivery, done `count` times in a run object of its own (worker-notify-cost.ts). */
app.post('/bench/notify-cost', requireApiToken, async (c) => {
  const piece = c.req.query('piece') as NotifyPiece;
  if (!NOTIFY_PIECES.includes(piece)) return c.json({ error: 'unknown piece' }, 400);
  const count = Math.max(1, Number(c.req.query('count') ?? '100') || 100);
  const object = c.env.RUNS.get(c.env.RUNS.idFromName('bench-notify-cost')) as unknown as RunObject;
  const t0 = performance.now();
  await object.notifyPiece(piece, count);
  return c.json({ ms: performance.now() - t0 });
});

app.get('/bench/fanout', requireApiToken, async (c) => {
  const name = c.req.query('name') === 'calls' ? 'calls' : 'fanout';
  const items = Number(c.req.query('items') ?? '1000');
  return c.json(await measureFanout(await isolatePlatform(), name, items));
});
app.get('/bench/b1', requireApiToken, async (c) => {
  const iterations = Math.max(1, Number(c.req.query('iterations') ?? '50') || 50);
  return c.json(await measureB1(await isolatePlatform(), await createWorkerdLuaFactory(glue), iterations));
});

// wrangler.toml binds MCP_SESSIONS to this class: an entry that does not export it does not start.
export { McpSession } from '../src/worker/mcp/mcp-session.ts';

export default app;
