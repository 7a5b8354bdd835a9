/**
 * The Worker the Worker benchmark serves (bench/worker.ts): the real app and run object,
 * the run object's Host holding the peers' W3 pieces (the in-process `grab` tool and a
 * stateless scripted model, ../shared/bench-peers/README.md), and bench-only routes:
 * `POST /bench/evict/:id`, which drops a run object's memory so that the next answer
 * resumes the run by replay, `POST /bench/answer/:id/:ask_id`, which answers a W3 ask and
 * times the resume inside the Worker, `POST /bench/answer-batch`, which times a batch of
 * them back to back, and `GET /bench/fanout?name=fanout|calls&items=N`, which runs
 * the fanout measurement of worker-fanout.ts on the isolate's own LuaPlatform (the one its
 * runs use) and answers it as JSON, and `GET /bench/b1?iterations=N`, which measures B1 on
 * that platform against bare VMs of the isolate's factory (worker-b1.ts).
 */
import '../src/worker/lua-factory.ts';
import type { HostConfig } from '../src/host/host.ts';
import type { Operator } from '../src/host/operator.ts';
import type { ModelProvider } from '../src/models/provider.ts';
import { userInputPack } from '../packs/index.ts';
import { createApp } from '../src/worker/app.ts';
import { requireApiToken } from '../src/worker/auth.ts';
import { runObject } from '../src/worker/run-ids.ts';
import { isolatePlatform } from '../src/worker/lua-platform.ts';
import { RunObject as WorkerRunObject } from '../src/worker/run-object.ts';
import { measureFanout } from './worker-fanout.ts';
import { measureB1 } from './worker-b1.ts';
import { createWorkerdLuaFactory } from '../src/worker/lua-factory.ts';
import glue from 'wasmoon/dist/glue.wasm';
import { grabPack, w3Reply } from './workloads.ts';
import { httpToolPacks } from '../src/host/http-tool-pack.ts';
import { textVars } from '../src/worker/env.ts';

/** The peers' scripted model: N grab calls (N read from the first user message), then the ask. */
const scriptedModel: ModelProvider = {
  async round(request) {
    const call = w3Reply(request.messages);
    if (!call) return { ok: false, message: 'the bench model answers W3 conversations only' };
    return { ok: true, reply: { content: '', tool_calls: [call], usage: { input_tokens: 10, output_tokens: 5 } } };
  },
};

/** The run object with the bench Host. */
export class RunObject extends WorkerRunObject {
  protected override host(operator: Operator): HostConfig {
    // The HTTP tool services of the bundled runvil.yaml (the `callbacks` part names its own).
    const http = httpToolPacks(this.config().packs.values(), { vars: textVars(this.env) });
    return { packs: [grabPack, userInputPack(), ...http], models: { provider: () => scriptedModel }, operator };
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

/**
 * The W3 resume without the local HTTP: the Worker answers the ask through the run object's
 * RPC, which answers once the run has ended, timed in the Worker (workerd's clock moves on
 * I/O, and the call is I/O to the Worker). It times what the answer route does once the
 * request has reached the Worker.
 */
app.post('/bench/answer/:id/:ask_id', requireApiToken, async (c) => {
  const run = runObject(c.env, c.req.param('id'));
  const t0 = performance.now();
  const answered = await run.answer(c.req.param('ask_id'), 'blue', null, 60_000);
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
    const answered = await runs[i]!.answer(ask, 'blue', null, 60_000);
    if (!answered.ok) return c.json({ error: answered.message }, 409);
    views.push(answered.view);
  }
  return c.json({ ms: performance.now() - t0, views });
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

export default app;
