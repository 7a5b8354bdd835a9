/**
 * Running one prompt test on the fixture Host and judging it: what `runvil test` does for
 * each file, with no file system or terminal, so a Worker test can run a run's test file
 * exactly as the command line would.
 */
import type { EntryTimeLimit } from '../engine/entry-clock.ts';
import type { LuaPlatform } from '../engine/lua/vm.ts';
import { fixtureHost } from '../fixture/fixture-host.ts';
import { runOnHost } from '../host/host.ts';
import { parsePrompt } from '../prompt/index.ts';
import { argsFromData } from '../prompt/run-args.ts';
import { judge, type TestOutcome } from './test-expect.ts';
import type { PromptTest } from './test-file.ts';
import { pathText } from '../config/yaml-shape.ts';

/** Runs one test; answers the lines explaining its failure, or none when it passed. */
export async function runPromptTest(platform: LuaPlatform, test: PromptTest, limit: { entryTimeLimit?: EntryTimeLimit } = {}): Promise<string[]> {
  const parsed = parsePrompt(test.prompt.text, test.prompt.name);
  let outcome: TestOutcome;
  if (!parsed.ok) {
    // A prompt the parser refuses fails the way a run would: with its first error.
    const first = parsed.errors[0]!;
    outcome = { status: 'failed', error: { kind: first.kind, message: first.message }, events: [] };
  } else {
    const args = argsFromData(parsed.prompt.frontmatter.args, test.args);
    if (!args.ok) {
      const at = test.place(Object.hasOwn(test.args, args.arg) ? ['args', args.arg] : ['args']);
      return [`${test.file}:${at.line}:${at.column}: ${args.message}`];
    }
    const host = fixtureHost(test.host, test.answers, test.model, { calls: test.recorded, clock: test.clock });
    try {
      outcome = await runOnHost(platform, host, {
        prompt: parsed.prompt,
        args: args.args,
        untrustedArgs: test.untrustedArgs,
        seed: test.seed ?? '0',
        ...limit,
      });
    } catch (error) {
      return [`the run threw instead of ending: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`];
    }
    // An answer the test gives outside its ask's choices is the test file's error, at its line: the run went on from a refusal.
    const refused = [
      ...host.operator.refused.map(({ index, message }) => ({ path: ['answers', index], message })),
      ...(host.recording?.refused ?? []).map(({ index, message }) => ({ path: ['recorded', index, 'output'], message })),
    ];
    if (refused.length > 0) {
      return refused.map(({ path, message }) => {
        const at = test.place(path);
        return `${test.file}:${at.line}:${at.column}: \`${pathText(path)}\`: ${message}`;
      });
    }
    // A recorded call the run never made is a change in what the run does, as a different one is.
    const unused = host.recording?.unused() ?? [];
    const offRecording = outcome.status === 'failed' && outcome.error.kind === 'Determinism';
    if (unused.length > 0 && !offRecording) {
      const more = unused.length > 1 ? ` (and ${unused.length - 1} more)` : '';
      return [
        ...judge(test.expect, outcome),
        `the run ended without making ${unused.length} recorded tool call(s); the first it never made: ${unused[0]}${more}`,
      ];
    }
  }
  return judge(test.expect, outcome);
}
