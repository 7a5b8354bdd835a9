/**
 * KV as the run store: what is read back after a run, laid out so one run's data lists
 * under one prefix.
 *
 *   prompts/{name}              an uploaded prompt's text (metadata: description, updated_at)
 *   runs/{id}/record            the run's final record: status, result, error, events
 *   runs/{id}/files/{path}      the run's files as the run left them
 *
 * KV is eventually consistent and takes one write per second per key, so within a run the
 * run's Durable Object is the source of truth: it keeps the files in its own storage and
 * writes each key here once, when the run ends, the files first and the record last, in
 * batches over alarm invocations (kv-sync.ts).
 */
import type { RunStore } from '../../host/run-store.ts';
import type { KvNamespace } from '../platform-types.ts';
import type { RunRecord } from '../run-object/run-view.ts';

/** The KV keys of the run store. */
export const kvKeys = {
  prompt: (name: string) => `prompts/${name}`,
  record: (runId: string) => `runs/${runId}/record`,
  files: (runId: string) => `runs/${runId}/files/`,
  file: (runId: string, path: string) => `runs/${runId}/files/${path}`,
};

/** KV's longest key, in bytes: a file whose key would be longer stays in the run object only. */
export const KV_MAX_KEY_BYTES = 512;

/** True when the file's KV key fits KV's key limit. */
export function fitsKvKey(runId: string, path: string): boolean {
  return new TextEncoder().encode(kvKeys.file(runId, path)).byteLength <= KV_MAX_KEY_BYTES;
}

/** One run's files in KV: what a finished run's files are read back from. */
export class KvRunStore implements RunStore {
  constructor(
    private readonly kv: KvNamespace,
    private readonly runId: string,
  ) {}

  read(path: string): Promise<string | null> {
    return this.kv.get(kvKeys.file(this.runId, path));
  }
  async write(path: string, text: string): Promise<void> {
    if (fitsKvKey(this.runId, path)) await this.kv.put(kvKeys.file(this.runId, path), text);
  }
  async append(path: string, text: string): Promise<void> {
    await this.write(path, ((await this.read(path)) ?? '') + text);
  }
  async list(prefix: string): Promise<string[]> {
    const base = kvKeys.files(this.runId);
    const paths: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.kv.list({ prefix: base + prefix, ...(cursor ? { cursor } : {}) });
      for (const key of page.keys) paths.push(key.name.slice(base.length));
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    return paths.sort();
  }
  async delete(path: string): Promise<boolean> {
    const existed = (await this.read(path)) !== null;
    await this.kv.delete(kvKeys.file(this.runId, path));
    return existed;
  }
}

/**
 * Writes a run's final record; `eventTexts` are its events as the run object stores them
 * (JSON texts), spliced in as they are rather than parsed and written again.
 */
export async function writeRunRecord(kv: KvNamespace, record: Omit<RunRecord, 'events'>, eventTexts: readonly string[]): Promise<void> {
  const text = JSON.stringify(record);
  await kv.put(kvKeys.record(record.run_id), `${text.slice(0, -1)},"events":[${eventTexts.join(',')}]}`);
}

/** A run's final record, or null when KV has none (yet: KV is eventually consistent). */
export async function readRunRecord(kv: KvNamespace, runId: string): Promise<RunRecord | null> {
  const text = await kv.get(kvKeys.record(runId));
  return text === null ? null : (JSON.parse(text) as RunRecord);
}
