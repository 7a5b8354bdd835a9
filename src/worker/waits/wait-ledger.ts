/**
 * One lifecycle for everything a run waits on: an operator's answer to an ask, or the
 * result an HTTP tool service posts for a call that answered 202 (DESIGN.md Part 2, "Asks,
 * the inbox and notifications" and "Tools that wait"). Both are a wait of one chain (the
 * run's `0`, a task such as `0.1`, a fanout arm such as `0.f0.2`), kept in the run's storage
 * so that whoever posts the result finds it whether or not the run is in memory.
 *
 *   opening ──▶ pending ──▶ done      the first result posted (or settled) wins; the same
 *      │           │                  result again is a retry, another one a refusal
 *      │           ├──────▶ expired   its deadline passed first (the alarm, alarm-duties.ts)
 *      └───────────┴──────▶ closed    its task was cancelled, or the run ended
 *
 * `opening` is a wait recorded but not yet waited on: a tool call being sent (a replay sends
 * it again, under the same id). An ask is pending from the moment it is stored. A wait that
 * has ended never changes again, and a live run's chain that waits on it (`Waiters`) is
 * handed that end; a run not in memory is replayed, and its replay finds the end stored.
 * Each wait has its own token, HMAC-derived by the Worker under its kind's label
 * (ask-token.ts, call-token.ts) and compared in constant time before the run object is
 * called, so a token answers its own wait and nothing else.
 *
 * What differs between the kinds, and why, is `WAIT_KINDS` below, and nothing else: the
 * ledger's judgement of a posted result, its expiry, its closing and how a run resumes from
 * an ended wait are the same for both. Whatever ended a wait (a result, its deadline), the
 * live run's chain that waits is handed the end, or the run, not in memory, is relaunched
 * (relaunching a run that is in memory would do nothing). A result for a wait that expired
 * is refused as expired even once the run has ended since: the cause that came first.
 *
 * The ledger works on a `WaitStore`: the run object's storage (stored-waits.ts, which keeps
 * the record layouts runs already stored: `ask:{id}` and `call:{id}`) or memory (tests).
 */
import { sameResult, type ToolResult } from '../../host/tool-calls.ts';
import type { Refusal } from '../run-object/run-object-api.ts';

/** Where a wait stands (see the module's header). */
export type WaitState = 'opening' | 'pending' | 'done' | 'expired' | 'closed';

/** What a run waits on. */
export type WaitKind = 'ask' | 'call';

/** One wait as the ledger sees it, whatever layout its kind stores. */
export interface Wait<P> {
  id: string;
  /** The chain that waits: `0`, a task such as `0.1`, a fanout arm such as `0.f0.2`. */
  task: string;
  state: WaitState;
  /** When it expires (ISO 8601), or null for a wait without a deadline (an ask without a timeout). */
  deadline: string | null;
  /** The result taken, once `done`. */
  result?: P;
  /** When the result was taken (ISO 8601), once `done`. */
  doneAt?: string;
  /** The only results an ask takes (absent or null: any). */
  choices?: readonly string[] | null;
}

/** How a wait ended: its result, or why none will come. */
export type WaitEnd<P> = { kind: 'done'; result: P } | { kind: 'expired' } | { kind: 'closed' };

/**
 * Why a wait ends: a result posted to it (the answer route, the callback route), a result
 * the call had at once (`settled`: the service did not answer 202), its deadline, its task's
 * cancellation, or the end of its run. Stores record the first three with an event.
 */
export type EndCause = 'posted' | 'settled' | 'expired' | 'cancelled' | 'run-ended';

/** Where a ledger keeps the waits of one kind of one run. */
export interface WaitStore<P> {
  /** The run's id, for the refusal of a wait it does not have. */
  runId(): string;
  get(id: string): Wait<P> | undefined;
  /** The run's waits of this kind, in the order they were made. */
  list(): Wait<P>[];
  /** Records how wait `id` ended, and why, at `now` (epoch ms), with its event, in one transaction. */
  end(id: string, end: WaitEnd<P>, cause: EndCause, now: number): void;
}

/** What differs between the kinds of wait: every difference the lifecycle keeps, each with its reason. */
export interface WaitKindPolicy<P> {
  kind: WaitKind;
  /** How refusals name a wait and its result. */
  noun: string;
  /** The refusal reason of an id the run does not have. */
  missing: 'no-ask' | 'no-call';
  /** True when `b` is the result `a` again: a retry whose response was lost, not a second result. */
  same(a: P, b: P): boolean;
  /** The refusal of each stale result, in this kind's words. */
  stale: {
    taken(wait: Wait<P>): string;
    expired(wait: Wait<P>): string;
    runEnded(wait: Wait<P>, status: string): string;
    closed(wait: Wait<P>): string;
  };
}

/** An answer to an ask: its text, and who answered as the answer said (null: nobody said). */
export interface AskAnswer {
  text: string;
  by: string | null;
}

/** What a service posts for a call: its output, or its failure text (tool-calls.ts's ToolResult). */
export type CallResult = ToolResult;

/**
 * The kinds of wait, side by side. What they share is the module's lifecycle; what differs:
 *
 * - The result. An ask's is the operator's text, one of its `choices` when it has some
 *   (who answered is kept, not compared); a call's is the service's `{output}` or `{error}`,
 *   compared as canonical JSON (a retry may reorder keys).
 * - The deadline. An ask has one only when the prompt gave `timeout` (a person may take
 *   days, and the run's own deadline bounds it anyway); a call always has one (a service
 *   that lost the call would otherwise hold its chain until the run times out).
 * - When the wait starts. An ask is pending once stored; a call is `opening` while it is
 *   sent, and pending only once the service answered 202 (a call whose send died is sent
 *   again by the replay, under the same id, and its deadline is not yet running out).
 * - What the waiting chain gets from an expired or closed wait. An ask's tool call fails
 *   with OPERATOR_WINDOW_CLOSED either way (the model may ask again); a call fails with
 *   "no result within N s" or "abandoned" (tool-calls.ts), since the model can act on which.
 * - Who is told. An ask's changes go to the outbox (the inbox index, notifications): a
 *   person must learn there is something to answer. A call's do not: its service holds the
 *   callback URL already.
 * - The token's label (ask-token.ts, call-token.ts), so an ask token is never a call token.
 */
export const WAIT_KINDS: { ask: WaitKindPolicy<AskAnswer>; call: WaitKindPolicy<CallResult> } = {
  ask: {
    kind: 'ask',
    noun: 'ask',
    missing: 'no-ask',
    same: (a, b) => a.text === b.text,
    stale: {
      taken: (wait) => `ask ${wait.id} was already answered (at ${wait.doneAt}) with another answer; an answer is taken once`,
      expired: (wait) => `ask ${wait.id} is no longer pending: it expired at ${wait.deadline}, so the answer is stale`,
      runEnded: (wait, status) => `ask ${wait.id} is no longer pending: the run has ended (${status}), so the answer is stale`,
      closed: (wait) => `ask ${wait.id} is no longer pending: the task that asked was cancelled, so the answer is stale`,
    },
  },
  call: {
    kind: 'call',
    noun: 'tool call',
    missing: 'no-call',
    same: sameResult,
    stale: {
      taken: (wait) => `tool call ${wait.id} already has a different result (received at ${wait.doneAt}); a result is taken once`,
      expired: (wait) => `tool call ${wait.id} is no longer waiting: its deadline passed at ${wait.deadline}, so the result is stale`,
      runEnded: (wait, status) => `tool call ${wait.id} is no longer waiting: the run has ended (${status}), so the result is stale`,
      closed: (wait) => `tool call ${wait.id} is no longer waiting: the task that made it was cancelled, so the result is stale`,
    },
  },
};

/** What a posted result gets: taken, the result taken again (a retry), or a refusal. */
export type Taking = 'taken' | 'retry' | Refusal;

/** True for a wait still open (`opening` or `pending`). */
export const isOpen = (wait: Wait<unknown>): boolean => wait.state === 'opening' || wait.state === 'pending';

/** How an ended wait ended, or null while it is open. */
export function endOf<P>(wait: Wait<P>): WaitEnd<P> | null {
  switch (wait.state) {
    case 'done':
      return { kind: 'done', result: wait.result as P };
    case 'expired':
      return { kind: 'expired' };
    case 'closed':
      return { kind: 'closed' };
    default:
      return null;
  }
}

/** True when the wait of chain `chain` belongs to `task` or to a task it started (chain ids hold no `-`). */
export const withinTask = (chain: string, task: string): boolean => chain === task || chain.startsWith(`${task}.`);

/** The waits of one kind of one run, over a store: the lifecycle in the module's header. */
export class WaitLedger<P> {
  constructor(
    readonly store: WaitStore<P>,
    readonly policy: WaitKindPolicy<P>,
  ) {}

  /**
   * Judges a result posted for wait `id` while the run's status is `status` (`ended`: the
   * run has ended) and takes it if it is the first: done again with the same result is a
   * retry, anything stale is refused, saying why, and so is an answer outside an ask's
   * choices.
   */
  take(id: string, result: P, run: { status: string; ended: boolean }, now: number): Taking {
    const wait = this.store.get(id);
    const { noun, stale } = this.policy;
    if (!wait) return { ok: false, reason: this.policy.missing, status: 404, message: `run ${this.store.runId()} has no ${noun} ${JSON.stringify(id)}` };
    if (wait.state === 'done') {
      if (wait.result !== undefined && this.policy.same(wait.result, result)) return 'retry';
      return { ok: false, reason: 'taken', status: 409, message: stale.taken(wait) };
    }
    if (wait.state === 'expired') return { ok: false, reason: 'expired', status: 409, message: stale.expired(wait) };
    if (run.ended) return { ok: false, reason: 'run-ended', status: 409, message: stale.runEnded(wait, run.status) };
    if (wait.state === 'closed') return { ok: false, reason: 'closed', status: 409, message: stale.closed(wait) };
    if (wait.choices && this.policy.kind === 'ask') {
      const text = (result as AskAnswer).text;
      if (!wait.choices.includes(text)) {
        return {
          ok: false,
          reason: 'not-a-choice',
          status: 400,
          message: `the answer must be one of the ask's choices: ${wait.choices.map((choice) => JSON.stringify(choice)).join(', ')}`,
          choices: [...wait.choices],
        };
      }
    }
    this.store.end(id, { kind: 'done', result }, 'posted', now);
    return 'taken';
  }

  /** Ends open wait `id` with the result it had at once (a call the service answered without 202); nothing if it has ended. */
  settle(id: string, result: P, now: number): void {
    const wait = this.store.get(id);
    if (wait && isOpen(wait)) this.store.end(id, { kind: 'done', result }, 'settled', now);
  }

  /** Ends, as expired, every pending wait whose deadline is at or before `now`; answers their ids. */
  expire(now: number): string[] {
    const expired: string[] = [];
    for (const wait of this.store.list()) {
      if (wait.state !== 'pending' || wait.deadline === null || Date.parse(wait.deadline) > now) continue;
      this.store.end(wait.id, { kind: 'expired' }, 'expired', now);
      expired.push(wait.id);
    }
    return expired;
  }

  /** Closes the open waits of cancelled `task` and of the tasks it started; answers their ids. */
  closeWithin(task: string, now: number): string[] {
    return this.closeWhere((wait) => withinTask(wait.task, task), 'cancelled', now);
  }

  /** Closes every open wait (the run ended): nobody waits for their results now. */
  closeAll(now: number): string[] {
    return this.closeWhere(() => true, 'run-ended', now);
  }

  /** The earliest deadline of a pending wait (epoch ms), or null when none has one. */
  nextDeadline(): number | null {
    let next: number | null = null;
    for (const wait of this.store.list()) {
      if (wait.state !== 'pending' || wait.deadline === null) continue;
      const at = Date.parse(wait.deadline);
      if (next === null || at < next) next = at;
    }
    return next;
  }

  private closeWhere(which: (wait: Wait<P>) => boolean, cause: EndCause, now: number): string[] {
    const closed: string[] = [];
    for (const wait of this.store.list()) {
      if (!isOpen(wait) || !which(wait)) continue;
      this.store.end(wait.id, { kind: 'closed' }, cause, now);
      closed.push(wait.id);
    }
    return closed;
  }
}

/**
 * The chains of one live run that wait, each on one wait of a ledger: a chain's promise
 * settles with the wait's stored end, handed over by `wake` once the ledger has ended it.
 */
export class Waiters<P> {
  private readonly waiting = new Map<string, (end: WaitEnd<P>) => void>();

  constructor(
    private readonly ledger: WaitLedger<P>,
    /** Called when the set of waiting chains changes (the run may have become suspended). */
    private readonly changed: () => void,
  ) {}

  /** Settles with the end of wait `id`: at once if it has ended, else when `wake` hands it over. */
  wait(id: string): Promise<WaitEnd<P>> {
    const wait = this.ledger.store.get(id);
    const ended = wait && endOf(wait);
    if (ended) return Promise.resolve(ended);
    const end = new Promise<WaitEnd<P>>((resolve) => this.waiting.set(id, resolve));
    this.changed();
    return end;
  }

  /** Hands the stored end of wait `id` to the chain that waits on it, if one does and it has ended; true when it did. */
  wake(id: string): boolean {
    const resolve = this.waiting.get(id);
    const wait = this.ledger.store.get(id);
    const ended = wait && endOf(wait);
    if (!resolve || !ended) return false;
    this.waiting.delete(id);
    resolve(ended);
    this.changed();
    return true;
  }

  /** Chains that wait on a pending wait now (one on a wait still `opening`, a call being sent, is in flight, not waiting). */
  get count(): number {
    let count = 0;
    for (const id of this.waiting.keys()) if (this.ledger.store.get(id)?.state === 'pending') count++;
    return count;
  }
}

/** Waits kept in memory: a store for tests of the ledger alone, and for anything that lives as long as its process. */
export class MemoryWaitStore<P> implements WaitStore<P> {
  private readonly waits = new Map<string, Wait<P>>();
  /** Each end recorded, in order, with its cause. */
  readonly ends: { id: string; end: WaitEnd<P>; cause: EndCause }[] = [];

  constructor(private readonly run = 'memory') {}

  runId(): string {
    return this.run;
  }

  /** Records a new wait (the kind's face does this: an ask stored, a call opened). */
  open(wait: Wait<P>): void {
    if (!this.waits.has(wait.id)) this.waits.set(wait.id, { ...wait });
  }

  /** Moves an opening wait to pending (a call's service answered 202). */
  markPending(id: string): void {
    const wait = this.waits.get(id);
    if (wait?.state === 'opening') wait.state = 'pending';
  }

  get(id: string): Wait<P> | undefined {
    const wait = this.waits.get(id);
    return wait && { ...wait };
  }

  list(): Wait<P>[] {
    return [...this.waits.values()].map((wait) => ({ ...wait }));
  }

  end(id: string, end: WaitEnd<P>, cause: EndCause, now: number): void {
    const wait = this.waits.get(id);
    if (!wait) return;
    wait.state = end.kind;
    if (end.kind === 'done') {
      wait.result = end.result;
      wait.doneAt = new Date(now).toISOString();
    }
    this.ends.push({ id, end, cause });
  }
}
