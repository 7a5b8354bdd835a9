/**
 * Which chains have seen untrusted text (docs/language.md, "Untrusted text across tasks").
 *
 * A chain is tainted from the moment untrusted text reaches its Lua or its model: an
 * untrusted tool's output or any catalog tool's failure text, the text `untrusted()` wraps,
 * what a tainted task hands back, or a `var` key, store file or `sys.replies` entry a tainted
 * chain wrote (read back by any chain). A task or arm also starts tainted when the chain that
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

  /** Top-level `var` keys a tainted chain has written: they stay marked for the rest of the run. */
  private readonly varKeys = new Set<string>();
  /** Store paths whose text a tainted chain wrote or appended to. */
  private readonly files = new Set<string>();

  /** A chain wrote below the top-level var key `key`. */
  wroteVar(chain: string, key: string | number): void {
    if (this.chains.has(chain)) this.varKeys.add(String(key));
  }

  /** A chain read var at `path` (the root when empty): it has seen what a tainted chain put there. */
  readVar(chain: string, path: readonly (string | number)[]): void {
    if (this.varKeys.size === 0) return;
    if (path.length === 0 ? true : this.varKeys.has(String(path[0]))) this.chains.add(chain);
  }

  /** Sections whose kept model-step reply (sys.replies) a tainted chain made. */
  private readonly replies = new Set<string>();

  /** A chain's model step in `section` ended with a reply, which replaces that section's. */
  wroteReply(chain: string, section: string): void {
    if (this.chains.has(chain)) this.replies.add(section);
    else this.replies.delete(section);
  }

  /** A chain read sys.replies: it has seen every reply kept there. */
  readReplies(chain: string): void {
    if (this.replies.size > 0) this.chains.add(chain);
  }

  /** A chain's store operation: a write sets the file's mark to the writer's, an append adds it, a read takes it. */
  storeOp(chain: string, op: string, path: string): void {
    if (op === 'store.read') {
      if (this.files.has(path)) this.chains.add(chain);
    } else if (op === 'store.write') {
      if (this.chains.has(chain)) this.files.add(path);
      else this.files.delete(path);
    } else if (op === 'store.append') {
      if (this.chains.has(chain)) this.files.add(path);
    } else if (op === 'store.delete') {
      this.files.delete(path);
    }
  }
}
