/**
 * Runs a JSON Schema validation with its regular expressions matched by RE2
 * (src/json/linear-pattern.ts) rather than V8's backtracking engine. @cfworker/json-schema
 * matches `pattern` and `patternProperties` with `new RegExp(source, 'u').test(text)`, and
 * takes no engine of its own; so for the length of one synchronous `validate` call the
 * global `RegExp` is a small class with that interface over RE2, and the native one is put
 * back before anything else can run (JavaScript runs one thing at a time, and `validate`
 * never awaits). Regular expression literals, and the engine's own uses of RegExp, do not
 * read the global and are untouched.
 */
import { compileLinearPattern, compiledLinearPattern, type LinearPattern } from '../json/linear-pattern.ts';

const NativeRegExp = RegExp;

/** What the validator constructs for a pattern: `test` searches the text with RE2. */
class LinearRegExp {
  /** The schema's pattern, compiled when the tool's schema was checked. */
  private readonly known: LinearPattern | null;

  constructor(
    readonly source: string,
    flags?: string,
  ) {
    this.known = compiledLinearPattern(source);
    // The library also constructs a RegExp only to ask whether a string is one (`format:
    // regex`): that answer stays ECMAScript's, and building one costs no matching.
    if (this.known === null) new NativeRegExp(source, flags);
  }

  test(text: string): boolean {
    if (this.known !== null) return this.known.test(String(text));
    const compiled = compileLinearPattern(this.source);
    // A pattern the schema's check let through cannot reach here; should one, it fails the
    // validation (the tool's schema reads as broken) rather than run on a backtracking engine.
    if (!compiled.ok) throw new SyntaxError(`the pattern ${JSON.stringify(this.source)} ${compiled.reason}`);
    return compiled.pattern.test(String(text));
  }
}

/** Runs `validate` (synchronous) with every `new RegExp(...)` it makes matched by RE2. */
export function withLinearPatterns<T>(validate: () => T): T {
  const native = globalThis.RegExp;
  globalThis.RegExp = LinearRegExp as unknown as RegExpConstructor;
  try {
    return validate();
  } finally {
    globalThis.RegExp = native;
  }
}
