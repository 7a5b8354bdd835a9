/**
 * Text values of any length in a Durable Object's storage, which takes at most 2 MB per
 * key and value: a long text is split into chunks under `chunk:{key}:{n}`, and its own key
 * holds `{ chunks }`. A journal entry with a large tool result, a big file or a long
 * prompt all go through here.
 */
import type { SyncKv } from '../platform-types.ts';

/** Characters per chunk: at two bytes a character (UTF-16), 1 MiB, well under the limit. */
export const CHUNK_CHARS = 512 * 1024;

const chunkKey = (key: string, n: number) => `chunk:${key}:${n}`;

/** Stores `text` under `key`, replacing what was there. */
export function putText(kv: SyncKv, key: string, text: string): void {
  dropChunks(kv, key);
  putNewText(kv, key, text);
}

/**
 * Stores `text` under `key`, which holds nothing or a text that was not chunked (a new
 * event's key, say): there are no old chunks to look for, and so no read before the write.
 */
export function putNewText(kv: SyncKv, key: string, text: string): void {
  if (text.length <= CHUNK_CHARS) {
    kv.put(key, text);
    return;
  }
  const chunks = Math.ceil(text.length / CHUNK_CHARS);
  for (let n = 0; n < chunks; n++) kv.put(chunkKey(key, n), text.slice(n * CHUNK_CHARS, (n + 1) * CHUNK_CHARS));
  kv.put(key, { chunks });
}

/** The text under `key`, or undefined. */
export function getText(kv: SyncKv, key: string): string | undefined {
  return textOf(kv, key, kv.get(key));
}

/** The text of a value listed under `key` (a string, or the chunk marker). */
export function textOf(kv: SyncKv, key: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  const { chunks } = value as { chunks: number };
  let text = '';
  for (let n = 0; n < chunks; n++) text += kv.get<string>(chunkKey(key, n)) ?? '';
  return text;
}

/** Deletes the text under `key`; true when there was one. */
export function deleteText(kv: SyncKv, key: string): boolean {
  dropChunks(kv, key);
  return kv.delete(key);
}

function dropChunks(kv: SyncKv, key: string): void {
  const old = kv.get(key);
  if (old === undefined || typeof old === 'string') return;
  const { chunks } = old as { chunks: number };
  for (let n = 0; n < chunks; n++) kv.delete(chunkKey(key, n));
}
