/**
 * The few Cloudflare platform interfaces the Worker uses, declared here rather than taken
 * from @cloudflare/workers-types, whose global declarations clash with Node's in one
 * tsconfig. Each mirrors the runtime's own API; only what Runvil calls is listed.
 */

/** A Durable Object's synchronous key-value storage (SQLite-backed objects). */
export interface SyncKv {
  get<T = unknown>(key: string): T | undefined;
  put<T>(key: string, value: T): void;
  delete(key: string): boolean;
  list<T = unknown>(options?: { prefix?: string; start?: string; startAfter?: string; end?: string; limit?: number; reverse?: boolean }): Iterable<[string, T]>;
}

/** A Durable Object's storage. */
export interface DoStorage {
  kv: SyncKv;
  /** Runs `closure` as one transaction: all of its writes commit, or none. */
  transactionSync<T>(closure: () => T): T;
  /** Settles when every write so far is durable. */
  sync(): Promise<void>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number | Date): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** A Durable Object id. */
export interface DoId {
  toString(): string;
}

/** What a Durable Object is constructed with. */
export interface DoState {
  readonly id: DoId;
  readonly storage: DoStorage;
  /** Resets the object: its memory is dropped, its storage kept; the next request builds a new instance. */
  abort(reason?: string): void;
}

/** A Durable Object namespace, yielding stubs of type `Stub`. */
export interface DoNamespace<Stub> {
  newUniqueId(): DoId;
  idFromName(name: string): DoId;
  /** Throws when `id` is not an id of this namespace. */
  idFromString(id: string): DoId;
  get(id: DoId): Stub;
}

/** A Workers KV namespace. */
export interface KvNamespace {
  get(key: string): Promise<string | null>;
  getWithMetadata<M>(key: string): Promise<{ value: string | null; metadata: M | null }>;
  put(key: string, value: string, options?: { metadata?: unknown }): Promise<void>;
  delete(key: string): Promise<void>;
  list<M = unknown>(options?: {
    prefix?: string;
    cursor?: string;
    limit?: number;
  }): Promise<{
    keys: { name: string; metadata?: M }[];
    list_complete: boolean;
    cursor?: string;
  }>;
}

/** A prepared D1 statement. */
export interface D1Statement {
  bind(...values: (string | number | null)[]): D1Statement;
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
  run(): Promise<unknown>;
}

/** A D1 database (SQLite). */
export interface D1Database {
  prepare(sql: string): D1Statement;
  /** Runs the statements as one transaction. */
  batch(statements: D1Statement[]): Promise<unknown[]>;
}

/** A Workers rate-limit binding (wrangler.toml `[[ratelimits]]`): counts a key's requests in its period. */
export interface RateLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}
