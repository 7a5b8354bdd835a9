/**
 * The run object's outbox: everything that must leave the object when the run changes (its
 * rows in the index, its notifications, its record and files in KV) is written to the
 * object's storage in the same transaction as the change (RunState's onChange), and
 * delivered afterwards by the object's alarm, retried until it lands. So a delivery that
 * fails, or an object that dies between the change and the delivery, loses nothing, and the
 * run (its Lua) never waits on a delivery.
 *
 *   outbox-state            { version, notifications }: the index version and the notification counter
 *   outbox-index            { version, asks }: the index rows owed (the run's, and these asks', each with the version that changed it)
 *   outbox-kv               { due }: the finished run is owed to KV (kv-sync.ts)
 *   notification:{n}:{t}    a notification to target t: its body, state, attempts, last status
 *   outbox-notify:{n}:{t}   the notifications not yet delivered (nor given up), in order
 *
 * The index rows are written from the object's state as it is when they are delivered, at
 * the version of that state, so any delivery writes the latest rows and a late one is
 * refused by the index (run-index.ts). Notifications go out in order per run and target: a
 * target's next notification waits until the one before it is delivered or given up.
 */
import { Webhook } from 'standardwebhooks';
import { resolveConfigValue, type NotificationType, type NotifyTarget } from '../../config/deployment-config.ts';
import { resolveConfigUrl, urlProblem } from '../../config/config-urls.ts';
import type { Json } from '../../json/json.ts';
import { formJson } from '../../host/ask-form.ts';
import type { DoStorage, D1Database, SyncKv } from '../platform-types.ts';
import type { AskRow } from './run-index.ts';
import { writeIndex } from './run-index.ts';
import type { RunState, StateChange } from '../run-object/run-state.ts';
import { isFinal, type AskRecord, type AskInfo, type RunStatus } from '../run-object/run-view.ts';

/** The retry schedule of a notification that was not delivered (DESIGN.md, "Notifications"), in ms; then it is given up. */
export const NOTIFY_RETRY_MS = [10_000, 60_000, 600_000, 3_600_000, 21_600_000] as const;

/** How long one delivery attempt may take before it counts as failed. */
export const NOTIFY_TIMEOUT_MS = 15_000;

/**
 * How long after a notification is made the alarm comes to send it if it has not left by
 * then: it leaves at once, in the background (outbox-sender.ts), and the alarm is the
 * backstop for an object that dies first. Not `now`: an alarm per notification would be an
 * invocation of the object per event, on the same thread as the run.
 */
export const NOTIFY_BACKSTOP_MS = 1_000;

/** How soon a failed index write is tried again. */
export const INDEX_RETRY_MS = 2_000;

/**
 * How long index rows wait before they are written, so that the changes of a moment (an
 * answer, the resume, the end) go in one write; the index promises other readers a change
 * within a second. An answer's own rows are written at once (Outbox.flushIndex).
 */
export const INDEX_DELAY_MS = 200;

/** How soon a failed KV write is tried again. */
export const KV_RETRY_MS = 10_000;

/** How long after a run ends it is written to KV (after the response to the request that ended it is out). */
export const KV_SYNC_DELAY_MS = 500;

/** A notification's delivery, as `GET /runs/:id/notifications` lists it. */
export interface NotificationDelivery {
  webhook_id: string;
  event: NotificationType;
  url: string;
  state: 'delivered' | 'retrying' | 'failed';
  attempts: number;
  last_status: number | null;
}

/** A notification as stored: its delivery, and what it sends. */
interface NotificationRecord extends NotificationDelivery {
  /** The target's index in the notify list when it was made. */
  target: number;
  /** When the next attempt is due (ms since the epoch). */
  due: number;
  timestamp: string;
  /** The event's data; an ask.created's token and answer URL, and a run's result, are added when it is sent. */
  data: { [key: string]: Json };
}

/** The index rows owed: the run's row as of `version`, and these asks' rows, each as of the version that changed it. */
interface OwedIndex {
  version: number;
  asks: [string, number][];
  /** When the oldest change owed was made (ms since the epoch). */
  since: number;
}

interface OutboxState {
  version: number;
  notifications: number;
}

/** What the outbox needs from its run object. */
export interface OutboxHost {
  storage: DoStorage;
  state: RunState;
  /** The notify targets of the deployment, in file order. */
  targets(): readonly NotifyTarget[];
  /** The environment `${NAME}`s of a target's secret are read from. */
  vars(): Readonly<Record<string, string | undefined>>;
  /** The index database, when the deployment has one. */
  db(): D1Database | undefined;
  /** An ask as the API shows it, with its token and answer URL. */
  publicAsk(ask: AskInfo): Promise<{ [key: string]: Json }>;
  /** An ask record as the object shows it. */
  askInfo(ask: AskRecord): AskInfo;
  /** Writes the next batch of the finished run to KV (kv-sync.ts). */
  syncKv(): Promise<'done' | 'more' | 'failed'>;
  /** Asks for the alarm to run by `at` (ms since the epoch); `now`: a notification is owed, send it in the background without waiting for the alarm. */
  wake(at: number, now: boolean): void;
  /** Delivery's fetch (tests count and fail it). */
  fetch(request: Request): Promise<Response>;
  /** Scales the notification retry schedule (1 unless RUNVIL_NOTIFY_RETRY_SCALE says otherwise). */
  retryScale: number;
  /** Called before each delivery starts (a seam for fault-injection tests). */
  beforeDelivery(what: 'index' | 'notification' | 'kv'): void;
}

const pad = (n: number, width = 9) => String(n).padStart(width, '0');
const NOTIFICATION = 'notification:';
const PENDING = 'outbox-notify:';

/** A run object's outbox. */
export class Outbox {
  private readonly kv: SyncKv;
  private indexFlight: Promise<void> | null = null;
  private indexAgain = false;
  /** When a failed index write may be tried again. */
  private indexDue = 0;
  /** The targets (by URL) whose notifications are being sent now, and whether KV is being written: one sender each. */
  private readonly sending = new Set<string>();
  private kvBusy = false;

  constructor(private readonly host: OutboxHost) {
    this.kv = host.storage.kv;
  }

  /** Writes what a change owes the world, inside the change's transaction (RunState's onChange). */
  record(change: StateChange): void {
    const meta = this.host.state.meta()!;
    const now = Date.now();
    const version = this.bumpVersion().version;
    const owed = this.kv.get<OwedIndex>('outbox-index') ?? { version, asks: [], since: now };
    const asks =
      change.kind === 'ask' ? [...owed.asks.filter(([id]) => id !== change.after.ask_id), [change.after.ask_id, version] as [string, number]] : owed.asks;
    this.kv.put('outbox-index', { version, asks, since: owed.since ?? now } satisfies OwedIndex);
    let notified = false;
    if (change.kind === 'ask') {
      const { before, after } = change;
      if (before === undefined && after.state === 'pending') {
        const info = this.host.askInfo(after);
        notified = this.notify('ask.created', { ...info, form: formJson(info.form) }, now);
      }
      if (before?.state === 'pending' && after.state !== 'pending') {
        const reason = after.state === 'answered' ? 'answered' : (after.closed_reason ?? 'cancelled');
        notified = this.notify('ask.closed', { run_id: meta.run_id, ask_id: after.ask_id, reason, answered_by: after.answered_by ?? null }, now);
      }
    } else if (isFinal(change.after) && change.before !== change.after) {
      const progress = this.host.state.progress();
      notified = this.notify(
        `run.${change.after}` as NotificationType,
        { run_id: meta.run_id, prompt: meta.prompt, status: change.after, result: null, error: progress.error as Json },
        now,
      );
      this.kv.put('outbox-kv', { due: now + KV_SYNC_DELAY_MS });
    }
    // A notification leaves at once (the alarm a moment later is its backstop); index rows a moment later, with the changes made meanwhile.
    const indexAt = (owed.since ?? now) + INDEX_DELAY_MS;
    this.host.wake(notified ? Math.min(indexAt, now + NOTIFY_BACKSTOP_MS) : indexAt, notified);
  }

  /** Owes KV the finished run (a run that ended before the outbox kept it, and is not yet in KV). */
  oweKv(now: number): void {
    if (this.kv.get('outbox-kv') === undefined) this.kv.put('outbox-kv', { due: now });
  }

  private bumpVersion(): OutboxState {
    const state = this.kv.get<OutboxState>('outbox-state') ?? { version: 0, notifications: 0 };
    state.version++;
    this.kv.put('outbox-state', state);
    return state;
  }

  /** Adds the notification of `type` for each target that takes it, due at `now`; true when one did. */
  private notify(type: NotificationType, data: { [key: string]: Json }, now: number): boolean {
    const meta = this.host.state.meta()!;
    const targets = this.host.targets();
    const matching = targets
      .map((target, i) => [target, i] as const)
      .filter(([target]) => target.events.has(type) && (target.prompts === null || target.prompts.has(meta.prompt)));
    if (matching.length === 0) return false;
    const state = this.kv.get<OutboxState>('outbox-state')!;
    state.notifications++;
    this.kv.put('outbox-state', state);
    const n = state.notifications;
    const vars = this.host.vars();
    for (const [target, i] of matching) {
      // A URL its variables make into one the file could not have written is never sent to (send()).
      const url = resolveConfigUrl(target.url, vars, `notify[${i}].url`);
      if (!url.ok) console.error(`run ${meta.run_id}: ${url.error.message}; the notification is not sent`);
      const record: NotificationRecord = {
        webhook_id: `${meta.run_id}.${n}`,
        event: type,
        url: url.ok ? url.value : target.url,
        state: 'retrying',
        attempts: 0,
        last_status: null,
        target: i,
        due: now,
        timestamp: new Date(now).toISOString(),
        data,
      };
      const key = `${pad(n)}:${pad(i, 3)}`;
      this.kv.put(NOTIFICATION + key, record);
      this.kv.put(PENDING + key, NOTIFICATION + key);
    }
    return true;
  }

  /** Every notification of the run, in the order they were made. */
  deliveries(): NotificationDelivery[] {
    return [...this.kv.list<NotificationRecord>({ prefix: NOTIFICATION })].map(([, r]) => ({
      webhook_id: r.webhook_id,
      event: r.event,
      url: r.url,
      state: r.state,
      attempts: r.attempts,
      last_status: r.last_status,
    }));
  }

  /** When the index rows owed are due, or null when none are. */
  private indexDueAt(): number | null {
    const owed = this.kv.get<OwedIndex>('outbox-index');
    return owed ? Math.max(this.indexDue, (owed.since ?? 0) + INDEX_DELAY_MS) : null;
  }

  /** True when index rows are owed. */
  get indexOwed(): boolean {
    return this.kv.get('outbox-index') !== undefined;
  }

  /**
   * Writes the index rows owed, from the state as it is now; settles once they are written
   * (or the write failed: the alarm tries again). One write at a time; a change made while
   * one is under way is written by another right after it.
   */
  async flushIndex(): Promise<void> {
    if (this.indexFlight) {
      this.indexAgain = true;
      await this.indexFlight;
      if (this.indexFlight) return this.indexFlight;
    }
    if (!this.indexOwed) return;
    this.indexFlight = (async () => {
      try {
        do {
          this.indexAgain = false;
          await this.writeIndexOnce();
        } while (this.indexAgain && this.indexOwed);
      } finally {
        this.indexFlight = null;
      }
    })();
    return this.indexFlight;
  }

  private async writeIndexOnce(): Promise<void> {
    const db = this.host.db();
    const owed = this.kv.get<OwedIndex>('outbox-index');
    if (!owed) return;
    if (!db) {
      this.kv.delete('outbox-index');
      return;
    }
    // Read in one synchronous step: the rows and the version they are at.
    const { state } = this.host;
    const meta = state.meta()!;
    const progress = state.progress();
    const version = this.kv.get<OutboxState>('outbox-state')?.version ?? 0;
    const asks = state.asks();
    const rows = owed.asks
      .map(([id]) => asks.find((ask) => ask.ask_id === id))
      .filter((ask): ask is AskRecord => ask !== undefined)
      .map((ask) => askRow(this.host.askInfo(ask), ask));
    const run = {
      run_id: meta.run_id,
      prompt: meta.prompt,
      status: progress.status as RunStatus,
      created_at: meta.created_at,
      ended_at: progress.ended_at,
      // What `pending` lists: open asks and tool calls that wait on their results.
      pending_count: asks.filter((ask) => ask.state === 'pending').length + state.calls().filter((call) => call.state === 'waiting').length,
      // Its Packs' digests join it once the run is prepared, so each write carries the build as it stands.
      build: jsonOrNull(state.build()),
    };
    try {
      this.host.beforeDelivery('index');
      await writeIndex(db, version, run, rows);
    } catch (error) {
      this.indexDue = Date.now() + INDEX_RETRY_MS;
      console.error(`run ${meta.run_id}: writing the index failed, the alarm retries: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    // Done with what was owed up to `version`; a change made during the write owes its own rows.
    const after = this.kv.get<OwedIndex>('outbox-index');
    if (!after) return;
    const left = after.asks.filter(([, changed]) => changed > version);
    if (after.version <= version && left.length === 0) this.kv.delete('outbox-index');
    else this.kv.put('outbox-index', { version: after.version, asks: left, since: Date.now() } satisfies OwedIndex);
  }

  /**
   * Delivers what is due at `now`: the index rows, each target's next notifications in
   * order, the next batch of KV writes. Never throws; what fails stays owed, with its next
   * attempt's time.
   */
  async deliverDue(now: number, only?: 'notifications'): Promise<void> {
    const work: Promise<void>[] = [];
    const pending = this.pendingByTarget();
    // An ask is in GET /asks before anyone is told of it: its rows are written first (a
    // failed write holds nothing up; the alarm retries it).
    const announcing = [...pending.values()].some((keys) => keys.some((key) => this.kv.get<NotificationRecord>(key)?.event === 'ask.created'));
    if (announcing && this.indexOwed) await this.flushIndex();
    const index = this.indexDueAt();
    if (only === undefined && index !== null && now >= index) work.push(this.flushIndex());
    for (const [url, keys] of pending) {
      // Alarm invocations can overlap while one waits on a slow receiver: one sends, in order.
      if (this.sending.has(url)) continue;
      this.sending.add(url);
      work.push(this.deliverInOrder(keys).finally(() => this.sending.delete(url)));
    }
    const kv = this.kv.get<{ due: number }>('outbox-kv');
    if (only === undefined && kv && now >= kv.due && !this.kvBusy) {
      this.kvBusy = true;
      work.push(this.deliverKv().finally(() => (this.kvBusy = false)));
    }
    await Promise.all(work);
  }

  /** When the alarm is next needed for the outbox, or null. */
  nextDue(): number | null {
    let next: number | null = null;
    const consider = (at: number) => (next = next === null ? at : Math.min(next, at));
    const index = this.indexDueAt();
    if (index !== null) consider(index);
    for (const keys of this.pendingByTarget().values()) {
      const head = this.kv.get<NotificationRecord>(keys[0]!);
      // A first attempt is made at once, in the background; the alarm is its backstop.
      if (head) consider(head.attempts === 0 ? head.due + NOTIFY_BACKSTOP_MS : head.due);
    }
    const kv = this.kv.get<{ due: number }>('outbox-kv');
    if (kv) consider(kv.due);
    return next;
  }

  /** The keys of the notifications not yet delivered, by target URL, in order. */
  private pendingByTarget(): Map<string, string[]> {
    const byTarget = new Map<string, string[]>();
    for (const [, key] of this.kv.list<string>({ prefix: PENDING })) {
      const record = this.kv.get<NotificationRecord>(key);
      if (!record) continue;
      const list = byTarget.get(record.url) ?? [];
      list.push(key);
      byTarget.set(record.url, list);
    }
    return byTarget;
  }

  /** Sends a target's notifications in order, until one is not delivered (it waits for its retry). */
  private async deliverInOrder(keys: string[]): Promise<void> {
    for (const key of keys) {
      const record = this.kv.get<NotificationRecord>(key);
      if (!record || record.state !== 'retrying') continue;
      if (record.due > Date.now()) return;
      const status = await this.send(record);
      const delivered = status !== null && status >= 200 && status < 300;
      const attempts = record.attempts + 1;
      const done = delivered || attempts > NOTIFY_RETRY_MS.length;
      const next: NotificationRecord = {
        ...record,
        attempts,
        last_status: status,
        state: delivered ? 'delivered' : done ? 'failed' : 'retrying',
        due: done ? record.due : Date.now() + Math.round(NOTIFY_RETRY_MS[attempts - 1]! * this.host.retryScale),
      };
      this.host.storage.transactionSync(() => {
        this.kv.put(key, next);
        if (done) this.kv.delete(PENDING + key.slice(NOTIFICATION.length));
      });
      if (!done) return;
      if (!delivered)
        console.error(
          `run ${this.host.state.meta()!.run_id}: notification ${record.webhook_id} (${record.event}) to ${record.url} was given up after ${attempts} attempts`,
        );
    }
  }

  /** One attempt: the response's status, or null when none came (a network error, a timeout). */
  private async send(record: NotificationRecord): Promise<number | null> {
    this.host.beforeDelivery('notification');
    const target = this.host.targets()[record.target];
    const vars = this.host.vars();
    const secret = target ? resolveConfigValue(target.secret, vars) : null;
    const refused = urlProblem(record.url, false);
    if (refused !== null) {
      console.error(`run ${this.host.state.meta()!.run_id}: notification ${record.webhook_id}: runvil.yaml's \`notify[${record.target}].url\` ${refused}`);
      return null;
    }
    if (!secret?.ok) {
      console.error(
        `run ${this.host.state.meta()!.run_id}: notification ${record.webhook_id}: ${secret ? secret.error.message : 'its notify target is no longer configured'}`,
      );
      return null;
    }
    // Not AbortSignal.timeout: its timer would stay pending for the whole 15 s after the answer,
    // and a pending timer keeps the object in memory (and billed) that long after every event.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error(`no answer in ${NOTIFY_TIMEOUT_MS / 1000} s`)), NOTIFY_TIMEOUT_MS);
    try {
      const body = JSON.stringify({ type: record.event, timestamp: record.timestamp, data: await this.completeData(record) });
      const at = new Date();
      const signature = signer(secret.value).sign(record.webhook_id, at, body);
      const response = await this.host.fetch(
        new Request(record.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': record.webhook_id,
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': signature,
            'user-agent': 'Runvil-Notifications/1',
          },
          body,
          signal: timeout.signal,
        }),
      );
      await response.body?.cancel().catch(() => undefined);
      return response.status;
    } catch (error) {
      console.error(
        `run ${this.host.state.meta()!.run_id}: notification ${record.webhook_id} to ${record.url} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The data as sent: an ask.created's ask with its token and answer URL; a completed run's result. */
  private async completeData(record: NotificationRecord): Promise<{ [key: string]: Json }> {
    if (record.event === 'ask.created') return this.host.publicAsk(record.data as unknown as AskInfo);
    if (record.event === 'run.completed') return { ...record.data, result: this.host.state.result() };
    return record.data;
  }

  private async deliverKv(): Promise<void> {
    this.host.beforeDelivery('kv');
    const outcome = await this.host.syncKv();
    if (outcome === 'done') this.kv.delete('outbox-kv');
    else this.kv.put('outbox-kv', { due: outcome === 'more' ? Date.now() : Date.now() + KV_RETRY_MS });
  }
}

/** The signer of the last secret seen: decoding a secret costs more than signing. */
let lastSigner: { secret: string; webhook: Webhook } | null = null;
function signer(secret: string): Webhook {
  if (lastSigner?.secret !== secret) lastSigner = { secret, webhook: new Webhook(secret) };
  return lastSigner.webhook;
}

/** The index row of an ask. */
function askRow(info: AskInfo, ask: AskRecord): AskRow {
  return {
    run_id: info.run_id,
    ask_id: info.ask_id,
    prompt: info.prompt,
    task: info.task,
    question: info.question,
    choices: info.choices === null ? null : JSON.stringify(info.choices),
    form: info.form === null ? null : JSON.stringify(info.form),
    asked_at: info.asked_at,
    expires_at: info.expires_at,
    status: ask.state === 'pending' ? 'pending' : ask.state === 'answered' ? 'answered' : (ask.closed_reason ?? 'cancelled'),
    answered_by: ask.answered_by ?? null,
    closed_at: ask.closed_at ?? ask.answered_at ?? null,
  };
}

/** A value's JSON text, or null (SQL's NULL) for none. */
function jsonOrNull(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}
