/**
 * The Worker the workerd tests run against (vitest.workers.config.ts `main`): the real
 * app and run object, with the run object serving the test Host (test-host.ts) and
 * offering a fault-injection seam: `armFault(n)` makes the next run object that commits
 * its n-th journal entry stop right after the commit, before Lua sees the answer, so that
 * the test can drop the object's memory there (`dropObjects`), as a crash
 * or an eviction would. It also logs the KV operations of each alarm invocation
 * (`alarmKv`), and can make one KV write fail (`failKvPut`). The suite's files share the
 * isolate, one after another: `resetTestWorker` puts what they change back as a new
 * isolate has it (test/worker/fresh-state.ts calls it before each file).
 */
import '../../../src/worker/workerd-lua/lua-factory.ts';
// @ts-ignore -- the module's types come with the pool, not in tsconfig's types
import { abortAllDurableObjects } from 'cloudflare:test';
import type { JournalEntry } from '../../../src/engine/journal.ts';
import type { Operator } from '../../../src/host/operator.ts';
import type { KvNamespace } from '../../../src/worker/platform-types.ts';
import { createApp } from '../../../src/worker/app.ts';
import { RunObject as WorkerRunObject } from '../../../src/worker/run-object/run-object.ts';

export { McpSession } from '../../../src/worker/mcp/mcp-session.ts';
import { dropIsolatePlatform, isolatePlatform } from '../../../src/worker/workerd-lua/lua-platform.ts';
import { abandonEarlierExecution } from '../../../src/worker/run-object/live-run.ts';
import { replaceDeploymentConfig } from '../../../src/worker/deployment/deployment.ts';
import { clearMcpToolListCache } from '../../../src/host/remote/mcp/mcp-tool-list.ts';
import { resetTestHost, testHost } from './test-host.ts';
import { resetToolService } from './tool-service.ts';
import type { NotifyTarget } from '../../../src/config/deployment-config.ts';

/**
 * Notifications in workerd tests: the notify targets the run objects use (runvil.yaml's
 * `notify:` in a deployment), each delivery the run objects send (the request, as sent,
 * signed), and how the receiver answers it (`respond`: a status, or null for a network
 * failure, or a promise of one for a receiver that takes its time). The e2e check (scripts/e2e.mjs) delivers to a real receiver on loopback.
 */
export const notifications: {
  targets: NotifyTarget[];
  sent: { url: string; headers: Record<string, string>; body: string }[];
  respond: (sent: { url: string; headers: Record<string, string>; body: string }) => number | null | Promise<number | null>;
} = { targets: [], sent: [], respond: () => 204 };

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

let crashAt: number | null = null;
let crashed = false;
/** Set by a crash: holds every alarm (the watchdog would resume the run) until the test has looked. */
let afterCrash: { held: Promise<void>; release(): void } | null = null;

/**
 * Makes the next run object to reach journal entry `index` crash at the moment Lua would
 * get that entry's answer: it resets itself there, synchronously, with no turn of the event
 * loop in between (as a process killed while Lua computes in C would be). Whatever was not
 * durable by then is lost. Settles once it has crashed (polling, as armFault does). Until
 * the test calls releaseCrash (or arms the next crash), alarms wait: the watchdog would
 * otherwise resume the run, on a busy machine before the test has read what survived.
 */
export async function armCrash(index: number): Promise<void> {
  crashAt = index;
  crashed = false;
  releaseCrash();
  while (!crashed) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** Lets the alarms held since the last crash run. */
export function releaseCrash(): void {
  afterCrash?.release();
  afterCrash = null;
}

/** The KV operations of one alarm invocation (`put {key}`, ...), in order, and whether one failed. */
export interface AlarmKvOps {
  ops: string[];
  failed: boolean;
}

/** The KV operations of each alarm invocation, by run id, in the order the invocations ended. */
export const alarmKv = new Map<string, AlarmKvOps[]>();

let kvFault: { at: number; seen: number } | null = null;

/** Makes the `at`-th KV write of run object alarms from now on fail, once. */
export function failKvPut(at: number): void {
  kvFault = { at, seen: 0 };
}

/**
 * Outbox faults: `killOutbox('write', n)` makes the run objects reset themselves (as a crash
 * would) right after the n-th outbox write from now on (the write of what a change owes,
 * made in the change's transaction); `killOutbox('delivery', n)` right before the n-th
 * delivery (an index write, a notification, a KV batch) starts. `outboxKilled()` says
 * whether it has happened.
 */
export function killOutbox(at: 'write' | 'delivery', n: number): void {
  outboxFault = { at, left: n, fired: false };
}

/** True once the armed outbox fault has fired. */
export const outboxKilled = (): boolean => outboxFault?.fired ?? false;

let outboxFault: { at: 'write' | 'delivery'; left: number; fired: boolean } | null = null;

/** The ids of the run objects made in this isolate since the last reset: what they leave running, resetTestWorker closes. */
const objectIds = new Set<string>();

/** The run objects made since the last resetTestWorker (test/worker/fresh-state.ts deletes them). */
export const runObjectIds = (): string[] => [...objectIds];

/** The run object with the test Host, the fault seam and its alarms' KV operations logged. */
export class RunObject extends WorkerRunObject {
  private alarmOps: AlarmKvOps | null = null;

  constructor(...args: ConstructorParameters<typeof WorkerRunObject>) {
    super(...args);
    objectIds.add(args[0].id.toString());
  }

  protected override host(operator: Operator) {
    return testHost(this.env, operator, this.ctx.id.toString());
  }

  protected override outboxWritten(): void {
    this.outboxFault('write');
  }

  protected override beforeDelivery(): void {
    this.outboxFault('delivery');
  }

  private outboxFault(at: 'write' | 'delivery'): void {
    if (!outboxFault || outboxFault.fired || outboxFault.at !== at || --outboxFault.left > 0) return;
    outboxFault.fired = true;
    this.ctx.abort(`killed at an outbox ${at} (test fault)`);
  }

  protected override notifyTargets(): readonly NotifyTarget[] {
    return notifications.targets;
  }

  protected override async deliver(request: Request): Promise<Response> {
    const sent = { url: request.url, headers: Object.fromEntries([...(request.headers as unknown as Iterable<[string, string]>)]), body: await request.text() };
    notifications.sent.push(sent);
    const status = await notifications.respond(sent);
    if (status === null) throw new TypeError('fetch failed (a test fault)');
    return new Response(null, { status });
  }

  protected override afterJournal(index: number, _entry: JournalEntry): void | Promise<void> {
    if (crashAt === index) {
      crashAt = null;
      crashed = true;
      let release = () => {};
      afterCrash = { held: new Promise<void>((resolve) => (release = resolve)), release: () => release() };
      this.ctx.abort('a crash (test fault)');
    }
    if (faultAt !== index) return;
    faultAt = null;
    // The run stays here, its entry committed and durable and Lua not yet answered, until
    // the test drops the object (dropObjects), as a crash right after the commit would leave it.
    return this.ctx.storage.sync().then(() => {
      fired = true;
      return new Promise<void>(() => {});
    });
  }

  override async alarm(): Promise<void> {
    const invocation: AlarmKvOps = { ops: [], failed: false };
    if (afterCrash) await afterCrash.held;
    this.alarmOps = invocation;
    try {
      await super.alarm();
    } finally {
      this.alarmOps = null;
      const runId = this.ctx.id.toString();
      alarmKv.set(runId, [...(alarmKv.get(runId) ?? []), invocation]);
    }
  }

  /** KV with every operation logged under the alarm invocation that makes it. */
  protected override kv(): KvNamespace {
    const kv = super.kv();
    const log = (op: string) => this.alarmOps?.ops.push(op);
    return {
      get: (key) => (log(`get ${key}`), kv.get(key)),
      getWithMetadata: (key) => (log(`get ${key}`), kv.getWithMetadata(key)),
      delete: (key) => (log(`delete ${key}`), kv.delete(key)),
      list: (options) => (log(`list ${options?.prefix ?? ''}`), kv.list(options)),
      put: async (key, value, options) => {
        log(`put ${key}`);
        if (kvFault && ++kvFault.seen === kvFault.at) {
          kvFault = null;
          if (this.alarmOps) this.alarmOps.failed = true;
          throw new Error('KV is unavailable (a test fault)');
        }
        return kv.put(key, value, options);
      },
    };
  }
}

/**
 * Drops the memory of the run objects (their storage stays), as an eviction or a crash
 * does. The tests run one run at a time, so dropping every object drops that run's.
 */
export async function dropObjects(): Promise<void> {
  await abortAllDurableObjects();
}

/** How many Lua VMs the isolate holds open. */
export async function openVms(): Promise<number> {
  return (await isolatePlatform()).openVms;
}

/** How many suspended runs have had their VMs taken back for other runs in this isolate (a full Lua memory). */
export async function reclaimedRuns(): Promise<number> {
  return (await isolatePlatform()).reclaimedRuns;
}

/**
 * Puts back what the test files change in the isolate, as a new isolate has it: the fault
 * seams (a held crash released), the notify targets and the deliveries seen, the alarms' KV
 * log, the test Host's and tool service's logs, the deployment's configuration and the MCP
 * tool lists read, and the Lua VMs the runs left open (the run objects must be gone, as
 * `reset()` of cloudflare:test leaves them: their runs are abandoned where they stand).
 */
export async function resetTestWorker(): Promise<void> {
  releaseCrash();
  faultAt = crashAt = null;
  fired = crashed = false;
  kvFault = outboxFault = null;
  alarmKv.clear();
  notifications.targets = [];
  notifications.sent.splice(0);
  notifications.respond = () => 204;
  resetTestHost();
  resetToolService();
  replaceDeploymentConfig(null);
  clearMcpToolListCache();
  for (const id of objectIds) abandonEarlierExecution(id);
  objectIds.clear();
  // A VM no run held (none is known): a new platform rather than a count a file would see.
  if ((await isolatePlatform()).openVms > 0) dropIsolatePlatform();
}

export default createApp();
