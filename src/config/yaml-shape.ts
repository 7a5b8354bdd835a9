/**
 * Checking a YAML document against a file format's JSON Schema (the test files, the
 * `--script` files; src/cli/test-file-schema.json, compiled ahead of time into
 * test-file-validator.generated.js), with the line and column of every problem: an unknown
 * key at any level, a value of the wrong kind, a YAML syntax error.
 *
 * The validator sees the plain data; this layer maps each of its errors back to the YAML
 * node it is about (the key of an unknown key, else the value, else the value's key when
 * the value is empty). A schema node's `description` is how a message names what the value
 * must be, such as `answers` must be a list of answers.
 */
import type { ErrorObject } from 'ajv';
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml';

/** A generated validator: on failure, `errors` holds every ajv error. */
export type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** A problem with its place in the file. */
export interface ShapeProblem {
  message: string;
  line: number;
  column: number;
}

/** A parsed document with positions, or its problems. */
export type ShapeResult =
  | {
      ok: true;
      value: unknown;
      doc: Document;
      /** The place of the value at `path`. */
      place: (path: (string | number)[]) => { line: number; column: number };
      /** The place of the key at `path` (a message about a name points at the name). */
      placeKey: (path: (string | number)[]) => { line: number; column: number };
    }
  | { ok: false; problems: ShapeProblem[] };

/** Parses `text` and checks it with `validate`; `what` names the whole file in messages. */
export function parseShaped(text: string, validate: Validate, what: string): ShapeResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((error) => ({ message: `invalid YAML: ${firstLine(error.message)}`, ...at(error.pos[0]) })),
    };
  }
  if (!doc.contents) return { ok: false, problems: [{ message: `${what} is empty`, line: 1, column: 1 }] };
  if (!isMap(doc.contents)) {
    return { ok: false, problems: [{ message: `${what} must be a YAML map of keys`, ...at(doc.contents.range?.[0] ?? 0) }] };
  }
  const value: unknown = doc.toJS();
  if (!validate(value)) {
    const problems: ShapeProblem[] = [];
    const seen = new Set<string>();
    for (const error of validate.errors ?? []) {
      const problem = describe(error, doc, value, what, at);
      const key = `${problem?.line}:${problem?.column}:${problem?.message}`;
      if (problem && !seen.has(key)) {
        seen.add(key);
        problems.push(problem);
      }
    }
    return { ok: false, problems: problems.sort((a, b) => a.line - b.line || a.column - b.column) };
  }
  const place = (path: (string | number)[]) => {
    const node = doc.getIn(path, true) as Node | undefined;
    return at(node?.range?.[0] ?? 0);
  };
  const placeKey = (path: (string | number)[]) => at(offsetOf(doc, path, 'key'));
  return { ok: true, value, doc, place, placeKey };
}

type At = (offset: number) => { line: number; column: number };

/** One validator error as a positioned message; null for errors that only restate another. */
function describe(error: ErrorObject, doc: Document, value: unknown, what: string, at: At): ShapeProblem | null {
  const path = pathOf(error.instancePath, value);
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String((error.params as { additionalProperty?: unknown }).additionalProperty);
      const where = path.length === 0 ? what : `\`${pathText(path)}\``;
      return { message: `unknown key \`${key}\` in ${where}`, ...at(offsetOf(doc, [...path, key], 'key')) };
    }
    case 'if':
      // "must match the then schema": the error inside `then` says what is wrong.
      return null;
    default: {
      const label = (error.parentSchema as { description?: unknown } | undefined)?.description;
      const expected = typeof label === 'string' ? label : (error.message ?? 'valid');
      return { message: `\`${pathText(path)}\` must be ${expected}`, ...at(offsetOf(doc, path, 'value')) };
    }
  }
}

/** A JSON Pointer as a path, indexes into lists as numbers. */
function pathOf(pointer: string, value: unknown): (string | number)[] {
  const path: (string | number)[] = [];
  let node = value;
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      path.push(Number(part));
      node = node[Number(part)];
    } else {
      path.push(part);
      node = node !== null && typeof node === 'object' && Object.hasOwn(node, part) ? (node as Record<string, unknown>)[part] : undefined;
    }
  }
  return path;
}

/**
 * The offset of the node at `path`: its key (`key`), or its value falling back to its key
 * when the value is empty (`expect:` with nothing after it has no node of its own).
 */
function offsetOf(doc: Document, path: readonly (string | number)[], want: 'key' | 'value'): number {
  let node: unknown = doc.contents;
  let keyOffset = 0;
  let valueOffset = (node as Node | null)?.range?.[0] ?? 0;
  for (const part of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => (isScalar(item.key) ? String(item.key.value) : String(item.key)) === String(part));
      if (!pair) break;
      keyOffset = (pair.key as Node | null)?.range?.[0] ?? valueOffset;
      node = pair.value;
      valueOffset = (node as Node | null)?.range?.[0] ?? keyOffset;
    } else if (isSeq(node) && typeof part === 'number') {
      const item = node.items[part];
      node = item;
      valueOffset = (item as Node | null)?.range?.[0] ?? valueOffset;
      keyOffset = valueOffset;
    } else {
      break;
    }
  }
  return want === 'key' ? keyOffset : valueOffset;
}

/** `host.packs["acme/stats"].tools[0]`-style paths; plain keys joined with dots. */
export function pathText(path: readonly (string | number)[]): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(part)) text += text === '' ? part : `.${part}`;
    else text += `[${JSON.stringify(part)}]`;
  }
  return text;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}
