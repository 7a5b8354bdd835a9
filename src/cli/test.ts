/**
 * `runvil test [PATHS...]`: finds every `*.test.yaml` under the paths, checks them all
 * against the test file format first (any problem is a usage error, and nothing runs), then
 * runs them one after another on the fixture Host, sharing one LuaPlatform, and ends with
 * `N passed, N failed`.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError, type TestCommand } from './args.ts';
import type { CliIo } from './io.ts';
import { cliPlatform, entryTimeLimit } from './platform.ts';
import { loadTestFile, type PromptTest } from './test-file.ts';
import { runPromptTest } from './test-run.ts';

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
    const lines = await runPromptTest(platform, test, entryTimeLimit(command.entryTimeoutSeconds));
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
