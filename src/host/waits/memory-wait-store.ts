/**
 * Waits kept in memory, in the ledger's own layout (wait-ledger.ts): a store for tests of
 * the ledger alone, and for anything whose waits live as long as its process.
 */
import type { EndCause, Wait, WaitEnd, WaitStore } from './wait-ledger.ts';

/** Waits of one kind of one run, in memory. */
export class MemoryWaitStore<P> implements WaitStore<P> {
  private readonly waits = new Map<string, Wait<P>>();
  /** Each end recorded, in order, with its cause. */
  readonly ends: { id: string; end: WaitEnd<P>; cause: EndCause }[] = [];

  constructor(private readonly run = 'memory') {}

  runId(): string {
    return this.run;
  }

  /** Records a new wait (the kind's face does this: an ask stored, a call opened); a known id keeps its wait. */
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
