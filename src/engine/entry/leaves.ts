/**
 * The leaves: the JS functions a section VM's runtime calls (base.lua's `leaves`), each a
 * function that returns a value and never calls back into Lua. They read and write the run's
 * state (var, replies, tasks, the catalog, events) for the entry they are bound to.
 */
import type { Json } from '../../json/json.ts';
import { findSection } from '../../prompt/heading-ref.ts';
import { parsePackId } from '../../prompt/name-grammar.ts';
import type { HookVerdict, LuaScalar, LuaVm } from '../lua/vm.ts';
import type { RunContext } from '../run-context.ts';
import { MAIN_CHAIN } from '../scheduler.ts';
import { TASK_BUILTIN_TOOLS } from '../task-builtins.ts';
import { wrapUntrusted } from '../untrusted-envelope.ts';
import type { DriverState, EntrySpec } from './driver.ts';
import { answerNow, chainStopping, effectPlan } from './effect-plans.ts';
import { encodeEntry } from './protocol.ts';
import { resolveRole } from './roles.ts';

/**
 * Count-hook calls (of 10,000 instructions each) between two pauses of a long-running entry:
 * a pause lets the other chains run, and the host hear a cancellation.
 */
const PAUSE_EVERY = 100;

/** The JS functions a section VM's runtime calls (base.lua's `leaves`), each a leaf of its own, numbered by position. */
export const LEAF_NAMES = [
  'tick',
  'var_get',
  'var_set',
  'var_len',
  'var_keys',
  'var_json',
  'entry',
  'block',
  'find_section',
  'prose',
  'event',
  'event_fields',
  'untrusted',
  'fact',
  'seed',
  'catalog',
  'pack_id_problem',
  'role',
  'set_default_role',
  'reply_done',
  'prelude',
  'paused',
  'task_spawn',
  'task_status',
  'task_cancel',
  'answered',
] as const;

/** Binds the section VM's leaves (LEAF_NAMES) to this entry. */
export function installLeaves(vm: LuaVm, run: RunContext, spec: EntrySpec, entry: DriverState): void {
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
  // A stack overflow ends the run (lua/platform.ts's count hook says why it cannot stay a catchable error).
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
      const done = answerNow(run, spec, effectPlan(run, spec, entry, String(op), rest));
      if (Array.isArray(done)) return [true, ...done];
      // Not now: the thread yields 'kept' next, and the driver runs the rest of the plan.
      entry.waiting = done;
      return [false];
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
    entry: () =>
      encodeEntry({
        kind: spec.kind,
        name: spec.section.name,
        prologue: spec.section.prologue.length,
        epilogue: spec.section.epilogue.length,
        hasProse: spec.section.prose !== '',
        argsText: spec.callArgs ?? null,
        runArgsText: JSON.stringify(run.args),
        itemText: spec.item ?? null,
        runId: run.runId,
        sectionName: spec.section.name,
        taskId: spec.chain,
        promptName: run.prompt.frontmatter.name,
        promptTitle: run.prompt.title,
        promptDescription: run.prompt.frontmatter.description,
      }),
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

/** The catalog as tools.lua reads it: the whole of it as plain values, or one tool's parameters as JSON. */
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
