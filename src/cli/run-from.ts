/**
 * `runvil run --from FILE.test.yaml --until N`: the first N journal entries of the run a test
 * file records, for a fork on the author's machine. The test file's run is replayed on its
 * fixture Host (model replies, answers, recorded tool outputs) to rebuild its journal; the
 * fork then starts from its first N entries, checked against the prompt that goes on live
 * (host/fork.ts), as `POST /runs/:id/fork` does.
 */
import type { JournalEntry } from '../engine/journal.ts';
import type { LuaPlatform } from '../engine/lua/vm.ts';
import { fixtureHost } from '../fixture/fixture-host.ts';
import { fileChangesOf } from '../host/fork.ts';
import { runOnHost } from '../host/host.ts';
import { MemoryRunStore } from '../host/run-store.ts';
import { parsePrompt } from '../prompt/index.ts';
import { argsFromData } from '../prompt/run-args.ts';
import type { Json } from '../json/json.ts';
import { UsageError } from './args.ts';
import { loadTestFile } from './test-file.ts';
import { pathText } from '../config/yaml-shape.ts';

/** The run id a test file's run is rebuilt under (the fixture Host's default). */
export const RECORDED_RUN_ID = 'run-1';

/** The recorded run a fork starts from: its prompt, args, seed and first N journal entries. */
export interface RecordedStart {
  /** The test's own prompt text, and the name its messages use. */
  prompt: { text: string; name: string };
  args: { [name: string]: Json };
  /** The args the recorded run read as untrusted text; the fork reads them so too. */
  untrustedArgs: string[];
  seed: string;
  journal: JournalEntry[];
}

/** Reads the test file and replays its run to journal entry `until` (its whole journal by default). */
export async function recordedStart(file: string, until: number | undefined, platform: LuaPlatform): Promise<RecordedStart> {
  const loaded = await loadTestFile(file);
  if (!loaded.ok) throw UsageError.inFile(file, loaded.problems);
  const test = loaded.value;
  const parsed = parsePrompt(test.prompt.text, test.prompt.name);
  if (!parsed.ok) throw new UsageError(`the prompt of ${file} does not parse: ${parsed.errors[0]!.message}`, { file });
  const args = argsFromData(parsed.prompt.frontmatter.args, test.args);
  if (!args.ok) throw new UsageError(`the args of ${file} do not fit its prompt: ${args.message}`, { file });
  const seed = test.seed ?? '0';
  const host = fixtureHost(test.host, test.answers, test.model, { calls: test.recorded, clock: test.clock });
  const recorded = await runOnHost(platform, host, { runId: RECORDED_RUN_ID, prompt: parsed.prompt, args: args.args, untrustedArgs: test.untrustedArgs, seed });
  // As `runvil test` refuses it: a journal rebuilt from an answer outside its ask's choices is no run the API could have made.
  const refused = [
    ...host.operator.refused.map(({ index, message }) => ({ path: ['answers', index], message })),
    ...(host.recording?.refused ?? []).map(({ index, message }) => ({ path: ['recorded', index, 'output'], message })),
  ][0];
  if (refused) {
    const at = test.place(refused.path);
    throw new UsageError(`\`${pathText(refused.path)}\`: ${refused.message}`, { file, line: at.line, column: at.column });
  }
  const length = recorded.journal.length;
  const at = until ?? length;
  if (at > length) {
    const ending = recorded.status === 'failed' ? ` (its replay ends with error[${recorded.error.kind}]: ${recorded.error.message})` : '';
    throw new UsageError(`--until ${at} is past the end of the run ${file} records: it has ${length} journal entries${ending}`, { file });
  }
  return { prompt: test.prompt, args: args.args, untrustedArgs: test.untrustedArgs, seed, journal: recorded.journal.slice(0, at) };
}

/** The run's files as the first entries of its journal left them. */
export function storeAfter(journal: readonly JournalEntry[]): MemoryRunStore {
  const store = new MemoryRunStore();
  for (const entry of journal) {
    for (const change of fileChangesOf(entry)) {
      if (change.op === 'delete') store.files.delete(change.path);
      else store.files.set(change.path, change.op === 'write' ? change.text : (store.files.get(change.path) ?? '') + change.text);
    }
  }
  return store;
}
