/**
 * Races on shared state ("Races, claims, and determinism"): within one scheduler step, the
 * chains released run one after another in a fixed order, but which chains share a step
 * depends on when their answers landed. Two chains writing the same `var` key or the same
 * store path in one step are a race whose outcome a different timing could flip, so the
 * Engine refuses it as a Determinism error rather than let a run depend on it.
 *
 * The unit of a var claim is the top-level key (`var.results`, whatever is written below
 * it): writes below one key, such as appends to one list, do not commute. A store claim is
 * a path written, appended to or deleted.
 */
import type { EffectRequest } from './effects.ts';

/** The writes of the current step, by what they claim. */
export class StepClaims {
  private readonly claims = new Map<string, string>();

  /** Forgets the previous step's claims. */
  nextStep(): void {
    this.claims.clear();
  }

  /** Claims a var key for `chain`; the conflict's message when another chain claimed it this step. */
  claimVar(chain: string, key: string | number): string | null {
    return this.claim(chain, `var:${key}`, `var.${key}`);
  }

  /** Claims the path a store write, append or delete names; other effects claim nothing. */
  claimStore(chain: string, request: EffectRequest): string | null {
    if (request.op !== 'store.write' && request.op !== 'store.append' && request.op !== 'store.delete') return null;
    return this.claim(chain, `store:${request.path}`, `the store path ${JSON.stringify(request.path)}`);
  }

  private claim(chain: string, key: string, what: string): string | null {
    const owner = this.claims.get(key);
    if (owner === undefined) {
      this.claims.set(key, chain);
      return null;
    }
    if (owner === chain) return null;
    return `chains ${owner} and ${chain} both write ${what} in one scheduler step, so the outcome would depend on which of them runs first`;
  }
}
