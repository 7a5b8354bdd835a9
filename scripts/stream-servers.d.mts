/** A streaming model server on loopback (stream-servers.mjs). */
export interface StreamServer {
  /** The base its provider takes (OPENAI_BASE_URL ends in /v1; ANTHROPIC_BASE_URL does not). */
  url: string;
  /** The request bodies received, in order. */
  requests: Record<string, unknown>[];
  /** Pieces a reply writes before it waits for release(); null: never waits. */
  holdAfter: number | null;
  /** Milliseconds between two pieces (0: as fast as the socket takes them). */
  paceMs: number;
  /** When each piece of the latest reply was written (performance.now(), ms). */
  wroteAt: number[];
  release(): void;
  /** Settles with the body of request number `n` (1-based) once it has come. */
  nextRequest(n: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}
export function defaultPieces(body: Record<string, unknown>): string[];
export function startStreamServer(wire: 'openai' | 'anthropic', options?: { pieces?: (body: Record<string, unknown>) => string[] }): Promise<StreamServer>;
