/**
 * Tasks and fanout arms: chains a section entry starts, each running one section in a VM
 * of its own, concurrently with the rest of the run (scheduler.ts interleaves them).
 *
 * A task started by chain P gets the id `P.n` (n counts the tasks P started, from 0), so
 * the main chain's tasks are `0.0`, `0.1`, ... and a task's own tasks `0.0.0`, ... The arms
 * of P's k-th fanout (k from 0) are `P.fk.i`, i being the item's 1-based index. A task ends
 * completed (its section's value by the scalar return rule, or when it returns nothing the
 * reply of its last model step, or nil), failed (the error it raised) or cancelled.
 */
import type { Prompt } from '../prompt/types.ts';
import type { RunError } from './errors.ts';
import type { EntryOutcome, EntrySpec } from './entry/entry-types.ts';
import type { RunContext } from './run-context.ts';
import { luaKindOf } from './errors.ts';
import { wrapUntrustedOnce } from './untrusted-envelope.ts';

/** Where a task stands. */
export type TaskStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** A task or arm, as the run keeps it. */
export interface TaskRecord {
  id: string;
  kind: 'task' | 'arm';
  /** The section it runs (heading text). */
  section: string;
  /** The chain that started it. */
  parent: string;
  status: TaskStatus;
  /** A completed task's result; null when it has none. */
  result: string | null;
  /** A failed or cancelled task's error, with its Lua-side kind. */
  error: { kind: string; message: string } | null;
  /** The reply of the task's last model step. */
  reply: string | null;
  /** Whether the task had seen untrusted text when it ended (taint.ts): what it hands back is wrapped. */
  tainted: boolean;
}

/** How a fanout ended: every arm's result in item order, or the first arm failure. */
export type FanoutEnd = { ok: true; results: (string | null)[] } | { ok: false; task: string; error: { kind: string; message: string } };

/** How many arms of one fanout hold a VM at once: bounds the memory a fanout of many items takes. */
export const ARMS_AT_ONCE = 8;

/** Enters a section; entry/driver.ts's, handed in to keep the two modules apart. */
export type EnterSection = (run: RunContext, spec: EntrySpec) => Promise<EntryOutcome>;

/** The run's tasks and arms. */
export class TaskBoard {
  private readonly records = new Map<string, TaskRecord>();
  private readonly started = new Map<string, number>();
  private readonly fanouts = new Map<string, number>();

  constructor(
    private readonly run: RunContext,
    private readonly enter: EnterSection,
  ) {}

  /** Starts a task of `parent` on a section; `callArgs` is the JSON list its blocks get as `...`. */
  spawn(parent: string, section: string, callArgs: string): string {
    const n = this.started.get(parent) ?? 0;
    this.started.set(parent, n + 1);
    const record = this.newRecord(`${parent}.${n}`, 'task', section, parent);
    this.start(record, { callArgs });
    return record.id;
  }

  /** A task or arm by id. */
  get(id: string): TaskRecord | undefined {
    return this.records.get(id);
  }

  /** Cancels a running task or arm and every task it started; returns its status before. */
  cancel(id: string, why?: string): TaskStatus | undefined {
    const record = this.records.get(id);
    if (!record || record.status !== 'running') return record?.status;
    const message = `${record.kind === 'arm' ? 'fanout arm' : 'task'} ${id} was cancelled${why ? `: ${why}` : ''}`;
    record.status = 'cancelled';
    record.error = { kind: 'cancelled', message };
    this.run.scheduler.cancel(id, { kind: 'Cancelled', message });
    this.run.events.emit('task_cancelled', this.place(record), { message });
    for (const child of this.records.values()) if (child.parent === id) this.cancel(child.id, `its parent ${id} was cancelled`);
    return 'running';
  }

  /** Cancels every task still running (the run ends). */
  cancelAll(why: string): void {
    for (const record of this.records.values()) if (record.status === 'running') this.cancel(record.id, why);
  }

  /** Keeps the reply of a task's model step: its result when its section returns nothing. */
  noteReply(chain: string, text: string): void {
    const record = this.records.get(chain);
    if (record) record.reply = text;
  }

  /** Waits, parked, until every listed task has ended; returns their records. */
  async await(chain: string, ids: string[]): Promise<TaskRecord[]> {
    const records = ids.map((id) => this.records.get(id)!);
    await this.run.scheduler.waitUntil(chain, () => records.every((record) => record.status !== 'running'));
    return records;
  }

  /**
   * Runs one arm per item (each item's JSON text), at most ARMS_AT_ONCE at a time, and waits
   * for them all. The first arm to fail cancels the others and is the fanout's outcome.
   */
  async fanout(parent: string, section: string, items: string[]): Promise<FanoutEnd> {
    const k = this.fanouts.get(parent) ?? 0;
    this.fanouts.set(parent, k + 1);
    const records: TaskRecord[] = [];
    let live = 0;
    let failure: TaskRecord | null = null;
    const startMore = () => {
      while (failure === null && live < ARMS_AT_ONCE && records.length < items.length && !this.run.scheduler.stopOf(parent)) {
        const index = records.length + 1;
        const record = this.newRecord(`${parent}.f${k}.${index}`, 'arm', section, parent);
        records.push(record);
        live++;
        this.start(record, { item: items[index - 1]! }, () => {
          live--;
          if (record.status === 'failed' && failure === null) {
            failure = record;
            for (const other of records) this.cancel(other.id, `fanout arm ${record.id} failed`);
          }
          startMore();
        });
      }
    };
    startMore();
    await this.run.scheduler.waitUntil(parent, () => failure !== null || (records.length === items.length && live === 0));
    const failed = failure as TaskRecord | null;
    // The arms' text reaches the parent's Lua: a tainted arm's wrapped, and the parent has seen it.
    if (records.some((record) => record.tainted)) this.run.taint.mark(parent);
    if (failed) return { ok: false, task: failed.id, error: this.handedBack(failed).error! };
    return { ok: true, results: records.map((record) => this.handedBack(record).result) };
  }

  /**
   * What a task hands back to the chain that awaits it: its result and error as they are, or,
   * when it had seen untrusted text, its result and a failure's message wrapped in the run's
   * envelope (a cancellation's message is the Engine's own and stays as it is).
   */
  handedBack(record: TaskRecord): Pick<TaskRecord, 'result' | 'error'> {
    if (!record.tainted) return record;
    const nonce = this.run.seed.nonce;
    const result = record.result === null ? null : wrapUntrustedOnce(record.result, nonce);
    const error =
      record.error && record.status === 'failed' ? { kind: record.error.kind, message: wrapUntrustedOnce(record.error.message, nonce) } : record.error;
    return { result, error };
  }

  private newRecord(id: string, kind: 'task' | 'arm', section: string, parent: string): TaskRecord {
    const record: TaskRecord = { id, kind, section, parent, status: 'running', result: null, error: null, reply: null, tainted: false };
    this.records.set(id, record);
    this.run.taint.inherit(parent, id);
    return record;
  }

  private start(record: TaskRecord, extra: { callArgs?: string; item?: string }, onEnd?: () => void): void {
    const fields =
      record.kind === 'arm'
        ? { kind: 'arm', parent: record.parent, item: Number(record.id.slice(record.id.lastIndexOf('.') + 1)) }
        : { kind: 'task', parent: record.parent };
    this.run.events.emit('task_started', this.place(record), fields);
    this.run.scheduler.add(record.id, async () => {
      const stopped = this.run.scheduler.stopOf(record.id);
      const section = sectionNamed(this.run.prompt, record.section);
      const outcome: EntryOutcome = stopped
        ? { type: 'stop', error: stopped }
        : await this.enter(this.run, { kind: record.kind, section, chain: record.id, ...extra });
      this.settle(record, outcome);
      onEnd?.();
    });
  }

  private settle(record: TaskRecord, outcome: EntryOutcome): void {
    if (record.status !== 'running') return;
    record.tainted = this.run.taint.has(record.id);
    const place = this.place(record);
    if (outcome.type === 'return' || outcome.type === 'fall') {
      record.status = 'completed';
      record.result = outcome.type === 'return' ? outcome.text : record.reply;
      this.run.events.emit('task_completed', place, { result: record.result });
      return;
    }
    if (outcome.type === 'stop' && !this.run.stop.stopped) {
      // Cancelled while it ran (the scheduler's stop), though not through cancel: treat alike.
      this.cancel(record.id, outcome.error.message);
      return;
    }
    const error: RunError = outcome.type === 'jump' ? { kind: 'Lua', message: `a ${record.kind} cannot jump` } : outcome.error;
    record.status = 'failed';
    record.error = { kind: outcome.type === 'error' ? outcome.luaKind : luaKindOf(error.kind), message: error.message };
    this.run.events.emit('task_failed', place, { error: { kind: error.kind, message: error.message } });
  }

  private place(record: TaskRecord) {
    return { section: record.section, task: record.id, turn: 0 };
  }
}

function sectionNamed(prompt: Prompt, name: string) {
  return prompt.sections.find((section) => section.name === name)!;
}
