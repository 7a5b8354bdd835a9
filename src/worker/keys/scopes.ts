/**
 * Scopes (DESIGN.md Part 3, "Keys and scopes"): what a key may do. `runs:read` reads runs,
 * events, files, asks and prompts; `runs:start:<prompt|*>` starts (and cancels, forks) runs
 * of a prompt; `asks:answer:<prompt|*>` answers asks of a prompt's runs; `prompts:write`
 * uploads prompts; `admin` allows everything but what only the root may do (managing keys),
 * so a leaked admin key cannot mint keys that outlive its revocation.
 */
import type { Principal } from './principal.ts';

/** The pseudo-scope of what only the root may do: no key's scopes grant it. */
export const ROOT_ONLY = 'root';

/** A prompt's name in a scope, as the prompt library's names are (or `*`, every prompt). */
const PROMPT = /^(?:[a-z0-9][a-z0-9_-]{0,99}|\*)$/;

/** The scopes that take a prompt after them: `<family>:<prompt|*>`. */
const PER_PROMPT = ['runs:start', 'asks:answer'] as const;

/** The scopes that stand alone. */
const PLAIN = ['runs:read', 'prompts:write', 'admin'] as const;

/** The grammar, as a refusal names it. */
export const SCOPE_GRAMMAR = 'runs:read, runs:start:<prompt|*>, asks:answer:<prompt|*>, prompts:write, admin';

/** Whether `text` is a scope a key may hold. */
export function isScope(text: string): boolean {
  if ((PLAIN as readonly string[]).includes(text)) return true;
  for (const family of PER_PROMPT) {
    if (text.startsWith(`${family}:`)) return PROMPT.test(text.slice(family.length + 1));
  }
  return false;
}

/**
 * Whether `principal` may do what `scope` names. The root may do everything; `admin` all but
 * ROOT_ONLY; `runs:start:*` and `asks:answer:*` cover every prompt. Scopes compare exactly
 * (case included): `Runs:Read` is no scope.
 */
export function allows(principal: Principal, scope: string): boolean {
  if (principal.kind === 'root') return true;
  if (scope === ROOT_ONLY) return false;
  const held = principal.scopes;
  if (held.includes('admin') || held.includes(scope)) return true;
  for (const family of PER_PROMPT) {
    if (scope.startsWith(`${family}:`) && held.includes(`${family}:*`)) return true;
  }
  return false;
}
