/**
 * The Worker's environment: the bindings and variables wrangler.toml declares, and the
 * secrets set with `wrangler secret put` (or `.dev.vars` locally).
 */
import type { AiBinding } from '../models/workers-ai.ts';
import type { D1Database, DoNamespace, KvNamespace, RateLimiter } from './platform-types.ts';
import type { RunObjectApi } from './run-object/run-object-api.ts';

/** What the Worker and its run objects are given. */
export interface Env {
  /** One Durable Object per run. */
  RUNS: DoNamespace<RunObjectApi>;
  /** The run store: deployed prompts, run records, run files. */
  RUNVIL_KV: KvNamespace;
  /** The index of runs and asks behind `GET /runs` and `GET /asks` (run-index.ts). */
  RUNVIL_DB: D1Database;
  /** OAuth for `/mcp`: the provider's clients, grants and tokens (oauth/; the provider reads it by this name). */
  OAUTH_KV?: KvNamespace;
  /** Workers AI, for prompts whose models use the `workers-ai` provider. */
  AI?: AiBinding;
  /** The bearer token of the API. Without it every API request is refused. */
  RUNVIL_API_TOKEN?: string;
  /** Each key's requests per minute (wrangler.toml `[[ratelimits]]`; keys/key-rate-limit.ts). */
  RUNVIL_KEY_LIMIT?: RateLimiter;
  /** The secret ask answer tokens are derived from (ask-token.ts); RUNVIL_API_TOKEN when unset. */
  RUNVIL_ASK_SECRET?: string;
  /**
   * The origin the deployment serves on, when runvil.yaml has no `public_url`: callback and
   * answer URLs are made on it (public-origin.ts). `npm start` sets it to the address it
   * listens on; a request's Host header never stands in for it.
   */
  RUNVIL_ORIGIN?: string;
  /** How long a run may last, in seconds, before it ends as Cancelled (default one day). */
  RUNVIL_RUN_TIMEOUT_SECONDS?: string;
  /** Model keys, search keys, `RUNVIL_WEBHOOK_SECRET_<PROMPT>` secrets. */
  [name: string]: unknown;
}

/** The Worker's variables and secrets as text, for readers that take an environment record. */
export function textVars(env: Env): Record<string, string | undefined> {
  const vars: Record<string, string | undefined> = Object.create(null);
  for (const [key, value] of Object.entries(env)) if (typeof value === 'string') vars[key] = value;
  return vars;
}
