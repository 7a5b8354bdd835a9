/**
 * Which chains have seen untrusted text (docs/language.md, "Untrusted text across tasks").
 *
 * A chain is tainted from the moment untrusted text reaches its Lua or its model: an
 * untrusted tool's output or any catalog tool's failure text, the text `untrusted()` wraps,
 * or what a tainted task hands back. A task or arm also starts tainted when the chain that
 * starts it already is (its input or item may carry that text). Once tainted a chain stays
 * so, and everything it hands back (its result, its failure's message) reaches the chain that
 * awaits it wrapped in the run's envelope. Every mark follows from answers the journal holds
 * and from Lua's own calls, in each chain's own order, so a replay marks the same chains.
 */
export class ChainTaint {
  private readonly chains = new Set<string>();

  /** Marks a chain as having seen untrusted text. */
  mark(chain: string): void {
    this.chains.add(chain);
  }

  /** Whether the chain has seen untrusted text. */
  has(chain: string): boolean {
    return this.chains.has(chain);
  }

  /** A new chain started by `parent`: tainted when its parent is. */
  inherit(parent: string, child: string): void {
    if (this.chains.has(parent)) this.chains.add(child);
  }
}
