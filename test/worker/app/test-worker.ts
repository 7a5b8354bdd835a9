/**
 * The Worker the workerd tests run against (vitest.workers.config.ts `main`): the real
 * app and run object, with the run object serving the test Host (test-host.ts) and
 * offering a fault-injection seam: `armFault(n)` makes the next run object that commits
 * its n-th journal entry stop right after the commit, before Lua sees the answer, so that
 * the test can drop the object's memory there (`dropObjects`), as a crash
 * or an eviction would.
 */
import '../../../src/worker/lua-factory.ts';
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { abortAllDurableObjects } from 'cloudflare:test';
import type { JournalEntry } from '../../../src/engine/journal.ts';
import type { Operator } from '../../../src/host/operator.ts';
import { createApp } from '../../../src/worker/app.ts';
import { RunObject as WorkerRunObject } from '../../../src/worker/run-object.ts';
import { testHost } from './test-host.ts';

let faultAt: number | null = null;
let fired = false;

/**
 * Makes the next run object to commit journal entry `index` stop right after it; settles
 * when it has. (It polls: a promise resolved from inside a run object's request does not
 * always wake a test that waits on nothing else.)
 */
export async function armFault(index: number): Promise<void> {
  faultAt = index;
  fired = false;
  while (!fired) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** The run object with the test Host and the fault seam. */
export class RunObject extends WorkerRunObject {
  protected override host(operator: Operator) {
    return testHost(this.env, operator, this.ctx.id.toString());
  }

  protected override afterJournal(index: number, _entry: JournalEntry): void | Promise<void> {
    if (faultAt !== index) return;
    faultAt = null;
    fired = true;
    // The run stays here, its entry committed and Lua not yet answered, until the test
    // drops the object (dropObjects), as a crash right after the commit would leave it.
    return new Promise<void>(() => {});
  }
}

/**
 * Drops the memory of the run objects (their storage stays), as an eviction or a crash
 * does. The tests run one run at a time, so dropping every object drops that run's.
 */
export async function dropObjects(): Promise<void> {
  await abortAllDurableObjects();
}

export default createApp();
