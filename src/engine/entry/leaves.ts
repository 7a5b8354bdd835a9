/**
 * The leaves: the JS functions a section VM's runtime calls (base.lua's `leaves`), each a
 * function that returns a value and never calls back into Lua. They read and write the run's
 * state (var, replies, tasks, the catalog, events) for the entry they are bound to.
 */
import type { Json } from '../../json/json.ts';
import { findSection } from '../../prompt/heading-ref.ts';
import { parsePackId } from '../../prompt/name-grammar.ts';
import type { LuaBlock } from '../../prompt/types.ts';
import { formatSyntaxError, syntaxCandidates } from '../lua/syntax-place.ts';
import type { HookVerdict, LeafReceiver, LuaLeaf, LuaScalar, LuaVm } from '../lua/vm.ts';
import type { EventPlace } from '../events.ts';
import type { RunContext } from '../run-context.ts';
import { MAIN_CHAIN } from '../scheduler.ts';
import { TASK_BUILTIN_TOOLS } from '../task-builtins.ts';
import { wrapUntrusted } from '../untrusted-envelope.ts';
import type { DriverState, EntrySpec } from './entry-types.ts';
import { answerNow, chainStopping, effectPlan } from './effect-plans.ts';
import { encodeEntry } from './protocol.ts';
import { toolEntryText } from './protocol-records.ts';
import { decodeEventJson, decodeEventPairs, encodeCatalog, encodeVarKeys, encodeVarRead, varPath } from './protocol-leaves.ts';
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
  'syntax_place',
  'untrusted_args',
] as const;

/** Binds the section VM's leaves (LEAF_NAMES) to this entry. */
export function installLeaves(vm: LuaVm, run: RunContext, spec: EntrySpec, entry: DriverState): void {
  vm.bind(new EntryLeaves(vm, run, spec, entry), LEAF_METHODS);
}

type Leaves = { [name in (typeof LEAF_NAMES)[number]]: (this: EntryLeaves, ...args: LuaScalar[]) => LuaScalar | LuaScalar[] | void };

/**
 * One entry's leaves, as methods of one object: a section entry makes one of these rather
 * than a closure per leaf. Each reads and writes the run's state for the entry.
 */
class EntryLeaves implements LeafReceiver, Leaves {
  private readonly vmIndex: number;
  /** Count-hook calls so far (a pause every PAUSE_EVERY). */
  private hooks = 0;

  constructor(
    private readonly vm: LuaVm,
    private readonly run: RunContext,
    private readonly spec: EntrySpec,
    private readonly driver: DriverState,
  ) {
    this.vmIndex = run.vmCount++;
  }

  countHook(count: number): HookVerdict {
    const { run, spec, driver } = this;
    if (driver.clock?.over()) run.stop.exceed(driver.clock.message());
    if (run.stop.spend(count) || chainStopping(run, spec)) return 'stop';
    // Whether or not other chains wait: the same instruction counts pause an entry on a
    // replay, so the run's steps, and their journaled numbers, stay the same.
    return ++this.hooks % PAUSE_EVERY === 0 ? 'pause' : 'go';
  }

  /** A stack overflow ends the run (lua/platform.ts's count hook says why it cannot stay a catchable error). */
  overflow(message: string): void {
    this.run.stop.fail({ kind: 'Lua', message });
  }

  private place(turn: LuaScalar): EventPlace {
    return { section: this.spec.section.name, task: this.spec.chain, turn: Number(turn) };
  }

  tick(count: LuaScalar): boolean {
    return this.run.stop.spend(Number(count)) || chainStopping(this.run, this.spec);
  }

  answered(op: LuaScalar, ...rest: LuaScalar[]): LuaScalar[] {
    const { run, spec, driver } = this;
    const done = answerNow(run, spec, effectPlan(run, spec, driver, String(op), rest));
    if (Array.isArray(done)) return [true, ...done];
    // Not now: the thread yields 'kept' next, and the driver runs the rest of the plan.
    driver.waiting = done;
    return [false];
  }

  paused(): boolean {
    return this.vm.takePaused();
  }

  var_get(text: LuaScalar): LuaScalar[] {
    const value = this.run.vars.get(varPath(text));
    // Text that a tainted chain put below this key reaches the reader (a view, a number, does not).
    if (typeof value === 'string') this.run.taint.readVar(this.spec.chain, varPath(text));
    return encodeVarRead(value);
  }

  var_set(text: LuaScalar, json: LuaScalar): LuaScalar {
    const { run, spec, vm } = this;
    const at = varPath(text);
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
  }

  // A length carries no text a tainted chain wrote; key names can.
  var_len(text: LuaScalar): number {
    return this.run.vars.length(varPath(text));
  }

  var_keys(text: LuaScalar): string {
    const at = varPath(text);
    this.run.taint.readVar(this.spec.chain, at);
    return encodeVarKeys(this.run.vars.keys(at));
  }

  var_json(text: LuaScalar): LuaScalar {
    const at = varPath(text);
    this.run.taint.readVar(this.spec.chain, at);
    return this.run.vars.json(at);
  }

  entry(): LuaScalar[] {
    const { run, spec } = this;
    return encodeEntry({
      kind: spec.kind,
      name: spec.section.name,
      prologue: spec.section.prologue.length,
      epilogue: spec.section.epilogue.length,
      hasProse: spec.section.prose !== '',
      argsText: spec.callArgs ?? null,
      runArgsText: run.entryArgs.plainText,
      untrustedArgNames: run.entryArgs.held?.namesText ?? null,
      itemText: spec.item ?? null,
      runId: run.runId,
      sectionName: spec.section.name,
      taskId: spec.chain,
      promptName: run.prompt.frontmatter.name,
      promptTitle: run.prompt.title,
      promptDescription: run.prompt.frontmatter.description,
    });
  }

  private blocks(name: LuaScalar): LuaBlock[] {
    const section = name === null ? this.spec.section : this.run.prompt.sections.find((s) => s.name === name);
    return section ? [...section.prologue, ...section.epilogue] : [];
  }

  block(name: LuaScalar, index: LuaScalar): LuaScalar | LuaScalar[] {
    const blocks = this.blocks(name);
    if (index === 0) return blocks.length;
    const block = blocks[Number(index) - 1]!;
    return [block.source, block.line, chunkName(this.run.prompt.file)];
  }

  /**
   * A block's syntax error placed at its column (walk.lua): the message at the likeliest
   * place, then (cut byte, message) for each place its token may be at, when there are several.
   */
  syntax_place(name: LuaScalar, index: LuaScalar, error: LuaScalar): LuaScalar[] {
    const block = this.blocks(name)[Number(index) - 1]!;
    const source = '\n'.repeat(block.line - 1) + block.source;
    const chunk = chunkName(this.run.prompt.file);
    const found = syntaxCandidates(source, chunk, String(error));
    if (found === null) return [error];
    if (found.candidates.length <= 1) return [formatSyntaxError(chunk, found.candidates[0]?.place ?? found.fallback)];
    const cuts = found.candidates.flatMap(({ place, cut }) => [utf8Length(source.slice(0, cut)), formatSyntaxError(chunk, place)]);
    return [formatSyntaxError(chunk, found.fallback), ...cuts];
  }

  find_section(ref: LuaScalar): LuaScalar[] {
    const found = findSection(this.run.prompt, String(ref));
    return found.ok ? [found.section.name] : [null, found.message];
  }

  prose(): string {
    return this.spec.section.prose;
  }

  event(type: LuaScalar, fields: LuaScalar, turn: LuaScalar): void {
    this.run.events.emit(String(type), this.place(turn), decodeEventJson(String(fields)));
  }

  /** An event whose fields are plain values, as (name, value) pairs. */
  event_fields(type: LuaScalar, turn: LuaScalar, ...pairs: LuaScalar[]): void {
    this.run.events.emit(String(type), this.place(turn), decodeEventPairs(pairs));
  }

  /** The catalog for tools.lua (no id), or one tool's parameters as JSON (a task built-in's whole entry, by `builtin:` and its name). */
  catalog(id: LuaScalar): LuaScalar | LuaScalar[] {
    const { catalog } = this.run;
    if (id === null) return encodeCatalog(catalog);
    const key = String(id);
    if (key.startsWith('builtin:')) {
      const builtin = TASK_BUILTIN_TOOLS.find((tool) => tool.name === key.slice('builtin:'.length))!;
      return toolEntryText(builtin);
    }
    return JSON.stringify(catalog.tools.find((tool) => tool.id === key)?.parameters ?? null);
  }

  pack_id_problem(text: LuaScalar): LuaScalar {
    const parsed = parsePackId(String(text));
    return parsed.ok ? null : parsed.reason;
  }

  role(name: LuaScalar): LuaScalar[] {
    return resolveRole(this.run, name === null ? null : String(name));
  }

  set_default_role(name: LuaScalar): LuaScalar {
    const [role, problem] = resolveRole(this.run, String(name));
    if (role === null) return problem;
    this.run.defaultRole = role;
    return null;
  }

  reply_done(text: LuaScalar): void {
    const { run, spec } = this;
    run.replies[spec.section.name] = String(text);
    run.taint.wroteReply(spec.chain, spec.section.name);
    if (spec.chain === MAIN_CHAIN) run.lastReply = String(text);
    else run.tasks.noteReply(spec.chain, String(text));
  }

  task_spawn(name: LuaScalar, argsText: LuaScalar): LuaScalar | LuaScalar[] {
    return this.run.tasks.spawn(this.spec.chain, String(name), String(argsText));
  }

  task_status(id: LuaScalar): LuaScalar | LuaScalar[] {
    const record = this.run.tasks.get(String(id));
    if (!record) return null;
    return [record.status, record.result ?? record.error?.message ?? null, record.tainted];
  }

  task_cancel(id: LuaScalar, why: LuaScalar): LuaScalar {
    return this.run.tasks.cancel(String(id), why === null ? undefined : String(why)) ?? null;
  }

  prelude(index: LuaScalar): LuaScalar | LuaScalar[] {
    const preludes = this.run.catalog.preludes;
    if (index === 0) return preludes.length;
    const prelude = preludes[Number(index) - 1]!;
    return [prelude.packId, prelude.source];
  }

  untrusted(text: LuaScalar): string {
    this.run.taint.mark(this.spec.chain);
    return wrapUntrusted(String(text), this.run.seed.nonce);
  }

  /** The untrusted args, wrapped, for the chain that reads one: it has seen untrusted text. */
  untrusted_args(): LuaScalar {
    this.run.taint.mark(this.spec.chain);
    return this.run.entryArgs.held?.text ?? '{}';
  }

  fact(name: LuaScalar): LuaScalar {
    if (name === 'replies') {
      this.run.taint.readReplies(this.spec.chain);
      return JSON.stringify(this.run.replies);
    }
    if (name === 'system') return this.run.prompt.h1.prose;
    return null;
  }

  seed(): LuaScalar[] {
    return this.run.seed.vmSeed(this.vmIndex);
  }
}

/** The leaves' methods in LEAF_NAMES order: what each leaf index calls. */
const LEAF_METHODS: readonly LuaLeaf[] = LEAF_NAMES.map((name) => EntryLeaves.prototype[name] as LuaLeaf);

const UTF8 = new TextEncoder();

function utf8Length(text: string): number {
  return UTF8.encode(text).length;
}

function chunkName(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  return base.length > 50 ? base.slice(-50) : base;
}
