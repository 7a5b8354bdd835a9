/**
 * One lifecycle for everything a run waits on: an operator's answer to an ask, or the
 * result an HTTP tool service posts for a call that answered 202 (DESIGN.md Part 2, "Asks,
 * the inbox and notifications" and "Tools that wait"). Both are a wait of one chain (the
 * run's `0`, a task such as `0.1`, a fanout arm such as `0.f0.2`), kept where whoever posts
 * the result finds it: the run object's storage in the Worker (src/worker/waits/), memory
 * for a run that lives as long as its process (`runvil run`, the fixture Host:
 * memory-call-ledger.ts). Platform-neutral: no Worker or Node API, so both use this one.
 *
 *   opening ──▶ pending ──▶ done      the first result posted (or settled) wins; the same
 *      │           │                  result again is a retry, another one a refusal
 *      │           ├──────▶ expired   its deadline passed first
 *      └───────────┴──────▶ closed    its task was cancelled, or the run ended
 *
 * `opening` is a wait recorded but not yet waited on: a tool call being sent (a replay sends
 * it again, under the same id). An ask is pending from the moment it is stored. A wait that
 * has ended never changes again, and a live run's chain that waits on it (waiters.ts) is
 * handed that end; a run not in memory is replayed, and its replay finds the end stored.
 *
 * What differs between the kinds, and why, is `WAIT_KINDS` (wait-kinds.ts), and nothing
 * else: the ledger's judgement of a posted result, its expiry, its closing and how a run
 * resumes from an ended wait are the same for both. A result for a wait that expired is
 * refused as expired even once the run has ended since: the cause that came first.
 */

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

/**
 * Why a posted result is refused, the reason a caller matches (never the message): the run
 * has no such wait (`no-ask`, `no-call`), it has a different result (`taken`), it expired,
 * it was closed, the run has ended, or an answer is outside the ask's choices. The Worker's
 * refusals (run-object-api.ts) hold these reasons among theirs.
 */
export type WaitRefusalReason = 'no-ask' | 'no-call' | 'taken' | 'expired' | 'closed' | 'run-ended' | 'not-a-choice';

/** A refused result: why, the HTTP status the answer and callback routes give it, and the message they answer. */
export interface WaitRefusal {
  ok: false;
  reason: WaitRefusalReason;
  status: 400 | 404 | 409;
  message: string;
  /** An answer outside the ask's choices: the choices. */
  choices?: string[];
}

/** What differs between the kinds of wait (wait-kinds.ts): every difference the lifecycle keeps. */
export interface WaitKindPolicy<P> {
  kind: WaitKind;
  /** How refusals name a wait and its result. */
  noun: string;
  /** The refusal reason of an id the run does not have. */
  missing: 'no-ask' | 'no-call';
  /** The label a wait's token is derived under (wait-token.ts): each kind its own, so a token of one kind answers no wait of the other. */
  tokenLabel: string;
  /** True when `b` is the result `a` again: a retry whose response was lost, not a second result. */
  same(a: P, b: P): boolean;
  /** A refusal of a result this kind never takes for `wait` (an answer outside an ask's choices), or null. */
  misfit(wait: Wait<P>, result: P): WaitRefusal | null;
  /** The message of each refusal, in this kind's words. */
  words: {
    missing(runId: string, id: string): string;
    taken(wait: Wait<P>): string;
    expired(wait: Wait<P>): string;
    runEnded(wait: Wait<P>, status: string): string;
    closed(wait: Wait<P>): string;
  };
}

/** What a posted result gets: taken, the result taken again (a retry), or a refusal. */
export type Taking = 'taken' | 'retry' | WaitRefusal;

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
   * retry, anything stale is refused, saying why, and so is a result the kind never takes
   * (an answer outside an ask's choices).
   */
  take(id: string, result: P, run: { status: string; ended: boolean }, now: number): Taking {
    const wait = this.store.get(id);
    const { words } = this.policy;
    if (!wait) return { ok: false, reason: this.policy.missing, status: 404, message: words.missing(this.store.runId(), id) };
    if (wait.state === 'done') {
      if (wait.result !== undefined && this.policy.same(wait.result, result)) return 'retry';
      return { ok: false, reason: 'taken', status: 409, message: words.taken(wait) };
    }
    if (wait.state === 'expired') return { ok: false, reason: 'expired', status: 409, message: words.expired(wait) };
    if (run.ended) return { ok: false, reason: 'run-ended', status: 409, message: words.runEnded(wait, run.status) };
    if (wait.state === 'closed') return { ok: false, reason: 'closed', status: 409, message: words.closed(wait) };
    const misfit = this.policy.misfit(wait, result);
    if (misfit) return misfit;
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

  /**
   * Ends wait `id` as expired if it is still pending, whatever `now` says: for a ledger that
   * keeps a timer per deadline, whose timer is the judge (the fixture Host's clock never
   * moves). True when it did.
   */
  expireOne(id: string, now: number): boolean {
    if (this.store.get(id)?.state !== 'pending') return false;
    this.store.end(id, { kind: 'expired' }, 'expired', now);
    return true;
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
