/**
 * One section entry: a fresh Lua VM running a section's blocks, driven by hand. Each yield
 * of its thread is a request (an effect, a call, a jump) that this driver answers.
 */
import { EntryClock } from './entry-clock.ts';
import { findSection } from '../prompt/heading-ref.ts';
import type { Json } from '../json/json.ts';
import { storePathProblem } from './store-path.ts';
import type { EffectAnswer, EffectRequest } from './effects.ts';
import { luaKindOf, runKindOf, type RunError } from './errors.ts';
import type { EntrySection, RunContext } from './run-context.ts';
import { wrapUntrusted } from './untrusted-envelope.ts';
import type { HookVerdict, LuaScalar, LuaVm, VmTemplate } from './lua/vm.ts';
import { LAZY_MODULES, runtimeChunk } from './lua/runtime/index.ts';
import { canonicalJson } from '../json/canonical-json.ts';
import { Conversation } from './conversation.ts';
import { checkReply, type CheckedReply } from './model-reply.ts';
import { TASK_BUILTIN_TOOLS } from './task-builtins.ts';
import { formatNameList, parsePackId } from '../prompt/name-grammar.ts';
import { MAIN_CHAIN, type ParkedEffect } from './scheduler.ts';
import type { TaskRecord } from './tasks.ts';

/** How an entry is made: walked into, the H1 pass, entered with call, a task's or a fanout arm's section. */
export type EntryKind = 'walk' | 'h1' | 'call' | 'task' | 'arm';

/** The outcome of one entry. */
export type EntryOutcome =
  | { type: 'return'; text: string }
  | { type: 'fall' }
  | { type: 'jump'; target: string }
  | { type: 'error'; error: RunError; luaKind: string }
  | { type: 'stop'; error: RunError };

/** What an entry needs beyond the run: which section, how it was entered, its call arguments. */
export interface EntrySpec {
  kind: EntryKind;
  section: EntrySection;
  /** JSON text of a call's extra arguments or a task's input (a list), passed to the blocks as `...`. */
  callArgs?: string;
  /** JSON text of a fanout arm's item, bound to the global `item`. */
  item?: string;
  /** The chain the entry runs on: `0`, a task's id or an arm's id. */
  chain: string;
}

/**
 * Count-hook calls (of 10,000 instructions each) between two pauses of a long-running entry:
 * a pause lets the other chains run, and the host hear a cancellation.
 */
const PAUSE_EVERY = 100;

/** The JS functions a section VM's runtime calls (base.lua's `leaves`), each a leaf of its own, numbered by position. */
const LEAF_NAMES = [
  'tick', 'var_get', 'var_set', 'var_len', 'var_keys', 'var_json', 'entry', 'block', 'find_section', 'prose',
  'event', 'event_fields', 'untrusted', 'fact', 'seed', 'catalog', 'pack_id_problem', 'role', 'set_default_role',
  'reply_done', 'prelude', 'paused', 'task_spawn', 'task_status', 'task_cancel', 'answered',
] as const;

/**
 * How every section VM starts: the runtime loaded and run up to the point where the VM needs
 * its entry (main.lua's `__rv_bind` gives it that). A memory region saves the result once and
 * copies it back for every later entry (vm.ts).
 */
const SECTION_VM: VmTemplate = {
  modules: LAZY_MODULES,
  build(vm) {
    vm.setNull('__rv_null');
    LEAF_NAMES.forEach((name, index) => vm.defineLeaf(`__rv_leaf_${name}`, index));
    vm.setUserdataFactory('__rv_newuserdata');
    vm.setWatchFunction('__rv_watch');
    vm.setPatternNatives('__rv_str_');
    vm.setModuleLoader('__rv_module');
    vm.runChunk(runtimeChunk());
  },
};

/** Runs one section entry to its outcome. */
export async function runEntry(run: RunContext, spec: EntrySpec): Promise<EntryOutcome> {
  const vm = await run.platform.newVm({ memoryLimit: run.limits.memoryBytes, template: SECTION_VM, owner: run.vmOwner, memory: run.memory });
  const stopOf = () => run.scheduler.stopOf(spec.chain);
  const clock = run.entryTimeLimit ? new EntryClock(run.entryTimeLimit, spec.section.name) : null;
  const entry: EntryState = { conversation: new Conversation(), renderedTools: {}, toolsText: 'null', kept: null, madeRecords: [], clock };
  try {
    installLeaves(vm, run, spec, entry);
    vm.callGlobal('__rv_bind');
    vm.limitMemory();
    const thread = vm.newThread('__rv_main');
    // The entry computes only inside resume: its clock runs there and nowhere else.
    const resume = clock === null ? (values: LuaScalar[]) => thread.resume(values) : (values: LuaScalar[]) => {
      clock.start();
      try {
        return thread.resume(values);
      } finally {
        clock.halt();
      }
    };
    let step = resume([]);
    for (;;) {
      // A refusal Lua raised at once (its buffers do) ends the run as Limit, not as Lua.
      vm.settleMemory();
      const stopped = stopOf();
      if (stopped) return { type: 'stop', error: stopped };
      if (step.status === 'error') {
        return { type: 'error', error: { kind: 'Lua', message: step.message }, luaKind: 'lua' };
      }
      if (step.status === 'return') return finish(step.values);
      // A yield with no values is the count hook pausing the thread (whose mark is then
      // cleared: a user coroutine's own empty yield must not read as a pause).
      const paused = step.values.length === 0 && vm.takePaused();
      let op: LuaScalar, rest: LuaScalar[];
      if (paused) [op, rest] = ['pause', []];
      else if (step.values[1] === 'kept') ({ op, rest } = takeKept(entry));
      else [, op = null, ...rest] = step.values;
      let answer: LuaScalar[];
      if (op === 'effect') {
        const effectOp = String(rest[0]);
        if (effectOp === 'model.round') {
          const round = prepareRound(run, spec, entry, rest);
          if ('refusal' in round) {
            step = resume([false, 'context', round.refusal]);
            continue;
          }
          const [reply] = await run.scheduler.park(spec.chain, [{ request: round.request, section: spec.section.name }]);
          // A stopping chain reports no round.
          if (stopOf()) continue;
          answer = answerRound(run, spec, round.role, round.turn, reply!, round.tools);
          const calls = fusedCalls(round, answer);
          if (calls) {
            const results = await performCalls(run, spec, calls);
            if (stopOf()) continue;
            answer.push(...results);
            keepMadeRecords(entry, answer);
          }
        } else {
          answer = toLua(effectOp, await performEffect(run, spec, effectOp, JSON.parse(String(rest[1])) as Record<string, Json>));
        }
      } else if (op === 'batch') {
        answer = await performCalls(run, spec, batchCalls(rest));
      } else if (op === 'call') {
        answer = await callSection(run, spec, String(rest[0]), rest[1] as string);
      } else if (op === 'jump') {
        return { type: 'jump', target: String(rest[0]) };
      } else if (op === 'pause') {
        await run.scheduler.pause(spec.chain);
        answer = [];
      } else if (op === 'await') {
        const records = await run.tasks.await(spec.chain, JSON.parse(String(rest[0])) as string[]);
        if (stopOf()) continue;
        answer = awaitAnswer(run, spec, records, rest[1] === true);
      } else if (op === 'fanout') {
        answer = await fanout(run, spec, String(rest[0]), String(rest[1]));
      } else {
        throw new Error(`the Lua runtime asked for an unknown operation ${String(op)}`);
      }
      if (stopOf()) continue;
      step = resume(answer);
    }
  } finally {
    vm.close();
  }
}

/**
 * What `tasks.await` and the await_tasks built-in read: each task's status, result or error
 * as JSON, and whether any of them had seen untrusted text (which the awaiting chain now
 * has too). For Lua, a tainted task's result and failure come wrapped one by one; for the
 * built-in (`forModel`) they come as they are, and the built-in wraps its whole answer.
 */
function awaitAnswer(run: RunContext, spec: EntrySpec, records: TaskRecord[], forModel: boolean): LuaScalar[] {
  const tainted = records.some((record) => record.tainted);
  if (tainted) run.taint.mark(spec.chain);
  const outcomes = records.map((record) => {
    const { result, error } = forModel ? record : run.tasks.handedBack(record);
    return record.status === 'completed'
      ? { id: record.id, status: record.status, result }
      : { id: record.id, status: record.status, kind: error!.kind, message: error!.message };
  });
  return [JSON.stringify(outcomes), tainted];
}

/** A fanout: counted as one section entry, whatever the number of its arms. */
async function fanout(run: RunContext, spec: EntrySpec, name: string, itemsJson: string): Promise<LuaScalar[]> {
  if (!countEntry(run)) return [false, 'limit', run.stop.stopped!.message];
  const items = (JSON.parse(itemsJson) as Json[]).map((item) => JSON.stringify(item));
  const ended = await run.tasks.fanout(spec.chain, name, items);
  if (run.scheduler.stopOf(spec.chain)) return [];
  if (!ended.ok) return [false, ended.error.kind, ended.error.message, ended.task];
  return [true, JSON.stringify(ended.results)];
}

function finish(values: LuaScalar[]): EntryOutcome {
  const [outcome, a, b, c] = values;
  if (outcome === 'return') return { type: 'return', text: String(a) };
  if (outcome === 'fall') return { type: 'fall' };
  if (outcome === 'error') {
    const luaKind = String(a);
    const error: RunError = { kind: runKindOf(luaKind), message: String(b) };
    if (typeof c === 'string') error.traceback = c;
    return { type: 'error', error, luaKind };
  }
  throw new Error(`the Lua runtime ended an entry with ${String(outcome)}`);
}

async function callSection(run: RunContext, spec: EntrySpec, name: string, argsText: string): Promise<LuaScalar[]> {
  const section = run.prompt.sections.find((s) => s.name === name)!;
  const outcome = await enterSection(run, { kind: 'call', section, callArgs: argsText, chain: spec.chain });
  switch (outcome.type) {
    case 'return':
      return [true, outcome.text];
    case 'fall':
      return [true, null];
    case 'error':
      return [false, outcome.luaKind, outcome.error.message];
    case 'stop':
      return [false, luaKindOf(outcome.error.kind), outcome.error.message];
    case 'jump':
      throw new Error('a called section cannot jump');
  }
}

/** Counts one section entry against the cap; false (the run stopping) past it. */
function countEntry(run: RunContext): boolean {
  run.entryCount++;
  if (run.entryCount > run.limits.entries) {
    run.stop.exceed(`the run made ${run.limits.entries} section entries, its cap (a jump loop?)`);
    return false;
  }
  return true;
}

/**
 * Enters a section (counting it against the entry cap, except a fanout arm: its fanout
 * counted once) and reports section_entered.
 */
export async function enterSection(run: RunContext, spec: EntrySpec): Promise<EntryOutcome> {
  if (spec.kind !== 'arm' && !countEntry(run)) return { type: 'stop', error: run.stop.stopped! };
  run.events.emit('section_entered', { section: spec.section.name, task: spec.chain, turn: 0 }, { entry: spec.kind });
  return runEntry(run, spec);
}

/** What an entry keeps between its model rounds. */
interface EntryState {
  conversation: Conversation;
  /** The rendered tool list's wire names and tool ids, once the first round sent them. */
  renderedTools: Record<string, string>;
  /** The rendered tool list's JSON as the last loop round sent it (a round sends it only when it changed). */
  toolsText: string;
  /** The effect leaves.answered could not answer at once, for the yield that follows it. */
  kept: { op: LuaScalar; rest: LuaScalar[] } | null;
  /** The texts of the records the last fused round's answer carried (keepMadeRecords). */
  madeRecords: string[];
  /** The entry's computing time against the host's limit (entry-clock.ts); null without one. */
  clock: EntryClock | null;
}

/** The effect leaves.answered kept (base.lua's R.effect): the thread yielded 'kept' for it. */
function takeKept(entry: EntryState): { op: LuaScalar; rest: LuaScalar[] } {
  const kept = entry.kept;
  if (kept === null) throw new Error('the Lua runtime yielded for kept effect values, and none were kept');
  entry.kept = null;
  return kept;
}

/** Where a model round's yielded values hold the conversation's changed texts (see prepareRound). */
const ROUND_TEXTS_AT = 9;

/** A model round's yielded values read: the conversation brought up to date, the precheck made. */
function prepareRound(
  run: RunContext,
  spec: EntrySpec,
  entry: EntryState,
  rest: LuaScalar[],
): { refusal: string } | PreparedRound {
  const [, head, role, turn, sentTools, toolMap, fuse, from, count] = rest;
  // The rendered list's wire names and tool ids come once, with the section's first round.
  if (typeof toolMap === 'string') entry.renderedTools = JSON.parse(toolMap) as Record<string, string>;
  // from 0: a one-off round (models.infer) over its own single record, with no tools. A loop
  // round's tool list comes only when it changed.
  const tools = from === 0 ? String(sentTools) : sentTools === null ? entry.toolsText : (entry.toolsText = String(sentTools));
  const target = from === 0 ? new Conversation() : entry.conversation;
  // A negative count names the records of the last fused round, which the driver made.
  if (Number(count) < 0) target.update(Number(from), madeRecords(entry, -Number(count)));
  else target.update(from === 0 ? 1 : Number(from), rest, ROUND_TEXTS_AT, Number(count));
  const refusal = precheck(target, String(head), tools, String(role), run.prompt.h1.prose);
  if (refusal) return { refusal };
  reportRoundStart(run, spec, target, from === 0 ? 0 : Number(from), String(role), Number(turn));
  return {
    request: roundRequest(target, String(head), tools, String(role), run.prompt.h1.prose),
    role: String(role),
    turn: Number(turn),
    tools: from === 0 ? null : entry.renderedTools,
    fuse: fuse === true,
  };
}

/**
 * model_turn_started: what this round adds to the conversation the model is sent, for those
 * who watch the run: the records from position `from` on (the earlier ones are in the
 * entry's earlier model_turn_started events), with the system prose when the conversation
 * starts. `once` marks a one-off round (models.infer) over a conversation of its own. Made
 * only when reported: a replay counts the events the stream already holds.
 */
function reportRoundStart(run: RunContext, spec: EntrySpec, conversation: Conversation, from: number, role: string, turn: number): void {
  const system = run.prompt.h1.prose;
  const first = Math.max(from, 1);
  run.events.emit('model_turn_started', { section: spec.section.name, task: spec.chain, turn }, () => ({
    from: first,
    messages: conversation.recordsFrom(first),
    role,
    ...(from === 0 ? { once: true } : {}),
    ...(first === 1 && system !== '' ? { system } : {}),
  }));
}

/** The texts of the records the last fused round's answer carried, `count` of them as Lua says. */
function madeRecords(entry: EntryState, count: number): string[] {
  const records = entry.madeRecords;
  if (records.length !== count) throw new Error(`the Lua runtime named ${count} records of the last round, which made ${records.length}`);
  return records;
}

/**
 * A fused round's answer with its calls' values appended: the texts of the records the Lua
 * loop appends as they are (the assistant record, then each call's), kept for the next round.
 */
function keepMadeRecords(entry: EntryState, values: LuaScalar[]): void {
  const count = Number(values[2]);
  const at = 3 + 3 * count;
  const records = [String(values[at])];
  for (let k = 1; k <= count; k++) records.push(String(values[at + 3 * k]));
  entry.madeRecords = records;
}

/** A model round ready to send: its request, and how its answer goes back to Lua. */
interface PreparedRound {
  request: EffectRequest;
  role: string;
  turn: number;
  /** The rendered list's wire names and tool ids, for a loop round; null for a one-off round. */
  tools: Record<string, string> | null;
  /** Whether the reply's calls may run with the round (see fusedCalls). */
  fuse: boolean;
}

/**
 * The calls of a loop round's reply when they run with the round, at once: every call names a
 * catalog tool of the rendered list, so the Lua loop would batch them all with nothing of its
 * own in between, and the round saves a trip through Lua. null when Lua runs them itself
 * (a local tool or a task built-in among them, a name out of scope, a failed round).
 * `values` is what answerRound gave the round.
 */
function fusedCalls(round: PreparedRound, values: LuaScalar[]): BatchCall[] | null {
  if (!round.fuse || round.tools === null || values[0] !== true) return null;
  const count = Number(values[2]);
  if (count === 0) return null;
  const calls: BatchCall[] = [];
  for (let k = 0; k < count; k++) {
    const name = String(values[4 + 3 * k]);
    const tool = Object.hasOwn(round.tools, name) ? round.tools[name] : undefined;
    if (tool === undefined) return null;
    calls.push({ tool, name, args: JSON.parse(String(values[5 + 3 * k])) as Json, caller: 'model', callId: String(values[3 + 3 * k]), turn: round.turn });
  }
  return calls;
}

/** Whether the entry's chain is being stopped (cancelled, or the run failing). */
function chainStopping(run: RunContext, spec: EntrySpec): boolean {
  return run.scheduler.stopOf(spec.chain) !== null;
}

/**
 * An effect answered at once, without the Lua thread yielding: when the chain runs alone
 * and the journal already holds the answer (a replay's every effect), or when no effect is
 * needed at all (a refused path, a round over the context window). [false] sends the effect
 * the asynchronous way. The answers and events are exactly those of the asynchronous way.
 */
function answerNow(run: RunContext, spec: EntrySpec, entry: EntryState, op: string, rest: LuaScalar[]): LuaScalar[] {
  // Checked first: an effect that must wait is prepared once, by the driver after the yield.
  if (!run.scheduler.canAnswerNow(spec.chain, op === 'batch' ? Number(rest[0]) : 1)) return [false];
  if (op === 'batch') {
    const calls = batchCalls(rest);
    const answers = run.scheduler.answerNow(spec.chain, calls.map((call) => toolRequest(run, spec, call)), spec.section.name);
    if (!answers || chainStopping(run, spec)) return [false];
    return [true, ...finishBatch(run, spec, calls, answers)];
  }
  const effectOp = String(rest[0]);
  if (effectOp === 'model.round') {
    const round = prepareRound(run, spec, entry, rest);
    if ('refusal' in round) return [true, false, 'context', round.refusal];
    const answers = run.scheduler.answerNow(spec.chain, [round.request], spec.section.name);
    if (!answers || chainStopping(run, spec)) return [false];
    const values = answerRound(run, spec, round.role, round.turn, answers[0]!, round.tools);
    const calls = fusedCalls(round, values);
    // The calls run with the round when the journal holds their answers too; otherwise Lua
    // sends them as a batch of its own, which waits for them (a replay whose journal ends
    // between the two).
    if (calls && run.scheduler.canAnswerNow(spec.chain, calls.length)) {
      const results = run.scheduler.answerNow(spec.chain, calls.map((call) => toolRequest(run, spec, call)), spec.section.name);
      if (results && !chainStopping(run, spec)) {
        values.push(...finishBatch(run, spec, calls, results));
        keepMadeRecords(entry, values);
      }
    }
    return [true, ...values];
  }
  const request = toRequest(effectOp, JSON.parse(String(rest[1])) as Record<string, Json>);
  if ('problem' in request) return [true, false, 'lua', request.problem];
  noteStoreTaint(run, spec, request);
  const answers = run.scheduler.answerNow(spec.chain, [request], spec.section.name);
  if (!answers || chainStopping(run, spec)) return [false];
  return [true, ...toLua(effectOp, answers[0]!)];
}

function installLeaves(vm: LuaVm, run: RunContext, spec: EntrySpec, entry: EntryState): void {
  const place = () => ({ section: spec.section.name, task: spec.chain, turn: 0 });
  // The root's path is an empty Lua table, which the runtime's encoder writes as {}.
  const path = (text: LuaScalar): (string | number)[] => {
    const parsed = JSON.parse(String(text)) as (string | number)[] | Record<string, never>;
    return Array.isArray(parsed) ? parsed : [];
  };
  const blocksOf = (name: LuaScalar) => {
    const section = name === null ? spec.section : run.prompt.sections.find((s) => s.name === name);
    return section ? [...section.prologue, ...section.epilogue] : [];
  };
  const vmIndex = run.vmCount++;
  let hooks = 0;
  // A stack overflow ends the run (vm.ts says why it cannot stay a catchable error).
  vm.onOverflow((message) => run.stop.fail({ kind: 'Lua', message }));
  vm.onCount((count): HookVerdict => {
    if (entry.clock?.over()) run.stop.exceed(entry.clock.message());
    if (run.stop.spend(count) || chainStopping(run, spec)) return 'stop';
    // Whether or not other chains wait: the same instruction counts pause an entry on a
    // replay, so the run's steps, and their journaled numbers, stay the same.
    return ++hooks % PAUSE_EVERY === 0 ? 'pause' : 'go';
  });
  const leaves: Record<(typeof LEAF_NAMES)[number], (...args: LuaScalar[]) => LuaScalar | LuaScalar[] | void> = {
    tick: (count) => run.stop.spend(Number(count)) || chainStopping(run, spec),
    answered: (op, ...rest) => {
      const values = answerNow(run, spec, entry, String(op), rest);
      // Not now: the thread yields next, and the driver takes the values from here.
      if (values[0] === false) entry.kept = { op, rest };
      return values;
    },
    paused: () => vm.takePaused(),
    var_get: (text) => {
      const value = run.vars.get(path(text));
      if (value === undefined) return ['nil', null];
      if (value === null) return ['null', null];
      if (typeof value === 'object') return ['table', null];
      // Text that a tainted chain put below this key reaches the reader (a view, a number, does not).
      if (typeof value === 'string') run.taint.readVar(spec.chain, path(text));
      return ['scalar', value];
    },
    var_set: (text, json) => {
      const at = path(text);
      const conflict = at.length > 0 ? run.scheduler.claimVar(spec.chain, at[0]!) : null;
      if (conflict) {
        run.stop.fail({ kind: 'Determinism', message: conflict });
        vm.halting = true;
        return null;
      }
      if (at.length > 0) run.taint.wroteVar(spec.chain, at[0]!);
      const refusal = run.vars.set(at, json === null ? undefined : (JSON.parse(String(json)) as Json));
      if (refusal?.type === 'limit') {
        run.stop.exceed(refusal.message);
        vm.halting = true;
        return null;
      }
      return refusal?.problem ?? null;
    },
    // A length carries no text a tainted chain wrote; key names can.
    var_len: (text) => run.vars.length(path(text)),
    var_keys: (text) => {
      const at = path(text);
      run.taint.readVar(spec.chain, at);
      return JSON.stringify(run.vars.keys(at));
    },
    var_json: (text) => {
      const at = path(text);
      run.taint.readVar(spec.chain, at);
      return run.vars.json(at);
    },
    entry: () => [
      spec.kind,
      spec.section.name,
      spec.section.prologue.length,
      spec.section.epilogue.length,
      spec.section.prose !== '',
      spec.callArgs ?? null,
      JSON.stringify(run.args),
      spec.item ?? null,
      // The run's facts (sys, prompt), as plain values: main.lua names them.
      run.runId,
      spec.section.name,
      spec.chain,
      run.prompt.frontmatter.name,
      run.prompt.title,
      run.prompt.frontmatter.description,
    ],
    block: (name, index) => {
      const blocks = blocksOf(name);
      if (index === 0) return blocks.length;
      const block = blocks[Number(index) - 1]!;
      return [block.source, block.line, chunkName(run.prompt.file)];
    },
    find_section: (ref) => {
      const found = findSection(run.prompt, String(ref));
      return found.ok ? [found.section.name] : [null, found.message];
    },
    prose: () => spec.section.prose,
    event: (type, fields, turn) => {
      run.events.emit(String(type), { ...place(), turn: Number(turn) }, JSON.parse(String(fields)) as Record<string, Json>);
    },
    // An event whose fields are plain values, as name, value, name, value...; the fields in
    // name order, as the runtime's JSON encoder would have written them.
    event_fields: (type, turn, ...pairs) => {
      const order = Array.from({ length: pairs.length / 2 }, (_, k) => 2 * k).sort((a, b) => (String(pairs[a]) < String(pairs[b]) ? -1 : 1));
      const fields: Record<string, Json> = Object.create(null);
      for (const at of order) fields[String(pairs[at])] = pairs[at + 1] as Json;
      run.events.emit(String(type), { ...place(), turn: Number(turn) }, fields);
    },
    catalog: (id) => catalogLeaf(run, id),
    pack_id_problem: (text) => {
      const parsed = parsePackId(String(text));
      return parsed.ok ? null : parsed.reason;
    },
    role: (name) => resolveRole(run, name === null ? null : String(name)),
    set_default_role: (name) => {
      const [role, problem] = resolveRole(run, String(name));
      if (role === null) return problem;
      run.defaultRole = role;
      return null;
    },
    reply_done: (text) => {
      run.replies[spec.section.name] = String(text);
      run.taint.wroteReply(spec.chain, spec.section.name);
      if (spec.chain === MAIN_CHAIN) run.lastReply = String(text);
      else run.tasks.noteReply(spec.chain, String(text));
    },
    task_spawn: (name, argsText) => run.tasks.spawn(spec.chain, String(name), String(argsText)),
    task_status: (id) => {
      const record = run.tasks.get(String(id));
      if (!record) return null;
      return [record.status, record.result ?? record.error?.message ?? null, record.tainted];
    },
    task_cancel: (id, why) => run.tasks.cancel(String(id), why === null ? undefined : String(why)) ?? null,
    prelude: (index) => {
      const preludes = run.catalog.preludes;
      if (index === 0) return preludes.length;
      const prelude = preludes[Number(index) - 1]!;
      return [prelude.packId, prelude.source];
    },
    untrusted: (text) => {
      run.taint.mark(spec.chain);
      return wrapUntrusted(String(text), run.seed.nonce);
    },
    fact: (name) => {
      if (name === 'replies') {
        run.taint.readReplies(spec.chain);
        return JSON.stringify(run.replies);
      }
      if (name === 'system') return run.prompt.h1.prose;
      return null;
    },
    seed: () => run.seed.vmSeed(vmIndex),
  };
  LEAF_NAMES.forEach((name, index) => vm.bindLeaf(index, leaves[name]));
}

function chunkName(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  return base.length > 50 ? base.slice(-50) : base;
}

async function performEffect(run: RunContext, spec: EntrySpec, op: string, payload: Record<string, Json>): Promise<EffectAnswer> {
  const request = toRequest(op, payload);
  if ('problem' in request) return { ok: false, error: { kind: 'lua', message: request.problem } };
  noteStoreTaint(run, spec, request);
  return performRequest(run, spec, request);
}

/** A store operation carries untrusted text's mark between a file and the chain (taint.ts); marking twice is harmless. */
function noteStoreTaint(run: RunContext, spec: EntrySpec, request: EffectRequest): void {
  if ('path' in request && typeof request.path === 'string') run.taint.storeOp(spec.chain, request.op, request.path);
}

async function performRequest(run: RunContext, spec: EntrySpec, request: EffectRequest): Promise<EffectAnswer> {
  const [answer] = await run.scheduler.park(spec.chain, [{ request, section: spec.section.name }]);
  return answer!;
}

function toRequest(op: string, payload: Record<string, Json>): EffectRequest | { problem: string } {
  const checkPath = (fname: string, path: string, allowEmpty = false) => {
    const problem = storePathProblem(path, allowEmpty);
    return problem ? { problem: `${fname}: invalid path ${JSON.stringify(path)}: ${problem}` } : null;
  };
  switch (op) {
    case 'store.read':
    case 'store.delete':
      return checkPath(op, String(payload.path)) ?? { op, path: String(payload.path) };
    case 'store.write':
    case 'store.append':
      return checkPath(op, String(payload.path)) ?? { op, path: String(payload.path), text: String(payload.text) };
    case 'store.list':
      return checkPath(op, String(payload.prefix), true) ?? { op, prefix: String(payload.prefix) };
    case 'sys.now':
      return { op };
    default:
      return { problem: `unknown effect ${op}` };
  }
}

/** The values an effect's answer resumes the Lua thread with. */
function toLua(op: string, answer: EffectAnswer): LuaScalar[] {
  if (!answer.ok) return [false, answer.error.kind, answer.error.message];
  const value = answer.value;
  if (op === 'store.list') return [true, JSON.stringify(value)];
  return [true, typeof value === 'string' ? value : JSON.stringify(value)];
}

/**
 * A model round's request: journaled by the digest of its head, tools and records; the
 * request itself is built only if the Harness reads it (a live round, not a replay).
 */
function roundRequest(conversation: Conversation, head: string, tools: string, role: string, system: string): EffectRequest {
  return new RoundRequest(role, conversation.digest(head, tools), () => conversation.request(head, tools, system));
}

/**
 * A model round's effect request. Its own fields are what the journal keeps; `request`, the
 * request the provider gets, is a getter on the class, so the journal leaves it out. The
 * Harness reads it during the round, while the conversation still holds this round's
 * records. (A class rather than a getter defined on each object: that would make every
 * request a slow dictionary object, and a replay compares one per round.)
 */
class RoundRequest {
  // Assigned in this order, the order the journal's text has always had.
  readonly op: 'model.round';
  readonly role: string;
  readonly digest: string;
  #build: (() => Json) | null;
  #parsed: Json = null;

  constructor(role: string, digest: string, build: () => Json) {
    this.op = 'model.round';
    this.role = role;
    this.digest = digest;
    this.#build = build;
  }

  get request(): Json {
    if (this.#build) {
      this.#parsed = this.#build();
      this.#build = null;
    }
    return this.#parsed;
  }
}

/**
 * The context precheck: a round whose conversation cannot fit the role's context window is
 * refused before it is sent (the loop then compacts and retries once).
 */
function precheck(conversation: Conversation, head: string, tools: string, role: string, system: string): string | null {
  if (!head.includes('"context_window"')) return null;
  const window = (JSON.parse(head) as { config?: { context_window?: number } }).config?.context_window;
  if (typeof window !== 'number') return null;
  const needed = conversation.estimateTokens(tools, system);
  if (needed <= window) return null;
  return `the round needs about ${needed} tokens, more than the context window of ${window} that role "${role}" declares`;
}

/**
 * A model round's answer as the Lua runtime reads it: content, the number of calls, then
 * (id, name, arguments JSON) per call. Reports the round's model_turn_completed here, where
 * the reply is at hand, rather than re-encoding it in Lua.
 */
function answerRound(
  run: RunContext,
  spec: EntrySpec,
  role: string,
  turn: number,
  answer: EffectAnswer,
  renderedTools: Record<string, string> | null,
): LuaScalar[] {
  if (!answer.ok) return [false, answer.error.kind, answer.error.message];
  const checked = checkReply(answer.value);
  if (typeof checked === 'string') return [false, 'model', checked];
  addUsage(run, checked.usage);
  const place = { section: spec.section.name, task: spec.chain, turn };
  run.events.emit('model_turn_completed', place, {
    content: checked.content,
    role,
    tool_calls: checked.tool_calls.length,
    usage: checked.usage,
  });
  const values: LuaScalar[] = [true, checked.content, checked.tool_calls.length];
  for (const call of checked.tool_calls) values.push(call.id, call.name, call.arguments_json);
  if (renderedTools === null) return values;
  // A loop round: its events and the assistant record come from here, where the reply is
  // at hand, so the Lua runtime neither encodes nor decodes it.
  if (checked.tool_calls.length > 0) {
    // Made only when reported: a replay counts the events the stream already holds.
    run.events.emit('assistant_tool_calls', place, () => ({
      calls: checked.tool_calls.map((call) => ({
        arguments: JSON.parse(call.arguments_json) as Json,
        id: call.id,
        name: call.name,
        ...(Object.hasOwn(renderedTools, call.name) ? { tool: renderedTools[call.name]! } : {}),
      })),
    }));
  }
  values.push(assistantRecord(checked));
  return values;
}

/** The JSON text of a reply's assistant record, keys sorted as the Lua encoder sorts them. */
function assistantRecord(reply: CheckedReply): string {
  const content = `{"content":${JSON.stringify(reply.content)},"role":"assistant"`;
  if (reply.tool_calls.length === 0) return `${content}}`;
  const calls = reply.tool_calls.map((call) => `{"arguments":${call.arguments_json},"id":${JSON.stringify(call.id)},"name":${JSON.stringify(call.name)}}`);
  return `${content},"tool_calls":[${calls.join(',')}]}`;
}

/**
 * A tool-call batch: the calls start together, in call order, and answer in call order.
 * `flat` holds the count, then (tool, name, args JSON, caller, call id, turn) per call; the
 * answer is (ok, text) per call: untrusted output wrapped, and for a model's call a failure
 * wrapped too (the model reads it as data), with the call's events reported here.
 */
type BatchCall = { tool: string; name: string; args: Json; caller: 'script' | 'model'; callId: string | null; turn: number };

/** A batch's calls from the yielded values: the count, then six values per call. */
function batchCalls(flat: LuaScalar[]): BatchCall[] {
  const count = Number(flat[0]);
  return Array.from({ length: count }, (_, k) => {
    const [tool, name, argsJson, caller, callId, turn] = flat.slice(1 + k * 6, 7 + k * 6);
    return { tool: String(tool), name: String(name), args: JSON.parse(String(argsJson)) as Json, caller: caller as 'script' | 'model', callId: callId === null ? null : String(callId), turn: Number(turn) };
  });
}

function toolRequest(run: RunContext, spec: EntrySpec, call: BatchCall): EffectRequest {
  return {
    op: 'tool.call',
    tool: call.tool,
    name: call.name,
    args: call.args,
    origin: { execution: run.runId, section: spec.section.name, caller: call.caller },
    call_id: call.callId,
  };
}

/**
 * A tool-call batch: the calls start together, in call order, and answer in call order.
 * `flat` holds the count, then (tool, name, args JSON, caller, call id, turn) per call.
 */
/** Performs a batch of tool calls together; answers each call's values for Lua, in call order. */
async function performCalls(run: RunContext, spec: EntrySpec, calls: BatchCall[]): Promise<LuaScalar[]> {
  const answers = await run.scheduler.park(
    spec.chain,
    calls.map((call): ParkedEffect => ({ request: toolRequest(run, spec, call), section: spec.section.name })),
  );
  if (run.scheduler.stopOf(spec.chain)) return [];
  return finishBatch(run, spec, calls, answers);
}

/**
 * A batch's answers as the Lua runtime reads them: (ok, text, record) per call, untrusted
 * output wrapped, a model's failed call wrapped too (the model reads it as data), and a
 * model's call given its tool record's JSON text; its events reported here.
 */
function finishBatch(run: RunContext, spec: EntrySpec, calls: BatchCall[], answers: EffectAnswer[]): LuaScalar[] {
  const values: LuaScalar[] = [];
  calls.forEach((call, k) => {
    const answer = answers[k]!;
    const trusted = run.catalog.tools.find((tool) => tool.id === call.tool)?.trusted ?? false;
    const output = answer.ok ? (typeof answer.value === 'string' ? answer.value : JSON.stringify(answer.value)) : answer.error.message;
    const wrap = !answer.ok ? call.caller === 'model' : !trusted;
    // A catalog tool's failure text counts as untrusted as well, whoever called it.
    if (!answer.ok || !trusted) run.taint.mark(spec.chain);
    const text = wrap ? wrapUntrusted(output, run.seed.nonce) : output;
    values.push(answer.ok, text, call.caller === 'model' ? `{"content":${JSON.stringify(text)},"role":"tool","tool_call_id":${JSON.stringify(call.callId)}}` : null);
    if (call.caller !== 'model') return;
    const place = { section: spec.section.name, task: spec.chain, turn: call.turn };
    const id = { alias: call.name, tool: call.tool, tool_call_id: call.callId };
    if (answer.ok) run.events.emit('tool_call_succeeded', place, id);
    else run.events.emit('tool_call_failed', place, { ...id, error: answer.error.message });
    run.events.emit('tool_result', place, { alias: call.name, content: text, tool: call.tool, tool_call_id: call.callId, trusted: answer.ok && trusted });
  });
  return values;
}

function addUsage(run: RunContext, usage: Json): void {
  run.usage.rounds++;
  if (usage && typeof usage === 'object' && !Array.isArray(usage)) {
    if (typeof usage.input_tokens === 'number') run.usage.input_tokens += usage.input_tokens;
    if (typeof usage.output_tokens === 'number') run.usage.output_tokens += usage.output_tokens;
  }
}

function catalogLeaf(run: RunContext, id: LuaScalar): LuaScalar | LuaScalar[] {
  if (id === null) {
    // Plain values, each list as its length and then its items' fields (tools.lua reads them).
    const { packs, unavailable, tools } = run.catalog;
    const values: LuaScalar[] = [packs.length];
    for (const pack of packs) values.push(pack.id, pack.declared);
    values.push(unavailable.length);
    for (const entry of unavailable) values.push(entry.id, entry.reason);
    values.push(tools.length);
    for (const tool of tools) values.push(tool.id, tool.description, tool.pack, tool.wire, tool.output, tool.trusted);
    return values;
  }
  const key = String(id);
  if (key.startsWith('builtin:')) {
    const builtin = TASK_BUILTIN_TOOLS.find((tool) => tool.name === key.slice('builtin:'.length))!;
    return JSON.stringify(builtin);
  }
  return JSON.stringify(run.catalog.tools.find((tool) => tool.id === key)?.parameters ?? null);
}

/** The rounds a loop may take when its role sets no round_cap. */
const DEFAULT_ROUND_CAP = 32;

/** A role's label, its config as canonical JSON and its round cap; or null and why not. */
function resolveRole(run: RunContext, name: string | null): [string, string, number] | [null, string] {
  const models = run.prompt.frontmatter.models;
  const declared = Object.keys(models);
  const chosen = name ?? run.defaultRole ?? declared[0] ?? null;
  if (chosen === null) return ['default', '{}', DEFAULT_ROUND_CAP];
  const config = Object.hasOwn(models, chosen) ? models[chosen] : undefined;
  if (!config) return [null, `no model role ${JSON.stringify(chosen)} is declared under models:; declared roles: ${formatNameList(declared)}`];
  return [chosen, canonicalJson(config as Json), config.round_cap ?? DEFAULT_ROUND_CAP];
}
