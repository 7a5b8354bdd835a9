/**
 * The run object's outbox, wired to its run: what the outbox reads (the run's state, the
 * deployment's notify targets, the environment's `${NAME}`s, the index database), how an
 * ask looks in a notification (its answer token and URL: waits/ask-view.ts), how a
 * finished run is written to KV (outbox/kv-sync.ts), and the sender that delivers
 * notifications in the background once the run's execution settles (outbox-sender.ts),
 * with the alarm as the backstop. The run object gives the seams it keeps for tests.
 */
import type { NotifyTarget } from '../../config/deployment-config.ts';
import { formJson } from '../../host/ask-form.ts';
import type { Env } from '../env.ts';
import { textVars } from '../env.ts';
import { syncRunToKv } from '../outbox/kv-sync.ts';
import { notifyRetryScale } from '../outbox/notify-targets.ts';
import { Outbox } from '../outbox/outbox.ts';
import { OutboxSender } from '../outbox/outbox-sender.ts';
import type { D1Database, DoStorage, KvNamespace } from '../platform-types.ts';
import { publicAsk } from '../waits/ask-view.ts';
import { askInfo, objectViewOf } from './object-view.ts';
import type { RunState } from './run-state.ts';

/** What the wiring takes from the run object. */
export interface OutboxSeams {
  storage: DoStorage;
  state: RunState;
  env: Env;
  /** The deployment's notify targets (tests set their own). */
  targets(): readonly NotifyTarget[];
  /** The index database, when there is one. */
  db(): D1Database | undefined;
  /** The KV namespace a finished run is written to. */
  kv(): KvNamespace;
  /** Called once the outbox has written what a change owes, after the change committed. */
  written(): void;
  /** Makes sure the object's alarm runs by `at`. */
  wakeBy(at: number): Promise<void>;
  /** Sends one notification. */
  deliver(request: Request): Promise<Response>;
  /** Called before each delivery starts. */
  beforeDelivery(what: 'index' | 'notification' | 'kv'): void;
  /** Whether the run's execution is under way in this object (the sender holds notifications back until it settles). */
  executing(): boolean;
}

/** The run's outbox, recording every change of its state, and the sender of its notifications. */
export function wireOutbox(seams: OutboxSeams): { outbox: Outbox; sender: OutboxSender } {
  const { state, env } = seams;
  const outbox: Outbox = new Outbox({
    storage: seams.storage,
    state,
    targets: () => seams.targets(),
    vars: () => textVars(env),
    db: () => seams.db(),
    publicAsk: async (ask) => {
      const pending = await publicAsk(env, ask);
      return { ...pending, form: formJson(pending.form) };
    },
    askInfo: (ask) => askInfo(state.meta()!, ask),
    // Writes the next files of the finished run to KV; the alarm retries a failure.
    syncKv: () => syncRunToKv(seams.kv(), state, objectViewOf(state)!),
    wake: (at, now) =>
      queueMicrotask(() => {
        seams.written();
        void seams.wakeBy(at);
        if (now) sender.soon();
      }),
    fetch: (request) => seams.deliver(request),
    retryScale: notifyRetryScale(env),
    beforeDelivery: (what) => seams.beforeDelivery(what),
  });
  state.onChange = (change) => outbox.record(change);
  // Notifications leave in the background once the run's execution settles; a failed one's retry is the alarm's.
  const sender = new OutboxSender(
    async () => {
      await outbox.deliverDue(Date.now(), 'notifications');
      const next = outbox.nextDue();
      if (next !== null) await seams.wakeBy(next);
    },
    () => seams.executing(),
  );
  return { outbox, sender };
}
