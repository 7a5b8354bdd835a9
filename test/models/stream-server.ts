/**
 * A loopback model server that streams: it answers a round that asks for a stream with a
 * recorded stream (test/models/streams/*.sse) written in small pieces with a pause between
 * them, and a round that does not with the same conversation's whole JSON answer. A plan
 * can hold a piece back until the test lets it go, never end, or send without end; the
 * server records how much it wrote and whether the client closed the connection first.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { startServer, type SeenRequest } from '../packs/helpers.ts';

/** A recorded stream or whole answer of test/models/streams/. */
export function recorded(name: string): string {
  return readFileSync(new URL(`./streams/${name}`, import.meta.url), 'utf8');
}

/** Splits `text` into pieces of `size` bytes (splitting characters, lines and fields wherever they fall). */
export function bytePieces(text: string | Buffer, size: number): Buffer[] {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
  return pieces;
}

/** How the server answers one streamed round. */
export interface StreamPlan {
  status?: number;
  contentType?: string;
  /** The bytes of the answer, written in this order with a pause between pieces. */
  pieces: (string | Buffer)[];
  /** Piece `at` waits for `until` (the test's proof that earlier pieces reached it). */
  hold?: { at: number; until: Promise<unknown> };
  /** After the pieces: 'open' keeps the connection open, sending nothing; 'cut' drops it; `repeat` is written again and again, up to `upTo` bytes in all. */
  after?: 'open' | 'cut' | { repeat: string; upTo: number };
  /** Milliseconds between two writes of `after.repeat` (none: as fast as the connection takes them). */
  pace?: number;
}

/** What the server saw of one answer. */
export interface Served {
  written: number;
  /** Whether the client closed the connection before the server ended the answer. */
  closedByClient: boolean;
  closed: Promise<void>;
}

/** The server of a streaming test. */
export interface StreamServer {
  url: string;
  requests: SeenRequest[];
  served: Served[];
  bodies(): Record<string, unknown>[];
  close(): Promise<void>;
}

/** A server on 127.0.0.1 answering request n with `answer(body, n)`: a stream plan, or a whole JSON text. */
export async function streamServer(answer: (body: Record<string, unknown>, index: number) => StreamPlan | string): Promise<StreamServer> {
  const served: Served[] = [];
  let next = 0;
  const server = await startServer(async (request, response) => {
    const plan = answer(JSON.parse(request.body) as Record<string, unknown>, next++);
    if (typeof plan === 'string') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(plan);
      return;
    }
    await stream(plan, response, served);
  });
  return { ...server, served, bodies: () => server.requests.map((request) => JSON.parse(request.body) as Record<string, unknown>) };
}

async function stream(plan: StreamPlan, response: ServerResponse, served: Served[]): Promise<void> {
  let ended = false;
  const record: Served = {
    written: 0,
    closedByClient: false,
    closed: new Promise<void>((resolve) =>
      response.on('close', () => {
        if (!ended) record.closedByClient = true;
        resolve();
      }),
    ),
  };
  served.push(record);
  response.writeHead(plan.status ?? 200, { 'content-type': plan.contentType ?? 'text/event-stream', 'cache-control': 'no-cache' });
  response.flushHeaders();
  const write = async (piece: string | Buffer): Promise<boolean> => {
    if (response.destroyed) return false;
    record.written += Buffer.byteLength(piece);
    if (!response.write(piece)) await new Promise<void>((resolve) => response.once('drain', resolve).once('close', resolve));
    return !response.destroyed;
  };
  for (let i = 0; i < plan.pieces.length; i++) {
    if (plan.hold?.at === i) await plan.hold.until;
    if (!(await write(plan.pieces[i]!))) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const after = plan.after;
  if (after === 'open') return;
  if (after === 'cut') {
    ended = true;
    response.destroy();
    return;
  }
  if (after) {
    while (record.written < after.upTo) {
      if (!(await write(after.repeat))) return;
      if (plan.pace !== undefined) await new Promise((resolve) => setTimeout(resolve, plan.pace));
    }
  }
  ended = true;
  response.end();
}
