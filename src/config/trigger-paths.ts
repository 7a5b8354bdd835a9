/**
 * The JSON paths a trigger takes its args by (RFC 9535), on json-p3, whose environment in
 * strict mode is the RFC's grammar and function set and nothing more. Compiled when
 * runvil.yaml is checked, so a bad path is an error at its line, never at a delivery.
 *
 * What a path gives: nothing found leaves the arg unset (its default applies); a singular
 * query (names and indexes only, as RFC 9535 defines it) gives its one value; any other
 * query gives the list of the values it found, in document order.
 *
 * Platform-neutral: the Worker reads deliveries with it, the command line checks files.
 */
import { JSONPathEnvironment, JSONPathError, type JSONPathQuery } from 'json-p3';
import type { Json } from '../json/json.ts';

/** A compiled path. */
export interface ArgPath {
  readonly text: string;
  readonly query: JSONPathQuery;
}

const environment = new JSONPathEnvironment({ strict: true });

/** Compiles `text`, or says why it is no RFC 9535 path. */
export function compileArgPath(text: string): { ok: true; path: ArgPath } | { ok: false; message: string } {
  try {
    return { ok: true, path: { text, query: environment.compile(text) } };
  } catch (error) {
    if (error instanceof JSONPathError) return { ok: false, message: `${JSON.stringify(text)} is not a JSON path (RFC 9535): ${error.message}` };
    throw error;
  }
}

/** The value `path` finds in `payload`, or undefined when it finds nothing. */
export function readArgPath(path: ArgPath, payload: Json): Json | undefined {
  const values = path.query.query(payload as never).values() as Json[];
  if (values.length === 0) return undefined;
  return path.query.singularQuery() ? values[0] : values;
}
