/**
 * The chains of one live run that wait, each on one wait of a ledger (wait-ledger.ts): a
 * chain's promise settles with the wait's stored end, handed over by `wake` once the ledger
 * has ended it. Whoever ended it (a posted result, the deadline, a close) wakes it, so a
 * store never calls back into the run.
 */
import { endOf, type WaitEnd, type WaitLedger } from './wait-ledger.ts';

/** The chains of one live run that wait on one ledger's waits. */
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
