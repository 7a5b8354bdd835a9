/**
 * The section driver: one section entry is a fresh Lua VM running the section's blocks,
 * driven by hand. Each yield of its thread is a request this driver answers: the rest of an
 * effect the leaf `answered` could not answer at once (effect-plans.ts), a pause, or an
 * Engine operation (call, jump, await, fanout).
 */
import type { Json } from '../../json/json.ts';
import { Conversation } from '../conversation.ts';
import { EntryClock } from '../entry-clock.ts';
import { luaKindOf, runKindOf, type RunError } from '../errors.ts';
import type { LuaScalar, VmTemplate } from '../lua/vm.ts';
import { LAZY_MODULES, runtimeChunk } from '../lua/runtime/index.ts';
import type { RunContext } from '../run-context.ts';
import type { TaskRecord } from '../tasks.ts';
import { awaitPlan, chainStopping } from './effect-plans.ts';
import type { DriverState, EntryOutcome, EntrySpec, Waiting } from './entry-types.ts';
import { installLeaves, LEAF_NAMES } from './leaves.ts';
import { awaitAnswer, callAnswer, decodeEnd, decodeRequest, failure, fanoutAnswer, type EngineRequest } from './protocol.ts';

/**
 * How every section VM starts: the runtime loaded and run up to the point where the VM needs
 * its entry (main.lua's `__rv_bind` gives it that). A memory region saves the result once and
 * copies it back for every later entry (lua/platform.ts).
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
  const entry: DriverState = {
    conversation: new Conversation(),
    renderedTools: {},
    toolsText: 'null',
    waiting: null,
    fusedRecords: { texts: [], values: [] },
    clock,
  };
  try {
    installLeaves(vm, run, spec, entry);
    vm.callGlobal('__rv_bind');
    vm.limitMemory();
    const thread = vm.newThread('__rv_main');
    // The entry computes only inside resume: its clock runs there and nowhere else.
    const resume =
      clock === null
        ? (values: LuaScalar[]) => thread.resume(values)
        : (values: LuaScalar[]) => {
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
      let answer: LuaScalar[];
      // What the thread asks for after the mark (R.effect's 'kept', R.request's operations).
      const asked = paused ? null : decodeRequest(step.values.slice(1));
      if (asked === null || asked.op === 'pause') {
        // The count hook paused the thread, or a coroutine it paused passed the pause on.
        await run.scheduler.pause(spec.chain);
        answer = [];
      } else if (asked.op === 'kept') {
        // An effect the leaf `answered` could not answer at once: the rest of its plan.
        const values = await awaitPlan(run, spec, takeWaiting(entry));
        if (values === null) continue;
        answer = values;
      } else if (asked.op === 'jump') {
        return { type: 'jump', target: asked.section };
      } else answer = await request(run, spec, asked);
      if (stopOf()) continue;
      step = resume(answer);
    }
  } finally {
    vm.close();
  }
}

/** Answers an Engine operation the runtime asked for with R.request (jump, pause and kept are the driver loop's). */
async function request(run: RunContext, spec: EntrySpec, asked: Exclude<EngineRequest, { op: 'jump' | 'pause' | 'kept' }>): Promise<LuaScalar[]> {
  switch (asked.op) {
    case 'call':
      return callSection(run, spec, asked.section, asked.argsJson);
    case 'await': {
      const records = await run.tasks.await(spec.chain, JSON.parse(asked.idsJson) as string[]);
      return chainStopping(run, spec) ? [] : awaitOutcomes(run, spec, records, asked.forModel);
    }
    case 'fanout':
      return fanout(run, spec, asked.section, asked.itemsJson);
  }
}

/** The plan the leaf `answered` left waiting (base.lua's R.effect): the thread yielded 'kept' for it. */
function takeWaiting(entry: DriverState): Waiting {
  const waiting = entry.waiting;
  if (waiting === null) throw new Error('the Lua runtime yielded for kept effect values, and none were kept');
  entry.waiting = null;
  return waiting;
}

/**
 * What `tasks.await` and the await_tasks built-in read: each task's status, result or error
 * as JSON, and whether any of them had seen untrusted text (which the awaiting chain now
 * has too). For Lua, a tainted task's result and failure come wrapped one by one; for the
 * built-in (`forModel`) they come as they are, and the built-in wraps its whole answer.
 */
function awaitOutcomes(run: RunContext, spec: EntrySpec, records: TaskRecord[], forModel: boolean): LuaScalar[] {
  const tainted = records.some((record) => record.tainted);
  if (tainted) run.taint.mark(spec.chain);
  const outcomes = records.map((record) => {
    const { result, error } = forModel ? record : run.tasks.handedBack(record);
    return { id: record.id, status: record.status, result, error };
  });
  return awaitAnswer(outcomes, tainted);
}

/** A fanout: counted as one section entry, whatever the number of its arms. */
async function fanout(run: RunContext, spec: EntrySpec, name: string, itemsJson: string): Promise<LuaScalar[]> {
  if (!countEntry(run)) return failure('limit', run.stop.stopped!.message);
  const items = (JSON.parse(itemsJson) as Json[]).map((item) => JSON.stringify(item));
  const ended = await run.tasks.fanout(spec.chain, name, items);
  if (run.scheduler.stopOf(spec.chain)) return [];
  if (!ended.ok) return fanoutAnswer({ ok: false, kind: ended.error.kind, message: ended.error.message, task: ended.task });
  return fanoutAnswer({ ok: true, resultsJson: JSON.stringify(ended.results) });
}

/** The entry's outcome from what `__rv_main` returned. */
function finish(values: LuaScalar[]): EntryOutcome {
  const end = decodeEnd(values);
  switch (end.end) {
    case 'return':
      return { type: 'return', text: end.text };
    case 'fall':
      return { type: 'fall' };
    case 'error': {
      const error: RunError = { kind: runKindOf(end.kind), message: end.message };
      if (end.traceback !== null) error.traceback = end.traceback;
      return { type: 'error', error, luaKind: end.kind };
    }
    case 'stop':
      // The run's stop is read before the entry's values (stopOf): a stop the run does not know of is a bug.
      throw new Error('the Lua runtime ended an entry with stop, and the run is not stopping');
  }
}

async function callSection(run: RunContext, spec: EntrySpec, name: string, argsText: string): Promise<LuaScalar[]> {
  const section = run.prompt.sections.find((s) => s.name === name)!;
  const outcome = await enterSection(run, { kind: 'call', section, callArgs: argsText, chain: spec.chain });
  switch (outcome.type) {
    case 'return':
      return callAnswer(outcome.text);
    case 'fall':
      return callAnswer(null);
    case 'error':
      return failure(outcome.luaKind, outcome.error.message);
    case 'stop':
      return failure(luaKindOf(outcome.error.kind), outcome.error.message);
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
