/**
 * The part of workerd's `cloudflare:workers` module the Worker uses: the Durable Object
 * base class, which gives an object RPC methods, and the test's `env`.
 */
declare module 'cloudflare:workers' {
  import type { DoState } from './platform-types.ts';

  /** The base of a Durable Object class with RPC methods. */
  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: DoState;
    protected readonly env: Env;
    constructor(ctx: DoState, env: Env);
    fetch?(request: Request): Response | Promise<Response>;
    alarm?(): void | Promise<void>;
  }

  /** The bindings of the Worker (in tests, of the test Worker). */
  export const env: Record<string, unknown>;
}
