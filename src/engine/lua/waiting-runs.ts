/**
 * The runs that only wait (on an operator's answer, or on a tool call whose service answers
 * later), whose VMs the platform may take back when its Lua memory is short: such a run needs
 * no VM until an answer comes, and then resumes by replay of its journal. Only the host can
 * say when a run only waits (it alone knows that no effect of the run is half done), so it
 * marks the run waiting, and running again as soon as anything moves.
 *
 * The platform takes back the run that has waited longest first (least recently used): a run
 * that has just asked is the likeliest to be answered soon, and taking its VMs would make it
 * pay a replay at once and fill the heap again as it resumes; one that has waited for hours
 * most likely waits for hours more. The order is the order the runs began to wait, kept
 * without a clock.
 */

/** A waiting run: the owner its VMs are tagged with (VmOptions.owner), and what to tell it once they are taken. */
export interface WaitingRun {
  owner: object;
  /** Called once the run's VMs are closed, inside another VM's allocation: it may only let go of things, never run Lua or start I/O. */
  reclaimed: () => void;
}

/** The platform's waiting runs, oldest-waiting first. */
export class WaitingRuns {
  /** By owner, in the order they began to wait (a Map iterates in insertion order). */
  private readonly runs = new Map<object, WaitingRun>();
  /** How many waiting runs have had their VMs taken back. */
  reclaimedCount = 0;

  /** Marks `owner`'s run as only waiting; one marked already keeps its place. */
  wait(owner: object, reclaimed: () => void): void {
    if (!this.runs.has(owner)) this.runs.set(owner, { owner, reclaimed });
  }

  /** Marks `owner`'s run as running again (or ended): its VMs are its own. */
  run(owner: object): void {
    this.runs.delete(owner);
  }

  /** The waiting runs, the one that has waited longest first. */
  oldestFirst(): WaitingRun[] {
    return [...this.runs.values()];
  }

  /** Forgets a run whose VMs were taken back, and tells it. */
  reclaim(run: WaitingRun): void {
    this.runs.delete(run.owner);
    this.reclaimedCount++;
    run.reclaimed();
  }
}
