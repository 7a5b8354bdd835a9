/**
 * Values from outside pushed into a section VM near its memory cap, through every path that
 * carries them in: a tool's output (plain and structured), a model's reply, an operator's
 * answer, a file read back, the run's args. Each run completes or ends with `Limit`; none
 * aborts the Lua runtime (`PANIC: unprotected error`, `Aborted(...)`), and the platform runs
 * the next prompt as if nothing happened. Written as an attacker would size the values.
 */
import { describe, expect, it } from 'vitest';
import type { RunLimits } from '../../src/engine/budget.ts';
import type { RunOutcome } from '../../src/engine/run.ts';
import { fixtureHost, type FixtureHostSpec } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import { TOOL_OUTPUT_BYTES } from '../../src/host/tool-output-cap.ts';
import type { ScriptedReply } from '../../src/models/scripted.ts';
import type { Prompt } from '../../src/prompt/types.ts';
import { lua, newPlatform, resultOf, run } from './helpers.ts';

const platform = await newPlatform();

const KiB = 1024;
const MiB = 1024 * KiB;
/** A section VM's cap in these runs: the region it starts in (512 KiB) and as much again. */
const VM_CAP = 1 * MiB;
/** Sizes around what is left of the VM's cap once it is set up, up to the tool output cap. */
const NEAR_THE_CAP = [256 * KiB, 400 * KiB, 480 * KiB, 512 * KiB, 600 * KiB, 900 * KiB, TOOL_OUTPUT_BYTES - 64];

/** The Limit messages a run here may end with: its VM's memory cap, or (a value that came as a tool output) the output cap. */
const MEMORY_OR_OUTPUT_CAP = /memory limit of (1|16) MiB \(memoryBytes\)|answered more than the cap of 1 MiB on one tool output/;

/** What every run here must end as: completed, or `Limit` for memory; never an abort, never an internal error. */
function expectCompletedOrMemoryLimit(outcome: RunOutcome): void {
  const text = JSON.stringify(outcome.status === 'failed' ? outcome.error : outcome.result);
  expect(text).not.toMatch(/PANIC|Aborted|unprotected|internal error/);
  if (outcome.status === 'failed') {
    expect(outcome.error.kind).toBe('Limit');
    expect(outcome.error.message).toMatch(MEMORY_OR_OUTPUT_CAP);
  }
}

/** The platform still runs an honest prompt. */
async function expectPlatformUnharmed(): Promise<void> {
  expect(resultOf(await run(platform, lua(`return #string.rep('x', 1000) .. '|' .. json.encode({ 1, 2 })`)))).toBe('1000|[1,2]');
}

/** Runs `target` on a fixture Host with the VM cap of these tests. */
async function runHostile(
  target: Prompt,
  fixture: { host?: FixtureHostSpec; model?: ScriptedReply[]; answers?: string[]; limits?: Partial<RunLimits> } = {},
): Promise<RunOutcome> {
  const host = fixtureHost(fixture.host ?? {}, fixture.answers ?? [], fixture.model ?? []);
  return runOnHost(platform, host, { prompt: target, limits: { memoryBytes: VM_CAP, ...fixture.limits } });
}

const text = (bytes: number) => 'x'.repeat(bytes);
/** A JSON array of short strings, `bytes` long or a little less: decoded, it takes several times that. */
const json = (bytes: number) => JSON.stringify(Array.from({ length: Math.floor(bytes / 12) }, (_, i) => `v${i % 100000}`.padEnd(9, '.')));

describe('a tool output near the VM memory cap', () => {
  for (const size of NEAR_THE_CAP) {
    it(`of ${size} bytes, plain, completes or ends as Limit, never aborts`, async () => {
      const host = { packs: { 'acme/big': { tools: [{ name: 'text', returns: text(size) }] } } };
      expectCompletedOrMemoryLimit(await runHostile(lua(`return #tools.call('big/text')`, 'uses: [acme/big]\n'), { host }));
      await expectPlatformUnharmed();
    });

    it(`of ${size} bytes, structured, completes or ends as Limit, never aborts`, async () => {
      const host = { packs: { 'acme/big': { tools: [{ name: 'data', output: 'structured' as const, returns: json(size) }] } } };
      expectCompletedOrMemoryLimit(await runHostile(lua(`return #tools.call('big/data')`, 'uses: [acme/big]\n'), { host }));
      await expectPlatformUnharmed();
    });
  }

  it('past the tool output cap ends the run as Limit naming the Pack, the tool and the cap', async () => {
    const host = { packs: { 'acme/big': { tools: [{ name: 'text', returns: text(TOOL_OUTPUT_BYTES + 1) }] } } };
    const outcome = await runHostile(lua(`local ok = pcall(tools.call, 'big/text') return tostring(ok)`, 'uses: [acme/big]\n'), { host });
    expect(outcome.status === 'failed' && outcome.error).toEqual({
      kind: 'Limit',
      message: 'the tool big/text of the Pack acme/big answered more than the cap of 1 MiB on one tool output',
    });
    // What passed the cap is never journaled.
    expect(JSON.stringify(outcome.journal)).not.toContain('xxxxxxxxxx');
  });

  it('many times over, each under the cap, completes when the prompt lets each go', async () => {
    const host = { packs: { 'acme/big': { tools: [{ name: 'text', returns: text(300 * KiB) }] } } };
    const block = `local n = 0 for i = 1, 20 do n = n + #tools.call('big/text') end return n`;
    expect(resultOf(await runHostile(lua(block, 'uses: [acme/big]\n'), { host }))).toBe(String(20 * 300 * KiB));
  });

  it('many times over, kept, ends as Limit, never aborts', async () => {
    const host = { packs: { 'acme/big': { tools: [{ name: 'text', returns: text(300 * KiB) }] } } };
    const block = `local kept = {} for i = 1, 20 do kept[i] = tools.call('big/text') end return #kept`;
    expectCompletedOrMemoryLimit(await runHostile(lua(block, 'uses: [acme/big]\n'), { host }));
    await expectPlatformUnharmed();
  });
});

describe("a model's reply near the VM memory cap", () => {
  for (const size of [...NEAR_THE_CAP, 2 * MiB]) {
    it(`of ${size} bytes completes or ends as Limit, never aborts`, async () => {
      const target = lua(`models.use('writer') messages:user('Say a lot.') return #models.loop()`, 'models:\n  writer: {}\n');
      expectCompletedOrMemoryLimit(await runHostile(target, { model: [{ content: text(size) }] }));
      await expectPlatformUnharmed();
    });
  }
});

describe("an operator's answer near the VM memory cap", () => {
  for (const size of [...NEAR_THE_CAP, 2 * MiB]) {
    it(`of ${size} bytes completes or ends as Limit, never aborts`, async () => {
      expectCompletedOrMemoryLimit(await runHostile(lua(`return #input.ask()`, 'uses: [user-input]\n'), { answers: [text(size)] }));
      await expectPlatformUnharmed();
    });
  }
});

describe('a file read back near the VM memory cap', () => {
  for (const size of [...NEAR_THE_CAP, 2 * MiB]) {
    it(`of ${size} bytes completes or ends as Limit, never aborts`, async () => {
      const store = new MemoryRunStore();
      await store.write('big.txt', text(size));
      expectCompletedOrMemoryLimit(await run(platform, lua(`return #store.read('big.txt')`), { store, limits: { memoryBytes: VM_CAP } }));
      await expectPlatformUnharmed();
    });
  }

  // The default VM cap is 16 MiB: texts of 16 MiB and more were the ones that aborted the runtime.
  for (const mib of [15, 15.5, 15.99]) {
    it(`of ${mib} MiB under the default limits completes or ends as Limit, never aborts`, async () => {
      const store = new MemoryRunStore();
      await store.write('big.txt', text(Math.floor(mib * MiB)));
      expectCompletedOrMemoryLimit(await run(platform, lua(`return #store.read('big.txt')`), { store, limits: { fileBytes: 64 * MiB } }));
      await expectPlatformUnharmed();
    });
  }

  for (const mib of [16, 20, 100]) {
    it(`of ${mib} MiB under the default limits ends as Limit, never aborts`, async () => {
      const store = new MemoryRunStore();
      await store.write('big.txt', text(mib * MiB));
      const outcome = await run(platform, lua(`return #store.read('big.txt')`), { store, limits: { fileBytes: 128 * MiB, storeBytes: 128 * MiB } });
      expect(outcome.status === 'failed' && outcome.error).toEqual({
        kind: 'Limit',
        message: 'a Lua VM of the run held more than its memory limit of 16 MiB (memoryBytes)',
      });
      await expectPlatformUnharmed();
    });
  }
});

describe("the run's args near the VM memory cap", () => {
  for (const size of [...NEAR_THE_CAP, 2 * MiB]) {
    it(`of ${size} bytes completes or ends as Limit, never aborts`, async () => {
      const target = lua(`return #args.text`, 'args:\n  text: string\n');
      expectCompletedOrMemoryLimit(await run(platform, target, { args: { text: text(size) }, limits: { memoryBytes: VM_CAP } }));
      await expectPlatformUnharmed();
    });
  }
});
