/**
 * Helpers for Engine tests: one Lua platform per test file, prompts from text, runs on a
 * Harness with an in-memory store and a scripted model.
 */
import wasmoon from 'wasmoon';
import { parsePrompt } from '../../src/prompt/parse.ts';
import type { Prompt } from '../../src/prompt/types.ts';
import { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { runPrompt, type RunOptions, type RunOutcome } from '../../src/engine/run.ts';
import { createHarness, servicesOf } from '../../src/host/harness.ts';
import { MemoryRunStore } from '../../src/host/run-store.ts';
import { ScriptedOperator } from '../../src/host/operator.ts';
import { ScriptedProvider, type ScriptedReply } from '../../src/models/scripted.ts';

/** A fresh platform: its own wasmoon factory, so its own wasm heap and string hash seeds. */
export async function newPlatform(): Promise<LuaPlatform> {
  return LuaPlatform.create(() => new wasmoon.LuaFactory());
}

/** A prompt from frontmatter extras and a Markdown body after the frontmatter. */
export function prompt(body: string, frontmatter = ''): Prompt {
  const text = `---\nname: test\ndescription: A test prompt.\nrunvil: 0\n${frontmatter}---\n\n${body}`;
  const parsed = parsePrompt(text, 'test.md');
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join('\n'));
  return parsed.prompt;
}

/** A prompt whose one section `## Only` holds one Lua block. */
export function lua(block: string, frontmatter = ''): Prompt {
  return prompt(`# Test\n\n## Only\n\n\`\`\`lua\n${block}\n\`\`\`\n`, frontmatter);
}

/** Runs a prompt on an in-memory Harness; returns the outcome and the store. */
export async function run(
  platform: LuaPlatform,
  target: Prompt,
  options: Partial<RunOptions> & { model?: ScriptedReply[]; store?: MemoryRunStore } = {},
): Promise<RunOutcome & { store: MemoryRunStore }> {
  const store = options.store ?? new MemoryRunStore();
  const provider = new ScriptedProvider(options.model ?? []);
  const harness =
    options.harness ??
    createHarness({
      runId: 'run-1',
      store,
      packs: new Map(),
      services: servicesOf(),
      operator: new ScriptedOperator([]),
      models: { provider: () => provider },
      clock: () => 1_700_000_000_000,
    });
  const outcome = await runPrompt({ ...options, prompt: target, platform, harness });
  return { ...outcome, store };
}

/** The result of a completed run, or a thrown error naming how it failed. */
export function resultOf(outcome: RunOutcome): string {
  if (outcome.status !== 'completed') throw new Error(`run failed: ${outcome.error.kind}: ${outcome.error.message}`);
  return outcome.result;
}
