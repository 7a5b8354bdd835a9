/**
 * A run's durable state in its Durable Object's storage (the source of truth while the run
 * lives): what it runs, its progress, its journal, its events, its asks and its files.
 *
 *   meta, source, args       what the run runs (written once, when it starts)
 *   packs                    the configured MCP Packs the run declared, with the tool lists
 *                            read when it was prepared (written once, before its first step)
 *   build-packs              those tool lists' digests, the `packs` of the run's build (written with them)
 *   progress                 status, counters, how it ended
 *   result                   the run result text
 *   journal:{n}              journal pages: entry n and the ones after it, in order
 *   event:{n}                the event stream, numbered from 1
 *   ask:{ask_id}             operator asks (pending, answered, closed)
 *   call:{call_id}           tool calls that may answer later (sending, waiting, done, ...)
 *   round:{chain}-{seq}      the rounds of a tool call whose server asks before it answers (call-rounds.ts)
 *   file:{path}              the run's files (committed with the journal entry that made them)
 *
 * Writes go through the synchronous storage API, so a journal entry and the file change it
 * made commit in one transaction, and no write waits on another request.
 *
 * The journal is kept in pages of up to PAGE_ENTRIES entries (a JSON array each), because a
 * replay reads all of it: one row and one JSON.parse per page cost about 40% less than one
 * per entry. Each new entry rewrites its page, which stays small (PAGE_CHARS); an entry
 * larger than that has a page of its own. A run stored before pages has one entry per row
 * (a JSON object), and reads the same.
 */
import type { JournalEntry } from '../../engine/journal.ts';
import type { PackSnapshot } from '../../host/remote/configured-packs.ts';
import type { RunBuild } from '../../host/run-build.ts';
import type { Json } from '../../json/json.ts';
import { deleteText, getText, putNewText, putText, textOf } from './chunked-kv.ts';
import type { DoStorage, SyncKv } from '../platform-types.ts';
import type { AskRecord, RunErrorView, RunStatus, StreamEvent } from './run-view.ts';
import type { CallRecord } from '../../host/tool-calls.ts';
import type { CallRoundsRecord } from '../../host/call-rounds.ts';

/** What a run runs, fixed when it starts. */
export interface RunMeta {
  run_id: string;
  prompt: string;
  seed: string;
  created_at: string;
  /** How long the run may last, and when it is cancelled for taking longer (ms since the epoch). */
  timeout_seconds: number;
  deadline_at: number;
  /** The webhook delivery that started it, when one did. */
  webhook_id?: string;
  /** Args whose values came from outside (a trigger's payload): every execution reads them as untrusted text. */
  untrusted_args?: string[];
  /** The run this one forked from, and at how many of its journal entries (POST /runs/:id/fork). */
  forked_from?: { run_id: string; at: number };
  /** The build the run started on, but its Packs' digests (kept with the Packs: `build-packs`); absent for runs started before builds were kept. */
  build?: Omit<RunBuild, 'packs'>;
}

/** Where a run stands. */
export interface RunProgress {
  status: RunStatus;
  /** Journal entries stored. */
  journal: number;
  /** Events in the stream. */
  events: number;
  /** The highest Engine event seq stored: a replay regenerates those, and they are not stored again. */
  engine_events: number;
  error: RunErrorView | null;
  ended_at: string | null;
  /** False until the final record and files are in KV. */
  kv_synced: boolean;
  /** While a finished run is written to KV: how many of its files, in path order, are there (kv-sync.ts). */
  kv_files?: number;
  /** How many executions of the running run died in a row since its last new journal entry (run-alarm.ts). */
  deaths?: number;
}

/**
 * A change the world outside the run object must learn of (the index, notifications, KV),
 * told to the state's observer inside the change's own transaction (outbox.ts).
 */
export type StateChange = { kind: 'run'; before: RunStatus | null; after: RunStatus } | { kind: 'ask'; before: AskRecord | undefined; after: AskRecord };

/** A change to one file, made by a store effect. */
export type FileChange = { op: 'write' | 'append'; path: string; text: string } | { op: 'delete'; path: string };

const pad = (n: number) => String(n).padStart(9, '0');
/** A journal page holds at most this many entries, and at most this many characters unless it holds one entry. */
const PAGE_ENTRIES = 32;
const PAGE_CHARS = 32 * 1024;
const JOURNAL = 'journal:';
const EVENT = 'event:';
const ASK = 'ask:';
const FILE = 'file:';
const CALL = 'call:';
const ROUND = 'round:';

/** The durable state of one run object. */
export class RunState {
  private readonly kv: SyncKv;
  private progressCache: RunProgress | undefined;
  private metaCache: RunMeta | undefined;
  private depth = 0;
  /**
   * The journal page new entries go to: its first entry's number and its entries' texts.
   * Null until this object commits an entry, so that its first starts a page (an object
   * that replayed the journal does not know the texts of the page it ended on).
   */
  private page: { first: number; texts: string[]; chars: number } | null = null;
  /** Called with each event appended to the stream. */
  onEvent: (event: StreamEvent) => void = () => {};
  /** Called inside the transaction of each change to the run's status or asks (the outbox writes what must leave). */
  onChange: (change: StateChange) => void = () => {};

  constructor(private readonly storage: DoStorage) {
    this.kv = storage.kv;
  }

  /** The run's meta, or undefined when this object holds no run. */
  meta(): RunMeta | undefined {
    return (this.metaCache ??= this.kv.get<RunMeta>('meta'));
  }

  /** Stores a new run; its status starts as `running`. */
  create(meta: RunMeta, source: string, args: { [name: string]: Json }): void {
    const progress: RunProgress = { status: 'running', journal: 0, events: 0, engine_events: 0, error: null, ended_at: null, kv_synced: false };
    this.atomically(() => {
      this.kv.put('meta', meta);
      putText(this.kv, 'source', source);
      putText(this.kv, 'args', JSON.stringify(args));
      this.kv.put('progress', progress);
      this.metaCache = meta;
      this.progressCache = progress;
      this.onChange({ kind: 'run', before: null, after: 'running' });
    });
  }

  source(): string {
    return getText(this.kv, 'source') ?? '';
  }

  /** The configured Packs the run was prepared with, or null before it was prepared. */
  packSnapshots(): PackSnapshot[] | null {
    const text = getText(this.kv, 'packs');
    return text === undefined ? null : (JSON.parse(text) as PackSnapshot[]);
  }

  /**
   * Keeps the configured Packs the run is prepared with: every later execution builds its
   * Packs from them. `digests` (pack id -> the digest of its tool list) are its build's `packs`.
   */
  putPackSnapshots(snapshots: readonly PackSnapshot[], digests: ReadonlyMap<string, string>): void {
    this.atomically(() => {
      putText(this.kv, 'packs', JSON.stringify(snapshots));
      this.kv.put('build-packs', Object.fromEntries(digests));
    });
  }

  /** The build the run started on, with its Packs' digests once it was prepared; null for a run started before builds were kept. */
  build(): RunBuild | null {
    const started = this.meta()?.build;
    if (!started) return null;
    const packs = this.kv.get<Record<string, string>>('build-packs') ?? {};
    // A plain object built by fromEntries (own data properties, whatever the names): a view crosses RPC, which clones no null-prototype object.
    return { ...started, packs: Object.fromEntries(Object.entries(packs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
  }

  args(): { [name: string]: Json } {
    return JSON.parse(getText(this.kv, 'args') ?? '{}') as { [name: string]: Json };
  }

  progress(): RunProgress {
    const progress = (this.progressCache ??= this.kv.get<RunProgress>('progress'));
    if (!progress) throw new Error('this run object holds no run');
    return progress;
  }

  private saveProgress(change: Partial<RunProgress>): void {
    this.progressCache = { ...this.progress(), ...change };
    this.kv.put('progress', this.progressCache);
  }

  /** Sets the status (running or suspended, or a final one with how it ended). */
  setStatus(status: RunStatus, end?: { result?: string; error?: RunErrorView; ended_at: string }): void {
    const before = this.progress().status;
    this.atomically(() => {
      if (end?.result !== undefined) putText(this.kv, 'result', end.result);
      this.saveProgress(end ? { status, error: end.error ?? null, ended_at: end.ended_at } : { status });
      this.onChange({ kind: 'run', before, after: status });
    });
  }

  /** Records that an execution of the running run died; answers how many did in a row, with no new journal entry between. */
  noteDeath(): number {
    const deaths = (this.progress().deaths ?? 0) + 1;
    this.saveProgress({ deaths });
    return deaths;
  }

  /** Marks the final record and files as written to KV. */
  markKvSynced(): void {
    this.saveProgress({ kv_synced: true });
  }

  /** Records how many of the run's files (in path order) are written to KV so far. */
  markKvFiles(count: number): void {
    if (this.progress().kv_files !== count) this.saveProgress({ kv_files: count });
  }

  result(): string | null {
    return getText(this.kv, 'result') ?? null;
  }

  /** The journal, in order. */
  journal(): JournalEntry[] {
    const entries: JournalEntry[] = [];
    for (const [key, value] of this.kv.list({ prefix: JOURNAL })) {
      const text = textOf(this.kv, key, value)!;
      if (text.startsWith('[')) for (const entry of JSON.parse(text) as JournalEntry[]) entries.push(entry);
      else entries.push(JSON.parse(text) as JournalEntry);
    }
    return entries;
  }

  /** Appends a journal entry and commits the file changes it made, in one transaction. */
  commitJournal(entry: JournalEntry, changes: readonly FileChange[]): number {
    const index = this.progress().journal + 1;
    const text = JSON.stringify(entry);
    const open = this.page;
    // A page whose texts do not end just before this entry (a transaction around this one
    // that was rolled back) is not added to: the entry starts a page of its own.
    const page =
      open === null || open.first + open.texts.length !== index || open.texts.length >= PAGE_ENTRIES || open.chars + text.length > PAGE_CHARS
        ? { first: index, texts: [], chars: 0 }
        : open;
    this.atomically(() => {
      // A page of several entries stays under PAGE_CHARS, so neither it nor what it replaces is chunked.
      putNewText(this.kv, JOURNAL + pad(page.first), `[${page.texts.length === 0 ? text : `${page.texts.join(',')},${text}`}]`);
      for (const change of changes) this.applyFileChange(change);
      // A new entry is progress: the executions that died before it no longer count.
      this.saveProgress(this.progress().deaths ? { journal: index, deaths: 0 } : { journal: index });
    });
    // Kept only once committed: a transaction that threw leaves the page as it was.
    page.texts.push(text);
    page.chars += text.length + 1;
    this.page = page;
    return index;
  }

  /** Settles when every write so far is durable. */
  durable(): Promise<void> {
    return this.storage.sync();
  }

  /**
   * Appends an event to the stream. An Engine event (with `engineSeq`) that is already
   * stored, regenerated by a replay, is skipped: answers null.
   */
  appendEvent(fields: Omit<StreamEvent, 'seq'>, engineSeq?: number): StreamEvent | null {
    const progress = this.progress();
    if (engineSeq !== undefined && engineSeq <= progress.engine_events) return null;
    // `at`: when the run object took the event, for the console's times and durations. The
    // Engine has no clock; a replay counts the events the stream holds and stamps none again.
    const event = { ...fields, seq: progress.events + 1, at: new Date().toISOString() } as StreamEvent;
    this.atomically(() => {
      putNewText(this.kv, EVENT + pad(event.seq), JSON.stringify(event));
      this.saveProgress(engineSeq === undefined ? { events: event.seq } : { events: event.seq, engine_events: engineSeq });
    });
    this.onEvent(event);
    return event;
  }

  /** Events with a seq above `after`, in order. */
  events(after = 0): StreamEvent[] {
    return this.eventTexts(after).map((text) => JSON.parse(text) as StreamEvent);
  }

  /** The JSON texts of the events with a seq above `after`, in order. */
  eventTexts(after = 0): string[] {
    const texts: string[] = [];
    for (const [key, value] of this.kv.list({ prefix: EVENT, startAfter: EVENT + pad(after) })) texts.push(textOf(this.kv, key, value)!);
    return texts;
  }

  ask(askId: string): AskRecord | undefined {
    return this.kv.get<AskRecord>(ASK + askId);
  }

  /** The run's asks, in the order they were asked. */
  asks(): AskRecord[] {
    return [...this.kv.list<AskRecord>({ prefix: ASK })].map(([, record]) => record).sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
  }

  putAsk(record: AskRecord): void {
    this.atomically(() => {
      const before = this.ask(record.ask_id);
      this.kv.put(ASK + record.ask_id, record);
      this.onChange({ kind: 'ask', before, after: record });
    });
  }

  call(callId: string): CallRecord | undefined {
    return this.kv.get<CallRecord>(CALL + callId);
  }

  /** The run's tool calls that may answer later, in the order they were made. */
  calls(): CallRecord[] {
    return [...this.kv.list<CallRecord>({ prefix: CALL })].map(([, record]) => record).sort((a, b) => a.order - b.order);
  }

  putCall(record: CallRecord): void {
    this.kv.put(CALL + record.call_id, record);
  }

  /** The rounds of the tool call of effect `key` (`<chain>-<seq>`), if its server asked before it answered. */
  callRounds(key: string): CallRoundsRecord | undefined {
    const text = getText(this.kv, ROUND + key);
    return text === undefined ? undefined : (JSON.parse(text) as CallRoundsRecord);
  }

  /** Keeps the rounds of the tool call of effect `key` (a request state may be long: chunked). */
  putCallRounds(key: string, record: CallRoundsRecord): void {
    putText(this.kv, ROUND + key, JSON.stringify(record));
  }

  /** Runs `closure` as one transaction (inside another one, as part of it). */
  atomically<T>(closure: () => T): T {
    if (this.depth > 0) return closure();
    this.depth++;
    try {
      return this.storage.transactionSync(closure);
    } finally {
      this.depth--;
    }
  }

  /** A committed file's text. */
  file(path: string): string | undefined {
    return getText(this.kv, FILE + path);
  }

  /** Committed file paths under `prefix`, sorted. */
  files(prefix = ''): string[] {
    const paths: string[] = [];
    for (const [key] of this.kv.list({ prefix: FILE + prefix })) paths.push(key.slice(FILE.length));
    return paths;
  }

  private applyFileChange(change: FileChange): void {
    const key = FILE + change.path;
    if (change.op === 'delete') deleteText(this.kv, key);
    else putText(this.kv, key, change.op === 'write' ? change.text : (getText(this.kv, key) ?? '') + change.text);
  }
}
