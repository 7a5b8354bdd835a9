/**
 * The fault matrix of a run waiting on `input_required` rounds (MCP 2026-07-28): the run
 * object's memory dropped right after each journal entry of a run that writes a file, calls
 * a tool that asks twice (test/support/modern-mcp-server.mjs's asks-twice, on a slot of its
 * own), and writes again; and dropped while the run waits on the first round's ask, the
 * second's, or both. Every time the run ends as an undisturbed one does (the same result,
 * events and file), and the server sees the call once and each retry once: a round kept in the
 * run's storage is never sent again from the call's start.
 */
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { runInDurableObject } from 'cloudflare:test';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { clearMcpToolListCache } from '../../src/host/remote/mcp/mcp-tool-list.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import type { RunView, StreamEvent } from '../../src/worker/run-object/run-view.ts';
import { call, getRun, json, kvRecord, testEnv, untilServed, untimed } from './app/client.ts';
import { armFault, dropObjects, openVms } from './app/test-worker.ts';

vi.setConfig({ testTimeout: 30_000 });

const SLOT = `${inject('modernMcp').origin}/s/faults`;
const ANSWERS = new Map<string, object>([
  ['0-2', { name: 'Ada' }],
  ['0-2.1', { colour: 'green' }],
]);

const PROMPT = `---
name: rounds
description: Writes, calls a tool that asks twice, writes.
runvil: 0
uses: [acme/modern]
---

# Rounds

## Go

\`\`\`lua
store.write('log.txt', 'start\\n')
local out = tools.call('modern/asks-twice', {})
store.append('log.txt', out .. '\\n')
return out
\`\`\`
`;

const stubOf = (runId: string) => testEnv.RUNS.get(testEnv.RUNS.idFromString(runId)) as unknown as object;

interface Finished {
  view: RunView;
  events: StreamEvent[];
  log: string;
  calls: { inputResponses: string[]; requestState: string | null }[];
}

async function start(): Promise<string> {
  await fetch(`${SLOT}/calls`, { method: 'DELETE' });
  return (await json<{ run_id: string }>(await call('POST', '/prompts/rounds/runs', { body: { args: {}, seed: 'rounds' } }), 202)).run_id;
}

/** Answers each ask the run waits on (an answer whose response was lost to a fault is sent again); `dropAt` drops the object's memory before answering those asks. */
async function drive(runId: string, dropAt: ReadonlySet<string> = new Set()): Promise<RunView> {
  const dropped = new Set<string>();
  for (;;) {
    const view = await untilServed(runId);
    if (view.status !== 'suspended') return view;
    const ask = view.pending[0]!;
    if (ask.kind === 'ask' && dropAt.has(ask.ask_id) && !dropped.has(ask.ask_id)) {
      dropped.add(ask.ask_id);
      await dropObjects();
      continue;
    }
    await call('POST', `/runs/${runId}/asks/${ask.kind === 'ask' ? ask.ask_id : ''}`, { body: { answer: ANSWERS.get(ask.kind === 'ask' ? ask.ask_id : '') } });
  }
}

async function finished(runId: string): Promise<Finished> {
  const view = await getRun(runId);
  const record = await kvRecord<{ events: StreamEvent[] }>(runId);
  const log = await (await call('GET', `/runs/${runId}/files/log.txt`)).text();
  const calls = ((await (await fetch(`${SLOT}/calls`)).json()) as Finished['calls']).map(({ inputResponses, requestState }) => ({
    inputResponses,
    requestState,
  }));
  return { view, events: untimed(record.events), log, calls };
}

/** How many journal entries the run's storage holds. */
const journalLength = (runId: string): Promise<number> =>
  runInDurableObject(
    stubOf(runId),
    (_instance: unknown, state: { storage: { kv: { get(key: string): { journal: number } } } }) => state.storage.kv.get('progress').journal,
  );

let baseline: Finished;
let entries = 0;

beforeAll(async () => {
  const parsed = parseDeploymentConfig(`packs:\n  acme/modern:\n    mcp: { url: "${SLOT}/mcp" }\n`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  replaceDeploymentConfig(parsed.config);
  clearMcpToolListCache();
  await json(await call('PUT', '/prompts/rounds', { body: PROMPT }), 201);
  const runId = await start();
  await drive(runId);
  baseline = await finished(runId);
  entries = await journalLength(runId);
});
afterAll(() => replaceDeploymentConfig(null));

/** What every row expects: the undisturbed run's end, and the call and each retry sent once. */
function expectUndisturbed(after: Finished): void {
  expect(after.view.status).toBe('completed');
  expect(after.view.result).toBe(baseline.view.result);
  expect(after.events).toEqual(baseline.events);
  expect(after.log).toBe(baseline.log);
  expect(after.calls).toEqual(baseline.calls);
}

describe('the fault matrix of a run waiting on input_required rounds', () => {
  it('has an undisturbed baseline: the call, then a retry a round', () => {
    expect(baseline.view.result).toContain('Ada likes green');
    expect(baseline.calls.map(({ inputResponses }) => inputResponses)).toEqual([[], ['name'], ['colour']]);
    expect(entries).toBeGreaterThanOrEqual(3);
  });

  for (const [name, dropAt] of [
    ['while it waits on the first round', ['0-2']],
    ['while it waits on the second round', ['0-2.1']],
    ['while it waits on each round', ['0-2', '0-2.1']],
  ] as const) {
    it(`memory dropped ${name}: the same end, the call and each retry sent once`, async () => {
      const runId = await start();
      await drive(runId, new Set(dropAt));
      expectUndisturbed(await finished(runId));
      expect(await openVms()).toBe(0);
    });
  }

  it('memory dropped right after each journal entry: the same end, the call and each retry sent once', async () => {
    for (let entry = 1; entry <= entries; entry++) {
      const fault = armFault(entry);
      const runId = await start();
      const dropped = fault.then(() => dropObjects());
      await drive(runId);
      await dropped;
      expectUndisturbed(await finished(runId));
    }
    expect(await openVms()).toBe(0);
  });
});
