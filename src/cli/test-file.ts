/**
 * The prompt test file format (DESIGN.md, "Prompt test files") and the `--script` file of
 * `runvil run`, which holds the same `host`, `model`, `answers` and `seed` keys. A file
 * that does not fit the format (an unknown key at any level, a value of the wrong kind, a
 * missing prompt) is a usage error with the line and column of each problem. The shape is
 * test-file-schema.json, checked by its generated validator (yaml-shape.ts places the
 * problems); the rules no schema states (prompt or source, returns or fails) are checked here.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import type { FixtureHostSpec } from '../fixture/fixture-host.ts';
import type { FixturePackSpec } from '../host/fixture-pack.ts';
import type { ClockReading, RecordedCall } from '../host/recording.ts';
import type { ScriptedReply } from '../models/scripted.ts';
import type { Json } from '../json/json.ts';
import { parameterSchemaProblem } from '../json/parameter-schema-limits.ts';
import { validateScriptFile, validateTestFile } from './test-file-validator.generated.js';
import { parseShaped, pathText, type ShapeProblem } from '../config/yaml-shape.ts';
import { parsePrompt } from '../prompt/index.ts';

/** What a test expects; every expectation given must hold. */
export interface Expectation {
  result?: string;
  result_contains?: string;
  result_matches?: string;
  error?: { kind?: string; message?: string; contains?: string };
  /** Event types the run's events hold in this order (others may come between). */
  events?: string[];
  /** Per task (chain id): event types that task's events hold in this order. */
  task_events?: Map<string, string[]>;
}

/** The fixture side of a run: the Host, the scripted model, the operator's answers, the recorded tool outputs, the seed. */
export interface Fixture {
  host: FixtureHostSpec;
  model: ScriptedReply[];
  /** Texts, and for asks with a form the objects that fill them. */
  answers: Json[];
  /** Catalog tool outputs answered before the Host's Packs, in call order (recording.ts). */
  recorded: RecordedCall[];
  /** Clock readings answered before the fixture clock, in read order (recording.ts). */
  clock: ClockReading[];
  seed?: string;
}

/** One prompt test, read and checked. */
export interface PromptTest extends Fixture {
  /** The test file's path, as found. */
  file: string;
  /** The prompt's text and the name its messages use. */
  prompt: { text: string; name: string };
  args: { [name: string]: Json };
  /** The args the run reads as untrusted text, as a run a trigger started did (its payload's values). */
  untrustedArgs: string[];
  /** The place of a key in the test file, for messages about it. */
  place(path: (string | number)[]): { line: number; column: number };
  expect: Expectation;
}

/** A file that does not fit its format: every problem, each with its place. */
export type FormatOutcome<T> = { ok: true; value: T } | { ok: false; problems: ShapeProblem[] };

interface RawFixture {
  host?: {
    web?: boolean | { pages?: Record<string, unknown>; search?: Record<string, unknown>; unavailable?: unknown };
    'user-input'?: boolean;
    packs?: Record<string, { prelude?: unknown; unavailable?: unknown; tools?: Record<string, unknown>[] }>;
  };
  model?: { content?: unknown; tool_calls?: { id?: unknown; name?: unknown; arguments?: Json }[]; fails?: unknown; task?: unknown }[];
  answers?: unknown[];
  recorded?: { tool?: unknown; args?: Json; task?: unknown; section?: unknown; output?: Json; fails?: unknown }[];
  clock?: { now?: unknown; task?: unknown }[];
  seed?: unknown;
}

interface RawTest extends RawFixture {
  prompt?: unknown;
  source?: unknown;
  args?: { [name: string]: Json };
  untrusted_args?: string[];
  expect?: Record<string, unknown>;
}

/** Reads a `--script` file of `runvil run`. */
export function parseScriptFile(text: string): FormatOutcome<Fixture> {
  const parsed = parseShaped(text, validateScriptFile, 'the script file');
  if (!parsed.ok) return parsed;
  const problems: ShapeProblem[] = [];
  const fixture = readFixture(parsed.value as RawFixture, (path, message) => problems.push({ message, ...parsed.place(path) }));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: fixture };
}

/** Reads and checks one test file; `file` is its path as found. */
export async function loadTestFile(file: string): Promise<FormatOutcome<PromptTest>> {
  return readTestText(await readFile(file, 'utf8'), file, async (name) => {
    const path = resolve(dirname(file), name);
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) return `the prompt file ${name} does not exist (looked for ${path})`;
    // The prompt is named relative to the test file, so its messages do not depend on where runvil runs.
    return { text: await readFile(path, 'utf8'), name: relative(dirname(resolve(file)), path) };
  });
}

/**
 * Checks a test file's text; `file` names it in messages, and `readPrompt` reads the prompt
 * file a `prompt:` key names (a string is why it cannot). A test with its prompt inline
 * (`source:`, as a run's test file has) reads no file.
 */
export async function readTestText(
  text: string,
  file: string,
  readPrompt: (name: string) => Promise<PromptTest['prompt'] | string>,
): Promise<FormatOutcome<PromptTest>> {
  const parsed = parseShaped(text, validateTestFile, 'the test file');
  if (!parsed.ok) return parsed;
  const raw = parsed.value as RawTest;
  const problems: ShapeProblem[] = [];
  const problem = (path: (string | number)[], message: string) => problems.push({ message, ...parsed.place(path) });
  const fixture = readFixture(raw, problem);

  let prompt: PromptTest['prompt'] | undefined;
  if (raw.prompt !== undefined && raw.source !== undefined) {
    problem(['source'], 'a test has `prompt:` (a prompt file) or `source:` (its text), not both');
  } else if (raw.source !== undefined) {
    prompt = inlinePrompt(String(raw.source), file);
  } else if (raw.prompt !== undefined) {
    const read = await readPrompt(String(raw.prompt));
    if (typeof read === 'string') problem(['prompt'], read);
    else prompt = read;
  } else {
    problems.push({ message: 'a test needs `prompt:` (the prompt file) or `source:` (the prompt text)', line: 1, column: 1 });
  }

  const expect = readExpect(raw.expect, problem);
  if (raw.expect === undefined) problems.push({ message: 'a test needs `expect:` with at least one expectation', line: 1, column: 1 });
  const args = raw.args ?? {};
  const untrustedArgs = raw.untrusted_args ?? [];
  untrustedArgs.forEach((name, index) => {
    if (!Object.hasOwn(args, name))
      problem(['untrusted_args', index], `\`untrusted_args\` names ${JSON.stringify(name)}, which \`args:\` does not give; it lists args given there`);
  });
  if (problems.length > 0 || !prompt) return { ok: false, problems: problems.sort((a, b) => a.line - b.line || a.column - b.column) };
  return { ok: true, value: { ...fixture, file, prompt, args, untrustedArgs, place: parsed.place, expect } };
}

type Report = (path: (string | number)[], message: string) => void;

/**
 * A prompt given inline (`source:`), named as the Worker names a deployed prompt: after its
 * frontmatter's name, `<name>.md`. A Lua error's chunk name then reads the same in a run and
 * in its test file (`GET /runs/:id/test.yaml` expects the run's error as the run gave it),
 * whatever the test file is called; its line numbers are the source's own, not the file's.
 */
function inlinePrompt(text: string, file: string): PromptTest['prompt'] {
  const parsed = parsePrompt(text, basename(file));
  return { text, name: parsed.ok ? `${parsed.prompt.frontmatter.name}.md` : basename(file) };
}

function readFixture(raw: RawFixture, problem: Report): Fixture {
  const fixture: Fixture = {
    host: readHost(raw.host ?? {}, problem),
    model: (raw.model ?? []).map((reply, index) => readReply(reply, index, problem)),
    answers: (raw.answers ?? []).map((answer) => (answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? (answer as Json) : String(answer))),
    recorded: (raw.recorded ?? []).map((call, index) => readRecorded(call, ['recorded', index], problem)),
    clock: (raw.clock ?? []).map((reading, index) => readClock(reading, ['clock', index], problem)),
  };
  if (raw.seed !== undefined) fixture.seed = String(raw.seed);
  return fixture;
}

function readHost(raw: NonNullable<RawFixture['host']>, problem: Report): FixtureHostSpec {
  const host: FixtureHostSpec = {};
  const web = raw.web;
  if (web === false) host.web = false;
  else if (typeof web === 'object') {
    if (web.unavailable !== undefined) host.web = { unavailable: String(web.unavailable) };
    else host.web = { pages: textRecord(web.pages), search: textRecord(web.search) };
    if (web.unavailable !== undefined && (web.pages !== undefined || web.search !== undefined)) {
      problem(['host', 'web', 'unavailable'], 'an unavailable `host.web` serves no pages or search results; remove one or the other');
    }
  }
  if (raw['user-input'] === false) host['user-input'] = false;
  const packs: Record<string, FixturePackSpec> = Object.create(null);
  for (const [name, pack] of Object.entries(raw.packs ?? {})) {
    const at = ['host', 'packs', name];
    if (!/^[^/\s]+\/[^/\s]+$/.test(name)) problem(at, `\`${pathText(at)}\`: a Pack is named by its fully qualified name, such as acme/stats`);
    const spec: FixturePackSpec = { tools: (pack?.tools ?? []).map((tool, index) => readTool(tool, [...at, 'tools', index], problem)) };
    if (pack?.prelude !== undefined) spec.prelude = String(pack.prelude);
    if (pack?.unavailable !== undefined) spec.unavailable = String(pack.unavailable);
    packs[name] = spec;
  }
  if (Object.keys(packs).length > 0) host.packs = packs;
  return host;
}

function readTool(raw: Record<string, unknown>, at: (string | number)[], problem: Report): NonNullable<FixturePackSpec['tools']>[number] {
  if (raw.name === undefined) problem(at, `\`${pathText(at)}\` needs a \`name\``);
  if (raw.output !== undefined && raw.output !== 'plain' && raw.output !== 'structured') {
    problem([...at, 'output'], `\`${pathText([...at, 'output'])}\` must be plain or structured`);
  }
  if (raw.returns !== undefined && raw.fails !== undefined) {
    problem([...at, 'fails'], `\`${pathText(at)}\` either \`returns\` its output or \`fails\`, not both`);
  }
  const tool: NonNullable<FixturePackSpec['tools']>[number] = { name: String(raw.name ?? '') };
  if (raw.description !== undefined) tool.description = String(raw.description);
  if (raw.parameters !== undefined) tool.parameters = raw.parameters as Json;
  // The bounds every tool's parameter schema has, and patterns RE2 can match (src/json/parameter-schema-limits.ts).
  const schemaProblem = raw.parameters === undefined ? null : parameterSchemaProblem(raw.parameters);
  if (schemaProblem !== null) problem([...at, 'parameters'], `\`${pathText([...at, 'parameters'])}\` ${schemaProblem}`);
  if (raw.output === 'plain' || raw.output === 'structured') tool.output = raw.output;
  if (typeof raw.trusted === 'boolean') tool.trusted = raw.trusted;
  if (raw.returns !== undefined) tool.returns = String(raw.returns);
  if (raw.fails !== undefined) tool.fails = String(raw.fails);
  if (raw.later === true || raw.later === 'never') tool.later = raw.later;
  if (typeof raw.timeout === 'number') tool.timeout = raw.timeout;
  if (raw.timeout !== undefined && !raw.later)
    problem([...at, 'timeout'], `\`${pathText([...at, 'timeout'])}\` is the wait of a tool whose result comes \`later\`; set \`later\` too`);
  return tool;
}

/** A tool id (`pack/tool`) and a chain id (`0`, `0.1`, `0.f0.2`), as a recording names them. */
const TOOL_ID = /^[^/\s]+\/[^/\s]+$/;
const CHAIN_ID = /^0(\.[a-z0-9]+)*$/;

function readRecorded(raw: NonNullable<RawFixture['recorded']>[number], at: (string | number)[], problem: Report): RecordedCall {
  const tool = raw.tool === undefined ? '' : String(raw.tool);
  if (raw.tool === undefined) problem(at, `\`${pathText(at)}\` needs a \`tool\`: the tool id the run called, such as web/fetch`);
  else if (!TOOL_ID.test(tool))
    problem([...at, 'tool'], `\`${pathText([...at, 'tool'])}\` must be a tool id, <pack id>/<tool name> (such as web/fetch); got ${JSON.stringify(tool)}`);
  const task = readChain(raw.task, at, problem) ?? '0';
  if (raw.output !== undefined && raw.fails !== undefined)
    problem([...at, 'fails'], `\`${pathText(at)}\` holds the tool's \`output\` or its failure (\`fails\`), not both`);
  else if (raw.output === undefined && raw.fails === undefined) problem(at, `\`${pathText(at)}\` needs the tool's \`output\` or its failure text (\`fails\`)`);
  const call: RecordedCall = {
    tool,
    args: raw.args ?? {},
    task,
    outcome: raw.fails !== undefined ? { ok: false, message: String(raw.fails) } : { ok: true, output: raw.output ?? null },
  };
  if (raw.section !== undefined) call.section = String(raw.section);
  return call;
}

function readClock(raw: NonNullable<RawFixture['clock']>[number], at: (string | number)[], problem: Report): ClockReading {
  if (typeof raw.now !== 'number' || !Number.isFinite(raw.now))
    problem(at, `\`${pathText(at)}\` needs \`now\`: the time the run read, in milliseconds since 1970-01-01T00:00:00Z`);
  return { now: typeof raw.now === 'number' ? raw.now : 0, task: readChain(raw.task, at, problem) ?? '0' };
}

/** A `task` key: the chain id a recorded effect was made by. */
function readChain(raw: unknown, at: (string | number)[], problem: Report): string | undefined {
  if (raw === undefined) return undefined;
  const task = String(raw);
  if (!CHAIN_ID.test(task))
    problem(
      [...at, 'task'],
      `\`${pathText([...at, 'task'])}\` must be a chain id such as 0 (the run's main chain) or 0.1 (a task); got ${JSON.stringify(task)}`,
    );
  return task;
}

function readReply(raw: NonNullable<RawFixture['model']>[number], index: number, problem: Report): ScriptedReply {
  const reply: ScriptedReply = {};
  const task = readChain(raw.task, ['model', index], problem);
  if (task !== undefined) reply.task = task;
  if (raw.fails !== undefined) {
    reply.fails = String(raw.fails);
    if (raw.content !== undefined || raw.tool_calls !== undefined)
      problem(['model', index, 'fails'], `\`${pathText(['model', index])}\` either replies (content, tool_calls) or \`fails\`, not both`);
  }
  if (raw.content !== undefined) reply.content = String(raw.content);
  if (raw.tool_calls !== undefined) {
    reply.tool_calls = raw.tool_calls.map((call, n) => {
      const at = ['model', index, 'tool_calls', n];
      if (call.id === undefined || call.name === undefined) problem(at, `\`${pathText(at)}\` needs an \`id\` and a \`name\``);
      return { id: String(call.id ?? ''), name: String(call.name ?? ''), ...(call.arguments !== undefined ? { arguments: call.arguments } : {}) };
    });
  }
  return reply;
}

function readExpect(raw: Record<string, unknown> | undefined, problem: Report): Expectation {
  const expect: Expectation = {};
  if (!raw) return expect;
  for (const key of ['result', 'result_contains', 'result_matches'] as const) {
    if (raw[key] !== undefined) expect[key] = String(raw[key]);
  }
  if (expect.result_matches !== undefined) {
    try {
      new RegExp(expect.result_matches);
    } catch (error) {
      problem(['expect', 'result_matches'], `\`expect.result_matches\` is not a regular expression: ${(error as Error).message}`);
    }
  }
  if (raw.error !== undefined) {
    const error = raw.error as Record<string, unknown>;
    expect.error = {};
    for (const key of ['kind', 'message', 'contains'] as const) if (error[key] !== undefined) expect.error[key] = String(error[key]);
    if (Object.keys(expect.error).length === 0) problem(['expect', 'error'], '`expect.error` needs a `kind`, a `message` or `contains`');
  }
  if (raw.events !== undefined) expect.events = (raw.events as unknown[]).map(String);
  if (raw.task_events !== undefined) {
    expect.task_events = new Map();
    for (const [task, types] of Object.entries(raw.task_events as Record<string, unknown[]>)) {
      if (!CHAIN_ID.test(task))
        problem(
          ['expect', 'task_events', task],
          `\`expect.task_events\` is keyed by chain ids such as 0.1 (a task) or 0.f0.2 (a fanout arm); got ${JSON.stringify(task)}`,
        );
      expect.task_events.set(task, types.map(String));
    }
  }
  const resultExpected = expect.result !== undefined || expect.result_contains !== undefined || expect.result_matches !== undefined;
  if (resultExpected && expect.error) problem(['expect', 'error'], 'a test expects a result or an error, not both');
  if (Object.keys(expect).length === 0)
    problem(['expect'], '`expect` needs one or more of result, result_contains, result_matches, error, events, task_events');
  return expect;
}

function textRecord(raw: Record<string, unknown> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(raw ?? {}).map(([key, value]) => [key, String(value)]));
}
