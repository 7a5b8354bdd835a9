/**
 * A stream opened with a key ends when the key is revoked: a run's event stream may stay
 * open for days, and "refused within a second everywhere" holds for it too. The key is
 * looked up again every KEY_CACHE_MS (through the same cache as every request, so a stream
 * costs at most one D1 read a second), and the stream ends at the first lookup that finds
 * it revoked or gone.
 */
import type { D1Database } from '../platform-types.ts';
import { findKey, KEY_CACHE_MS } from './key-lookup.ts';

/** `body`, ended (and its source cancelled) once the key whose text is `key` is revoked. */
export function endWhenRevoked(body: ReadableStream<Uint8Array>, db: D1Database, key: string): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  const end = (controller: ReadableStreamDefaultController<Uint8Array>, reason: string) => {
    if (ended) return;
    ended = true;
    clearInterval(timer);
    controller.close();
    void reader.cancel(reason).catch(() => {});
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(() => {
        findKey(db, key).then(
          (record) => {
            if (record === null || record.revoked_at !== null) end(controller, 'the key was revoked');
          },
          // D1 failing is no revocation: the next tick looks again.
          () => {},
        );
      }, KEY_CACHE_MS);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (ended) return;
      if (done) {
        ended = true;
        clearInterval(timer);
        controller.close();
      } else controller.enqueue(value);
    },
    cancel(reason) {
      ended = true;
      clearInterval(timer);
      return reader.cancel(reason);
    },
  });
}
