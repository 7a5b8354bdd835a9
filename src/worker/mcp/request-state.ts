/**
 * The `requestState` of an `input_required` answer (2026-07-28): it names the run, the ask
 * and the tool the call was made to, is signed so that a caller can neither forge nor swap
 * it, is bound to the principal that made the call, and expires with the ask. The SDK's
 * codec seals it (HMAC-SHA256, `v1.<body>.<mac>`) under a key derived from the deployment
 * secret with a label of its own, as ask tokens are (waits/ask-token.ts), so neither key
 * can stand in for the other. A state that fails any check is refused before the handler
 * runs with the protocol's error (-32602, "Invalid or expired requestState"), as is one
 * whose ask is no longer pending (replayed, or answered elsewhere first: first answer wins).
 */
import { createRequestStateCodec, type RequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import { askSecret } from '../waits/ask-token.ts';
import type { Env } from '../env.ts';
import { runTimeoutSeconds } from '../run-object/run-alarm.ts';

/** What a request state holds: the run, the ask, the tool called, when the ask expires (ISO 8601, or null), and whether the ask has a form (absent in states minted before it was kept). */
export interface AskState {
  run: string;
  ask: string;
  tool: string;
  expires: string | null;
  form?: boolean;
}

/** Mints and checks the request states of one caller. */
export interface AskStateCodec {
  mint(state: AskState, ctx: ServerContext): Promise<string>;
  /** The state, or a throw (the SDK answers it with -32602 and hands the reason to onerror only). */
  verify(text: string, ctx: ServerContext): Promise<AskState>;
}

const LABEL = 'runvil mcp request state v1';

/** The key derived in this isolate and the secret it was derived from: every /mcp request makes a codec. A plain value, never a pending promise, is kept (a promise is not shared between requests in workerd). */
let derived: { secret: string; key: Uint8Array } | null = null;

/** The codec for states bound to `principal` (principalId), or null when the deployment has no secret to sign with. */
export async function askStateCodec(env: Env, principal: string): Promise<AskStateCodec | null> {
  const key = await stateKey(env);
  if (key === null) return null;
  const codec: RequestStateCodec<AskState> = createRequestStateCodec<AskState>({
    key,
    // A state lives at most as long as a run may: the ask's own deadline is checked below.
    ttlSeconds: runTimeoutSeconds(env.RUNVIL_RUN_TIMEOUT_SECONDS),
    bind: () => principal,
  });
  return {
    mint: (state, ctx) => codec.mint(state, ctx),
    async verify(text, ctx) {
      const state = await codec.verify(text, ctx);
      if (!isAskState(state)) throw new Error('malformed');
      if (state.expires !== null && Date.parse(state.expires) <= Date.now()) throw new Error('expired');
      return state;
    },
  };
}

/** HMAC-SHA256(deployment secret, LABEL): 32 bytes, the codec's minimum key length. */
async function stateKey(env: Env): Promise<Uint8Array | null> {
  const secret = askSecret(env);
  if (secret === null) return null;
  if (derived?.secret === secret) return derived.key;
  const encoder = new TextEncoder();
  const hmac = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const key = new Uint8Array(await crypto.subtle.sign('HMAC', hmac, encoder.encode(LABEL)));
  derived = { secret, key };
  return key;
}

function isAskState(value: unknown): value is AskState {
  if (value === null || typeof value !== 'object') return false;
  const state = value as Record<string, unknown>;
  return (
    typeof state.run === 'string' &&
    typeof state.ask === 'string' &&
    typeof state.tool === 'string' &&
    (state.expires === null || typeof state.expires === 'string') &&
    (state.form === undefined || typeof state.form === 'boolean')
  );
}
