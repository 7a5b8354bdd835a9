/**
 * `runvil test [PATHS...]`: finds every `*.test.yaml` under the paths, checks them all
 * against the test file format first (any problem is a usage error, and nothing runs), then
 * runs them one after another on the fixture Host, sharing one LuaPlatform, and ends with
 * `N passed, N failed`.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fixtureHost } from '../host/fixture-host.ts';
import { runOnHost } from '../host/host.ts';
import type { LuaPlatform } from '../engine/lua/vm.ts';
import { parsePrompt } from '../prompt/index.ts';
import { UsageError, type TestCommand } from './args.ts';
import type { CliIo } from './io.ts';
import { cliPlatform, entryTimeLimit } from './platform.ts';
import { argsFromData } from '../prompt/run-args.ts';
import { placePrefix } from './prompt-file.ts';
import { judge, type TestOutcome } from './test-expect.ts';
import { loadTestFile, type PromptTest } from './test-file.ts';

/** The ending of the files `runvil test` runs. */
export const TEST_FILE_SUFFIX = '.test.yaml';

/** Runs `runvil test`; answers 0 when every test passed, 1 when any failed. */
export async function testCommand(command: TestCommand, io: CliIo): Promise<number> {
  const files = await findTestFiles(command.paths);
  const tests: PromptTest[] = [];
  const problems: UsageError[] = [];
  for (const file of files) {
    const loaded = await loadTestFile(file);
    if (loaded.ok) tests.push(loaded.value);
    else problems.push(UsageError.inFile(file, loaded.problems));
  }
  if (problems.length > 0) {
    const [first, ...rest] = problems;
    throw new UsageError(first!.message, first!.where, [...first!.more, ...rest.flatMap((p) => [p, ...p.more])]);
  }
  if (files.length === 0) io.err(`runvil: no ${TEST_FILE_SUFFIX} files under ${command.paths.join(', ')}\n`);

  const platform = await cliPlatform();
  let passed = 0;
  for (const test of tests) {
    const lines = await runTest(platform, test, command.entryTimeoutSeconds);
    if (lines.length === 0) {
      passed++;
      io.out(`ok   ${test.file}\n`);
    } else {
      io.out(`FAIL ${test.file}\n${lines.map((line) => `  ${line.replaceAll('\n', '\n  ')}\n`).join('')}`);
    }
  }
  const failed = tests.length - passed;
  io.out(`${passed} passed, ${failed} failed\n`);
  return failed > 0 ? 1 : 0;
}

/** Runs one test; answers the lines explaining its failure, or none when it passed. */
async function runTest(platform: LuaPlatform, test: PromptTest, entryTimeoutSeconds: number): Promise<string[]> {
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
      return [`${placePrefix({ file: test.file, ...at })}${args.message}`];
    }
    const host = fixtureHost(test.host, test.answers, test.model, test.recorded);
    try {
      outcome = await runOnHost(platform, host, {
        prompt: parsed.prompt,
        args: args.args,
        seed: test.seed ?? '0',
        ...entryTimeLimit(entryTimeoutSeconds),
      });
    } catch (error) {
      return [`the run threw instead of ending: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`];
    }
    // A recorded call the run never made is a change in what the run does, as a different one is.
    const unused = host.recording?.unused() ?? [];
    const offRecording = outcome.status === 'failed' && outcome.error.kind === 'Determinism';
    if (unused.length > 0 && !offRecording) {
      const more = unused.length > 1 ? ` (and ${unused.length - 1} more)` : '';
      return [...judge(test.expect, outcome), `the run ended without making ${unused.length} recorded tool call(s); the first it never made: ${unused[0]}${more}`];
    }
  }
  return judge(test.expect, outcome);
}

/** Every test file under the paths (a file named directly counts whatever its name), sorted. */
export async function findTestFiles(paths: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const path of paths) {
    const info = await stat(path).catch(() => null);
    if (!info) throw new UsageError(`${path} does not exist`);
    if (info.isFile()) found.add(path);
    else await walk(path, found);
  }
  return [...found].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

async function walk(dir: string, found: Set<string>): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, found);
    else if (entry.isFile() && entry.name.endsWith(TEST_FILE_SUFFIX)) found.add(path);
  }
}
