/**
 * Reads a streamed reply's bytes as they arrive: decoded as UTF-8 across chunk boundaries,
 * split into server-sent events by eventsource-parser (CRLF, LF or CR line ends, fields split
 * anywhere), each event handed to the wire's parser, its text passed on at once. Bounded:
 * the silence between two chunks, the bytes in all (counted as they arrive), and the caller's
 * signal (the round cancelled, the attempt's time limit); whatever stops the reading cancels
 * the body, so the rest is never read.
 */
import { createParser } from 'eventsource-parser';
import { durationText } from '../http-round.ts';
import type { ModelReply } from '../provider.ts';
import { isFailure, type ReplyStream, type StreamFailure } from './reply-stream.ts';

/** The bounds of one stream's reading. */
export interface StreamBounds {
  /** The longest silence between two chunks. */
  idleMs: number;
  /** The most bytes the stream may send. */
  maxBytes: number;
  /** Stops the reading (the round cancelled, the attempt's time limit). */
  signal?: AbortSignal | undefined;
}

/** The default longest silence between two chunks. */
export const DEFAULT_IDLE_MS = 30_000;

/** The default most bytes of a streamed reply: 8 MiB, far past any reply's text and calls. */
export const DEFAULT_MAX_STREAM_BYTES = 8 * 1024 * 1024;

/** How long the body's end is waited for after the wire's end mark. */
const END_GRACE_MS = 100;

/** How the reading ended: the reply, a failure (and whether sending the round again may pass), or the signal. */
export type StreamRead = { type: 'reply'; reply: ModelReply } | { type: 'failed'; failure: string; detail?: string; retry: boolean } | { type: 'interrupted' };

/**
 * Reads `body` through `wire`, telling `onText` the text of each chunk as it arrives: the
 * events of one chunk (pieces that arrived together) as one text.
 */
export async function readReplyStream(
  body: ReadableStream<Uint8Array>,
  wire: ReplyStream,
  bounds: StreamBounds,
  onText: (text: string) => void,
): Promise<StreamRead> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const watch = new ReadWatch(reader, bounds.idleMs, bounds.signal);
  let bytes = 0;
  let failure: StreamFailure | null = null;
  let text = '';
  const parser = createParser({
    onEvent(event) {
      if (failure !== null || wire.ended) return;
      const taken = wire.take(event);
      if (isFailure(taken)) failure = taken;
      else text += taken;
    },
  });
  const feed = (chunk: string) => {
    parser.feed(chunk);
    if (text === '') return;
    onText(text);
    text = '';
  };
  try {
    for (;;) {
      const next = await watch.read();
      if (next === 'interrupted') return { type: 'interrupted' };
      if (next === 'idle') return { type: 'failed', failure: `the stream sent nothing for ${durationText(bounds.idleMs)}`, retry: true };
      if (next === 'broken') return cut();
      if (next.done) {
        // The parser holds a last CR, which may yet be half of a CRLF; a line end after it settles
        // that (after a stream that ends in LF or CRLF, it is one more blank line: nothing).
        feed(`${decoder.decode()}\n`);
        break;
      }
      bytes += next.value.byteLength;
      if (bytes > bounds.maxBytes)
        return { type: 'failed', failure: `the stream sent more than ${bytesText(bounds.maxBytes)}, the most a reply may send`, retry: false };
      feed(decoder.decode(next.value, { stream: true }));
      if (failure !== null) break;
      if (wire.ended) {
        // The body's own end usually follows the end mark at once: read it, so the connection
        // goes back to the pool for the next round; a server that holds it open is not waited for.
        await watch.read(END_GRACE_MS);
        break;
      }
    }
  } finally {
    watch.stop();
    // After the end mark, a bound or a failure: the rest is not read (a no-op once it has ended).
    reader.cancel().catch(() => undefined);
  }
  if (failure !== null) return { type: 'failed', ...(failure as StreamFailure), retry: false };
  if (!wire.ended) return cut();
  const reply = wire.reply();
  if (isFailure(reply)) return { type: 'failed', ...reply, retry: false };
  return { type: 'reply', reply };
}

function cut(): StreamRead {
  return { type: 'failed', failure: 'the stream was cut off before its end', retry: true };
}

/**
 * The bounds of a stream's reads, watched once for the whole stream: one abort listener and
 * one idle timer, which, when it fires, looks at when the last chunk came and waits out the
 * rest of the silence if it has not been long enough. (A timer and a listener set and cleared
 * around every read cost more than the parsing of a chunk on workerd.) A bound that trips
 * cancels the reader, which settles the read in flight.
 */
class ReadWatch {
  private stopped: 'idle' | 'interrupted' | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastChunkAt = Date.now();
  private idleMs: number;
  private readonly onAbort = () => this.trip('interrupted');

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly defaultIdleMs: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.idleMs = defaultIdleMs;
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The next chunk; 'idle' after `idleMs` of silence, 'interrupted' when the signal aborts, 'broken' when the stream errs. */
  async read(idleMs = this.defaultIdleMs): Promise<ReadableStreamReadResult<Uint8Array> | 'idle' | 'interrupted' | 'broken'> {
    if (this.signal?.aborted) this.stopped ??= 'interrupted';
    if (this.stopped !== null) return this.stopped;
    this.lastChunkAt = Date.now();
    if (idleMs !== this.idleMs) {
      // A shorter wait (the grace after the end mark) cannot wait out a timer set for the longer one.
      this.idleMs = idleMs;
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.timer ??= setTimeout(this.check, idleMs);
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await this.reader.read();
    } catch {
      return this.stopped ?? 'broken';
    }
    return this.stopped ?? next;
  }

  /** Lets go of the timer and the listener. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.signal?.removeEventListener('abort', this.onAbort);
  }

  private readonly check = () => {
    this.timer = undefined;
    const quiet = Date.now() - this.lastChunkAt;
    if (quiet >= this.idleMs) this.trip('idle');
    else this.timer = setTimeout(this.check, this.idleMs - quiet);
  };

  private trip(reason: 'idle' | 'interrupted'): void {
    if (this.stopped !== null) return;
    this.stopped = reason;
    this.stop();
    this.reader.cancel().catch(() => undefined);
  }
}

/** A byte count as a failure names it: `8 MiB`, `64 KiB`, `100 bytes`. */
export function bytesText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
