/**
 * The JSON paths a trigger takes its args by (RFC 9535), on json-p3, whose environment in
 * strict mode is the RFC's grammar and function set and nothing more. Compiled when
 * runvil.yaml is checked, so a bad path is an error at its line, never at a delivery.
 *
 * What a path gives: nothing found leaves the arg unset (its default applies); a singular
 * query (names and indexes only, as RFC 9535 defines it) gives its one value; any other
 * query gives the list of the values it found, in document order.
 *
 * The payload is the attacker's: `match()` and `search()` run on RE2 (src/json/i-regexp.ts),
 * in time linear in the text, with I-Regexp's meanings (RFC 9485: match is a whole-text
 * match, search finds the pattern anywhere), in place of json-p3's, which run V8's
 * backtracking engine; a pattern written in the path that is no I-Regexp is refused when
 * the path is compiled, one read from the payload makes the test false (RFC 9535 2.4.6), as
 * does one past the tighter bounds a payload's patterns have (payloadPattern).
 * Member names are the payload's own properties only (json-p3 reads them with hasOwn), so
 * `$.constructor` of `{}` finds nothing.
 *
 * Platform-neutral: the Worker reads deliveries with it, the command line checks files.
 */
import {
  FunctionExpressionType,
  JSONPathEnvironment,
  JSONPathError,
  JSONPathRecursionLimitError,
  JSONPathTypeError,
  jsonpath,
  type JSONPathQuery,
} from 'json-p3';
import { compileIRegexp, type IRegexpOutcome } from '../json/i-regexp.ts';
import type { Json } from '../json/json.ts';

/** The longest path compiled, in characters: a path is a few names, not a program. */
export const MAX_PATH_CHARS = 4096;

/** A compiled path. */
export interface ArgPath {
  readonly text: string;
  readonly query: JSONPathQuery;
}

/** Patterns written in paths, compiled as their paths were (a deployment's paths hold a few). */
const pathPatterns = new Map<string, IRegexpOutcome>();
/** Patterns a payload brought (`match(@.text, @.pattern)`), compiled lately. */
const payloadPatterns = new Map<string, IRegexpOutcome>();
/** How many patterns from payloads are kept compiled. */
const PAYLOAD_PATTERN_ENTRIES = 256;
/**
 * The size a pattern from a payload may have (compileIRegexp), and how many new ones one
 * reading of a path compiles: a payload of a mebibyte could otherwise bring a hundred
 * thousand patterns, each costing RE2 a compile and, on a long text, a thousand steps a
 * character. Past the budget a test with a new pattern is false.
 */
const MAX_PAYLOAD_PATTERN_SIZE = 256;
const PAYLOAD_COMPILES_PER_READ = 32;
let compilesLeft = PAYLOAD_COMPILES_PER_READ;

function pathPattern(source: string): IRegexpOutcome {
  const known = pathPatterns.get(source);
  if (known) return known;
  const outcome = compileIRegexp(source);
  if (pathPatterns.size >= 1024) pathPatterns.clear();
  pathPatterns.set(source, outcome);
  return outcome;
}

function payloadPattern(source: string): IRegexpOutcome | null {
  const known = pathPatterns.get(source) ?? payloadPatterns.get(source);
  if (known) return known;
  if (compilesLeft <= 0) return null;
  compilesLeft--;
  const outcome = compileIRegexp(source, MAX_PAYLOAD_PATTERN_SIZE);
  if (payloadPatterns.size >= PAYLOAD_PATTERN_ENTRIES) payloadPatterns.clear();
  payloadPatterns.set(source, outcome);
  return outcome;
}

/** `match(text, pattern)` or `search(text, pattern)` on RE2; false for a text or pattern that is none (RFC 9535 2.4.6-2.4.7). */
class LinearPatternFunction {
  readonly argTypes = [FunctionExpressionType.ValueType, FunctionExpressionType.ValueType];
  readonly returnType = FunctionExpressionType.LogicalType;

  constructor(private readonly how: 'match' | 'search') {}

  call(text: unknown, pattern: unknown): boolean {
    if (typeof text !== 'string' || typeof pattern !== 'string') return false;
    const compiled = payloadPattern(pattern);
    return compiled !== null && compiled.ok && compiled.regexp[this.how](text);
  }
}

/** RFC 9535's environment with match() and search() on RE2, and their patterns checked as a path is compiled. */
class TriggerPathEnvironment extends JSONPathEnvironment {
  protected override setupFilterFunctions(): void {
    super.setupFilterFunctions();
    this.functionRegister.set('match', new LinearPatternFunction('match'));
    this.functionRegister.set('search', new LinearPatternFunction('search'));
  }

  override checkWellTypedness(token: jsonpath.Token, args: jsonpath.expressions.FilterExpression[]): jsonpath.expressions.FilterExpression[] {
    const checked = super.checkWellTypedness(token, args);
    const pattern = checked[1];
    if ((token.value === 'match' || token.value === 'search') && pattern instanceof jsonpath.expressions.StringLiteral) {
      const compiled = pathPattern(pattern.value);
      if (!compiled.ok)
        throw new JSONPathTypeError(`the pattern ${JSON.stringify(pattern.value)} of ${token.value}() ${compiled.reason} (RFC 9485 I-Regexp)`, token);
    }
    return checked;
  }
}

/**
 * How deep a descendant segment (`..`) goes. json-p3's default (50) is below the 64 levels
 * the Worker lets a body nest (src/worker/http/body.ts), so a payload 51 levels deep would make
 * `$..x` throw rather than read it.
 */
const MAX_DESCENT = 256;

const environment = new TriggerPathEnvironment({ strict: true, maxRecursionDepth: MAX_DESCENT });

/** Compiles `text`, or says why it is no RFC 9535 path. */
export function compileArgPath(text: string): { ok: true; path: ArgPath } | { ok: false; message: string } {
  if (text.length > MAX_PATH_CHARS) return { ok: false, message: `the path is longer than ${MAX_PATH_CHARS} characters` };
  try {
    return { ok: true, path: { text, query: environment.compile(text) } };
  } catch (error) {
    if (error instanceof JSONPathError) return { ok: false, message: `${JSON.stringify(text)} is not a JSON path (RFC 9535): ${error.message}` };
    // json-p3's parser recurses: a filter nested thousands deep exhausts the stack.
    if (error instanceof RangeError) return { ok: false, message: `${JSON.stringify(text.slice(0, 40))}... is nested too deeply to compile` };
    throw error;
  }
}

/** The value `path` finds in `payload`, or undefined when it finds nothing. */
export function readArgPath(path: ArgPath, payload: Json): Json | undefined {
  let values: Json[];
  compilesLeft = PAYLOAD_COMPILES_PER_READ;
  try {
    values = path.query.query(payload as never).values() as Json[];
  } catch (error) {
    // Deeper than MAX_DESCENT: a payload no route lets in; what a path cannot reach it does not find.
    if (error instanceof JSONPathRecursionLimitError) return undefined;
    throw error;
  }
  if (values.length === 0) return undefined;
  return path.query.singularQuery() ? values[0] : values;
}
