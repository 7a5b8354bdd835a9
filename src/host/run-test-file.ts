/**
 * A run as a prompt test file (`GET /runs/:id/test.yaml`, DESIGN.md "A run becomes a test"):
 * the prompt's source inline, its args and seed, the model's replies in round order, the
 * operator's answers, `recorded:` with the output of every other catalog tool call (failures
 * and untrusted outputs exactly as the tool gave them), `clock:` with what `sys.now()` read,
 * `host.packs` describing the third-party Packs the prompt declares (so the fixture Host
 * offers the same tools with the same trust), and `expect:` with how the run ended and its
 * event types (a task's apart, in `task_events`). `runvil test` on it reproduces the run
 * offline, with no network, model or operator. What a task or a fanout arm got names its
 * chain (recording.ts says why).
 */
import { stringify } from 'yaml';
import { effectWords, sectionWords } from '../engine/effect-words.ts';
import { SCHEDULER_CHAIN, type JournalEntry } from '../engine/journal.ts';
import type { Json } from '../json/json.ts';
import type { PackManifest } from './pack.ts';
import { ASK_TOOL, listsByChain } from './recording.ts';
import { formOf } from './ask-form.ts';

/** What a test file is made from: a run that has ended, and the Packs it was served. */
export interface EndedRun {
  run_id: string;
  /** The prompt's name and its text as the run ran it. */
  prompt: string;
  source: string;
  args: { [name: string]: Json };
  /** The args the run read as untrusted text (a trigger's payload). */
  untrusted_args?: readonly string[];
  seed: string;
  journal: readonly JournalEntry[];
  ending: { status: 'completed'; result: string } | { status: 'failed'; error: { kind: string; message: string } };
  /** The run's Engine events, in order: their types, and the chain each happened in. */
  events: readonly { type: string; task: string }[];
  /** The manifests of the third-party Packs the prompt declares, as the run's Host served them. */
  packs: PackManifest[];
  /** Why a Pack of `packs` could not serve the run, by its fully qualified name (the run was refused with the requirements notice). */
  unavailable?: ReadonlyMap<string, string>;
}

/** The run's main chain: what it gets needs no `task`. */
const MAIN_CHAIN = '0';

/** The test file of an ended run, as YAML text. */
export function runTestFile(run: EndedRun): string {
  const file: Record<string, Json> = {};
  file.source = run.source;
  if (Object.keys(run.args).length > 0) file.args = run.args;
  if (run.untrusted_args?.length) file.untrusted_args = [...run.untrusted_args];
  file.seed = run.seed;
  const packs = hostPacks(run.packs, run.unavailable ?? new Map());
  if (packs !== null) file.host = { packs };
  const { model, answers, recorded, clock } = splitJournal(run.journal);
  if (model.length > 0) file.model = model;
  if (answers.length > 0) file.answers = answers;
  if (recorded.length > 0) file.recorded = recorded;
  if (clock.length > 0) file.clock = clock;
  const expect: Record<string, Json> = run.ending.status === 'completed' ? { result: run.ending.result } : { error: { ...run.ending.error } };
  // The main chain's events, and each task's apart: they interleave in the order the chains'
  // effects finished, which a run offline, every answer at hand, does not repeat.
  const byTask = listsByChain(run.events, (event) => event.task);
  const types = (events: readonly { type: string }[] = []) => events.map((event) => event.type);
  expect.events = types(byTask.get(MAIN_CHAIN));
  byTask.delete(MAIN_CHAIN);
  if (byTask.size > 0) expect.task_events = Object.fromEntries([...byTask].map(([task, events]) => [task, types(events)]));
  file.expect = expect;
  const header =
    `# The run ${run.run_id} of the prompt ${run.prompt}, as a prompt test: \`runvil test\` replays it\n` +
    '# offline (model replies, operator answers, recorded tool outputs and clock readings as the run got them).\n' +
    journalMap(run.journal);
  // Block scalars keep a prompt's text as the prompt's author wrote it; no line folding.
  return header + stringify(file, { lineWidth: 0, blockQuote: 'literal' });
}

/**
 * The run's journal as comment lines, one per entry, numbered from 1: a fork at N
 * (`POST /runs/:id/fork {"at": N}`, `runvil run --from FILE --until N`) starts after entry N.
 */
function journalMap(journal: readonly JournalEntry[]): string {
  if (journal.length === 0) return '';
  const lines = journal.map((entry, index) => {
    const { request } = entry;
    const where = entry.chain === SCHEDULER_CHAIN ? 'scheduler' : `${entry.chain}-${entry.seq}`;
    const section = request.op === 'tool.call' ? ` ${sectionWords(request.origin?.section)}` : '';
    const failure = entry.answer.ok ? '' : ' (failed)';
    // One line each: a newline in an argument would end the comment.
    return `#   ${index + 1}. [${where}] ${effectWords(request)}${section}${failure}`.replace(/[\r\n]+/g, ' ');
  });
  return `# Its journal (a fork at N starts after entry N; [chain-seq] of an ask is its ask id):\n${lines.join('\n')}\n`;
}

/**
 * The model replies, operator answers, recorded tool calls and clock readings of a journal,
 * each in the order the run made them. What a task or a fanout arm got names its chain (a
 * reply's and a clock reading's `task`; its asks are recorded calls): chains go on side by
 * side, and offline they would take their answers in another order than the one the journal
 * holds (recording.ts).
 */
export function splitJournal(journal: readonly JournalEntry[]): { model: Json[]; answers: Json[]; recorded: Json[]; clock: Json[] } {
  const model: Json[] = [];
  const answers: Json[] = [];
  const clock: Json[] = [];
  const calls: { chain: string; seq: number; record: Json }[] = [];
  for (const entry of journal) {
    const { request, answer } = entry;
    if (request.op === 'sys.now' && answer.ok) {
      clock.push(entry.chain === MAIN_CHAIN ? { now: answer.value } : { now: answer.value, task: entry.chain });
    } else if (request.op === 'model.round') {
      const reply = answer.ok ? scriptedReply(answer.value) : { fails: answer.error.message };
      model.push(entry.chain === MAIN_CHAIN ? reply : { task: entry.chain, ...reply });
    } else if (request.op === 'tool.call') {
      // The main chain's answered asks are operator answers; an ask that failed (its window closed), or a task's, is a recorded call.
      if (request.tool === ASK_TOOL && answer.ok && entry.chain === MAIN_CHAIN) {
        const text = typeof answer.value === 'string' ? answer.value : JSON.stringify(answer.value);
        // A form's answer as the map it is, which the test file's reader takes back as it takes a text.
        answers.push(formOf(request.args) !== null ? formAnswerOf(text) : text);
        continue;
      }
      const record: { [key: string]: Json } = { tool: request.tool, args: request.args ?? {} };
      if (entry.chain !== MAIN_CHAIN) record.task = entry.chain;
      if (request.origin?.section) record.section = request.origin.section;
      if (answer.ok) record.output = answer.value;
      else record.fails = answer.error.message;
      calls.push({ chain: entry.chain, seq: entry.seq, record });
    }
  }
  return { model, answers, recorded: inCallOrder(calls), clock };
}

/**
 * The calls in journal order, except that each chain's calls are in the order the chain made
 * them (its sequence numbers): calls of one model round run together and are journaled as
 * they finish, and a recording is taken chain by chain in call order.
 */
function inCallOrder(calls: { chain: string; seq: number; record: Json }[]): Json[] {
  const byChain = new Map<string, { seq: number; record: Json }[]>();
  for (const call of calls) {
    let list = byChain.get(call.chain);
    if (!list) byChain.set(call.chain, (list = []));
    list.push(call);
  }
  for (const list of byChain.values()) list.sort((a, b) => a.seq - b.seq);
  const next = new Map<string, number>();
  return calls.map((call) => {
    const at = next.get(call.chain) ?? 0;
    next.set(call.chain, at + 1);
    return byChain.get(call.chain)![at]!.record;
  });
}

/** A model reply as a test file's `model:` scripts it. */
function scriptedReply(value: Json): { [key: string]: Json } {
  const reply = (value ?? {}) as { content?: Json; tool_calls?: { id: string; name: string; arguments?: Json }[] };
  const scripted: { [key: string]: Json } = {};
  const calls = Array.isArray(reply.tool_calls) ? reply.tool_calls : [];
  if (typeof reply.content === 'string' && (reply.content !== '' || calls.length === 0)) scripted.content = reply.content;
  if (calls.length > 0) scripted.tool_calls = calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments ?? {} }));
  return scripted;
}

/** `host.packs` for the third-party Packs, or null when the prompt declares none. */
function hostPacks(manifests: readonly PackManifest[], unavailable: ReadonlyMap<string, string>): Json {
  if (manifests.length === 0) return null;
  const packs: { [name: string]: Json } = {};
  for (const manifest of manifests) {
    const spec: { [key: string]: Json } = {};
    if (manifest.prelude !== undefined) spec.prelude = manifest.prelude;
    // A Pack that could not serve (an MCP server that did not answer when the run was prepared) cannot offline either, for the same reason.
    const reason = unavailable.get(manifest.fqName);
    if (reason !== undefined) spec.unavailable = reason;
    spec.tools = manifest.tools.map((tool) => ({
      name: tool.id.slice(tool.id.indexOf('/') + 1),
      description: tool.description,
      parameters: tool.parameters,
      output: tool.output,
      trusted: tool.trusted,
    }));
    packs[manifest.fqName] = spec;
  }
  return packs;
}

/** A form ask's answer (its JSON text) as the object, or the text when it holds none. */
function formAnswerOf(text: string): Json {
  try {
    const value = JSON.parse(text) as Json;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : text;
  } catch {
    return text;
  }
}
