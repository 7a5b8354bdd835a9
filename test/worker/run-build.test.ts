/**
 * Deploys never break a run in flight (DESIGN.md Part 3, issue 31), in workerd: each run
 * records the build it started on (the Engine, the Lua runtime, the configuration, its
 * prompt source, its Packs' tool lists), shown by its view, `GET /runs` and its KV record;
 * `GET /runs/:id/journal` gives what a replay of a run needs, for a run that is not running;
 * and a run suspended on an ask that resumes on a deployment whose configuration changed what
 * its replay asks for fails with Determinism naming the step and both builds, the diverged
 * tool call never made.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConfiguredPack, DeploymentConfig } from '../../src/config/deployment-config.ts';
import { canonicalConfig } from '../../src/config/config-canonical.ts';
import type { JournalEntry } from '../../src/engine/journal.ts';
import { deploymentBuild, ENGINE_VERSION, type RunBuild } from '../../src/host/run-build.ts';
import { EMPTY_CONFIG } from '../../src/config/deployment-config.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { call, drive, getRun, json, kvRecord, settled, testEnv, until, type RunView } from './app/client.ts';
import { armFault, dropObjects } from './app/test-worker.ts';
import { performedBy } from './app/test-host.ts';
import { GREET, WAITER } from './app/prompts.ts';
import { acrossBuilds } from '../../src/worker/run-object/build-change.ts';

/** An HTTP tool service runvil.yaml configures; its tool's description is what a deploy changes here. */
const notesPack = (description: string): ConfiguredPack => ({
  fqName: 'acme/notes',
  description: 'Keeps notes.',
  trusted: true,
  source: {
    kind: 'http',
    url: 'https://notes.test/runvil-tools',
    secret: '${DEPLOY_SECRET}',
    tools: [{ name: 'write', description, parameters: { type: 'object', properties: {} }, output: 'plain', timeoutSeconds: 900 }],
  },
});

const configWith = (description: string): DeploymentConfig => ({ ...EMPTY_CONFIG, packs: new Map([['acme/notes', notesPack(description)]]) });

/** Ticks the counter with the configured tool's description (what the run's Lua reads of its deployment), then asks. */
const DRIFTER = `---
name: drifter
description: Ticks with a configured tool's description, then asks.
runvil: 0
uses: [user-input, acme/counter, acme/notes]
---
# Drifter

## Tick
\`\`\`lua
tools.call('counter/tick', { label = tools.get('notes/write').description })
return 'ticked, then ' .. tools.call('user-input/ask', { question = 'Go on?' })
\`\`\`
`;

const SHA256 = /^sha256:[0-9a-f]{64}$/;

/** Starts a run of `prompt` and waits until it suspends or ends. */
async function startSettled(prompt: string, args: object = {}) {
  const started = await json<{ run_id: string }>(await call('POST', `/prompts/${prompt}/runs`, { body: { args } }), 202);
  return settled(started.run_id);
}

/** The run's row of GET /runs, once the index holds it at `status`. */
async function listedRow(runId: string, status: string): Promise<{ run_id: string; status: string; build: RunBuild | null }> {
  for (let i = 0; i < 500; i++) {
    const page = await json<{ runs: { run_id: string; status: string; build: RunBuild | null }[] }>(await call('GET', '/runs?limit=100'), 200);
    const row = page.runs.find((run) => run.run_id === runId);
    if (row?.status === status) return row;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${runId} is never listed as ${status}`);
}

beforeAll(async () => {
  for (const [name, source] of [
    ['greet', GREET],
    ['waiter', WAITER],
    ['drifter', DRIFTER],
  ]) {
    await json(await call('PUT', `/prompts/${name}`, { body: source }), 201);
  }
});

afterEach(() => replaceDeploymentConfig(null));

describe("a run's build", () => {
  it("is recorded when the run starts: the deployment's Engine, Lua runtime and configuration, the prompt source's digest", async () => {
    replaceDeploymentConfig(configWith('Writes a note (v1).'));
    const run = await startSettled('drifter');
    expect(run.status).toBe('suspended');
    const expected = await deploymentBuild({ config: canonicalConfig(configWith('Writes a note (v1).')) });
    expect(run.build).toMatchObject({ id: expected.id, engine: ENGINE_VERSION, lua: expected.lua, config: expected.config, packs: {} });
    expect(run.build!.prompt).toMatch(SHA256);
  });

  it('differs between runs of another configuration only in config and id, and between prompts only in prompt', async () => {
    const greet = await startSettled('greet');
    const waiter = await startSettled('waiter');
    replaceDeploymentConfig(configWith('Writes a note (v2).'));
    const other = await startSettled('greet');
    expect(waiter.build).toEqual({ ...greet.build, prompt: waiter.build!.prompt });
    expect(waiter.build!.prompt).not.toBe(greet.build!.prompt);
    expect(other.build).toMatchObject({ engine: greet.build!.engine, lua: greet.build!.lua, prompt: greet.build!.prompt });
    expect(other.build!.config).not.toBe(greet.build!.config);
    expect(other.build!.id).not.toBe(greet.build!.id);
  });

  it("is on the run's row of GET /runs and in its record in KV once it ended", async () => {
    const run = await startSettled('greet', { name: 'rows' });
    expect(run.status).toBe('completed');
    expect((await listedRow(run.run_id, 'completed')).build).toEqual(run.build);
    expect((await kvRecord(run.run_id)).build).toEqual(run.build);
  });

  it('is kept by a suspended run that its object was dropped from, and by a fork, with its own prompt digest', async () => {
    const run = await startSettled('waiter');
    expect((await listedRow(run.run_id, 'suspended')).build).toEqual(run.build);
    await dropObjects();
    expect((await getRun(run.run_id)).build).toEqual(run.build);
    const forked = await json<{ run_id: string }>(
      await call('POST', `/runs/${run.run_id}/fork`, { body: { at: 0, source: WAITER.replace('Waits on one ask.', 'Waits on one ask, forked.') } }),
      202,
    );
    const fork = await settled(forked.run_id);
    expect(fork.build).toMatchObject({ id: run.build!.id, lua: run.build!.lua, config: run.build!.config });
    expect(fork.build!.prompt).not.toBe(run.build!.prompt);
  });
});

describe('a run started before runs recorded their build', () => {
  it('shows build null in its view, its journal and its KV record, and still resumes and completes', async () => {
    const run = await startSettled('waiter');
    const stub = testEnv.RUNS.get(testEnv.RUNS.idFromString(run.run_id));
    // The run as a Worker from before this change stored it: no build in its meta, no Pack digests.
    await runInDurableObject(
      stub,
      (_instance: unknown, state: { storage: { kv: { get(key: string): any; put(key: string, value: unknown): void; delete(key: string): boolean } } }) => {
        const { build: _build, ...meta } = state.storage.kv.get('meta');
        state.storage.kv.put('meta', meta);
        state.storage.kv.delete('build-packs');
      },
    );
    await dropObjects();
    expect((await getRun(run.run_id)).build).toBeNull();
    expect((await json<{ build: unknown }>(await call('GET', `/runs/${run.run_id}/journal`), 200)).build).toBeNull();
    const ended = await drive(run.run_id, ['later']);
    expect(ended).toMatchObject({ status: 'completed', result: 'got later', build: null });
    expect((await kvRecord(run.run_id)).build).toBeNull();
    expect((await listedRow(run.run_id, 'completed')).build).toBeNull();
  });

  it('reads build null from a KV record written before builds were kept', async () => {
    const runId = testEnv.RUNS.newUniqueId().toString();
    const { build: _build, ...old } = (await getRun((await startSettled('greet')).run_id)) as RunView & { build: unknown };
    await testEnv.RUNVIL_KV.put(`runs/${runId}/record`, JSON.stringify({ ...old, run_id: runId, args: {}, files: [], events: [] }));
    const view = await getRun(runId);
    expect(view.run_id).toBe(runId);
    expect(view.build).toBeNull();
  });
});

/** GET /runs/:id/journal's body. */
interface JournalBody {
  run_id: string;
  prompt: string;
  status: string;
  source: string;
  args: Record<string, unknown>;
  untrusted_args?: string[];
  seed: string;
  journal: JournalEntry[];
  packs: unknown[] | null;
  build: RunBuild | null;
}

describe('GET /runs/:id/journal', () => {
  it('gives a suspended run: its source, args, seed, journal, Packs and build', async () => {
    const run = await startSettled('waiter');
    const body = await json<JournalBody>(await call('GET', `/runs/${run.run_id}/journal`), 200);
    expect(Object.keys(body)).toEqual(['run_id', 'prompt', 'status', 'source', 'args', 'seed', 'journal', 'packs', 'build']);
    expect(body).toMatchObject({ run_id: run.run_id, prompt: 'waiter', status: 'suspended', source: WAITER, args: {}, packs: [], build: run.build });
    expect(body.seed).toMatch(/./);
    expect(body.journal.map((entry) => entry.request.op)).toEqual([]);
  });

  it('gives a completed run, with every journal entry', async () => {
    const run = await startSettled('greet', { name: 'journal' });
    const body = await json<JournalBody>(await call('GET', `/runs/${run.run_id}/journal`), 200);
    expect(body).toMatchObject({ status: 'completed', args: { name: 'journal', times: 1 }, build: run.build });
    expect(body.journal.map((entry) => entry.request.op)).toEqual(['store.write', 'store.read']);
  });

  it('gives an ask the run answered, in its journal', async () => {
    const run = await startSettled('waiter');
    const ended = await drive(run.run_id, ['yes']);
    expect(ended.result).toBe('got yes');
    const body = await json<JournalBody>(await call('GET', `/runs/${run.run_id}/journal`), 200);
    expect(body.journal).toHaveLength(1);
    expect(body.journal[0]!.request).toMatchObject({ op: 'tool.call', tool: 'user-input/ask' });
    expect(body.journal[0]!.answer).toMatchObject({ ok: true, value: 'yes' });
  });

  it('refuses a running run with 409: its journal still grows', async () => {
    const held = armFault(1);
    const started = await json<{ run_id: string }>(await call('POST', '/prompts/greet/runs', { body: { args: { name: 'busy' } } }), 202);
    await held;
    const response = await call('GET', `/runs/${started.run_id}/journal`);
    const body = await json<{ error: { message: string; reason: string } }>(response, 409);
    expect(body.error.reason).toBe('running');
    expect(body.error.message).toMatch(/is running; its journal still grows/);
    await dropObjects();
    await settled(started.run_id);
  });

  it('answers 404 for a run that does not exist', async () => {
    const id = testEnv.RUNS.newUniqueId().toString();
    expect((await call('GET', `/runs/${id}/journal`)).status).toBe(404);
  });

  it('refuses a key without runs:read with 403 naming the scope', async () => {
    const run = await startSettled('waiter');
    for (const scopes of [['runs:start:*'], ['asks:answer:*'], ['prompts:write'], ['runs:start:waiter', 'asks:answer:waiter']]) {
      const { key } = await json<{ key: string }>(await call('POST', '/keys', { body: { name: scopes.join(' '), scopes } }), 201);
      const response = await call('GET', `/runs/${run.run_id}/journal`, { token: key });
      const body = await json<{ error: { scope: string } }>(response, 403);
      expect(body.error.scope).toBe('runs:read');
    }
    const { key } = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'reader', scopes: ['runs:read'] } }), 201);
    expect((await call('GET', `/runs/${run.run_id}/journal`, { token: key })).status).toBe(200);
    expect((await call('GET', `/runs/${run.run_id}/journal`, { token: null })).status).toBe(401);
  });
});

describe('a run that resumes on another build', () => {
  it('completes when the change does not touch what its replay asks for', async () => {
    replaceDeploymentConfig(configWith('Writes a note (v1).'));
    const waiting = await startSettled('drifter');
    replaceDeploymentConfig({ ...configWith('Writes a note (v1).'), publicUrl: 'https://runvil.example' });
    await dropObjects();
    const ended = await drive(waiting.run_id, ['yes']);
    expect(ended.status).toBe('completed');
    expect(ended.result).toBe('ticked, then yes');
    expect(ended.build).toEqual(waiting.build);
    // The tick was replayed from the journal, not made again.
    expect(performedBy(waiting.run_id).filter((line) => line.startsWith('counter/tick'))).toEqual(['counter/tick Writes a note (v1).']);
  });

  it('fails with Determinism naming the step and both builds when its replay diverges, and never makes the diverged call', async () => {
    replaceDeploymentConfig(configWith('Writes a note (v1).'));
    const run = await startSettled('drifter');
    expect(run.status).toBe('suspended');
    expect(performedBy(run.run_id)).toEqual(['counter/tick Writes a note (v1).', 'user-input/ask Go on?']);
    const started = run.build!;

    // The deploy: a new configuration, and every object restarts on it.
    replaceDeploymentConfig(configWith('Writes a note (v2).'));
    await dropObjects();
    const resumed = await deploymentBuild({ config: canonicalConfig(configWith('Writes a note (v2).')) });
    await json(await call('POST', `/runs/${run.run_id}/asks/${run.pending[0]!.ask_id}`, { body: { answer: 'yes' }, token: run.pending[0]!.token }), 200);
    const ended = await until(run.run_id, (view) => view.status !== 'running' && view.status !== 'suspended');

    expect(ended.status).toBe('failed');
    const error = ended.error as NonNullable<typeof ended.error>;
    expect(error.kind).toBe('Determinism');
    expect(error.message).toContain('the run diverged from its journal at effect 1 of chain 0, in section "## Tick"');
    expect(error.message).toContain('counter/tick');
    expect(error.message).toContain('Writes a note (v2).');
    expect(error.message).toContain(
      `the run started on build ${started.id} (engine ${ENGINE_VERSION}, lua ${started.lua.slice(0, 15)}…, config ${started.config.slice(0, 15)}…)`,
    );
    expect(error.message).toContain(
      `and resumed on build ${resumed.id} (engine ${ENGINE_VERSION}, lua ${resumed.lua.slice(0, 15)}…, config ${resumed.config.slice(0, 15)}…)`,
    );
    expect(error.started_build).toEqual({ id: started.id, engine: started.engine, lua: started.lua, config: started.config });
    expect(error.resumed_build).toEqual(resumed);
    // The run's own record is as it was: the build it started on.
    expect(ended.build).toEqual(started);
    // Nothing performed for the diverged step, nor after it.
    expect(performedBy(run.run_id)).toEqual(['counter/tick Writes a note (v1).', 'user-input/ask Go on?']);
    // The event stream ends with a run_failed that says the same.
    const events = (await (await call('GET', `/runs/${run.run_id}/events`)).text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as { type: string; error?: unknown });
    expect(events.at(-1)).toMatchObject({
      type: 'run_failed',
      error: { kind: 'Determinism', message: error.message, started_build: error.started_build, resumed_build: resumed },
    });
  });
});

describe('a Determinism error across builds (build-change.ts)', () => {
  const started = { id: 'aaaaaaaaaaaa', engine: ENGINE_VERSION, lua: `sha256:${'1'.repeat(64)}`, config: `sha256:${'2'.repeat(64)}` };
  const resumed = { ...started, id: 'bbbbbbbbbbbb', config: `sha256:${'3'.repeat(64)}` };
  const diverged = { kind: 'Determinism', message: 'the run diverged from its journal at effect 1 of chain 0' };

  it('names both builds only for a Determinism error on another build than the run started on', () => {
    expect(acrossBuilds(diverged, { ...started, prompt: `sha256:${'4'.repeat(64)}`, packs: {} } as never, resumed)).toEqual({
      kind: 'Determinism',
      message: expect.stringMatching(
        /^the run diverged from its journal at effect 1 of chain 0; the run started on build aaaaaaaaaaaa \(engine [^)]+\) and resumed on build bbbbbbbbbbbb \(/,
      ),
      started_build: started,
      resumed_build: resumed,
    });
    expect(acrossBuilds(diverged, started, { ...started })).toBe(diverged);
    expect(acrossBuilds(diverged, null, resumed)).toBe(diverged);
    expect(acrossBuilds(diverged, started, null)).toBe(diverged);
    for (const kind of ['Lua', 'Tool', 'Limit', 'Cancelled', 'Model']) {
      const error = { kind, message: 'it failed' };
      expect(acrossBuilds(error, started, resumed)).toBe(error);
    }
  });
});
