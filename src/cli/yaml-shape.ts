/**
 * Checking a YAML document against the shape of a file format (the test files, the
 * `--script` files), with the line and column of every problem: an unknown key at any
 * level, a value of the wrong kind, a YAML syntax error.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml';

/** What a value may be. `label` names a value in messages, such as "a list of texts". */
export type Shape =
  | { kind: 'text' }
  | { kind: 'boolean' }
  | { kind: 'any' }
  /** A map with fixed keys; `fields` lists every key it may hold. */
  | { kind: 'record'; fields: Record<string, Shape> }
  /** A map with keys of the writer's choosing (urls, queries, Pack names), values of one shape. */
  | { kind: 'map'; values: Shape; label: string }
  | { kind: 'list'; items: Shape; label: string }
  /** One of several shapes, told apart by the YAML node kind (scalar, map or list). */
  | { kind: 'either'; options: Shape[]; label: string };

/** A problem with its place in the file. */
export interface ShapeProblem {
  message: string;
  line: number;
  column: number;
}

/** A parsed document with positions, or its problems. */
export type ShapeResult = { ok: true; value: unknown; doc: Document; place: (path: (string | number)[]) => { line: number; column: number } } | { ok: false; problems: ShapeProblem[] };

/** Parses `text` and checks it against `shape`; `what` names the whole file in messages. */
export function parseShaped(text: string, shape: Shape, what: string): ShapeResult {
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
  const problems: ShapeProblem[] = [];
  if (!doc.contents) {
    problems.push({ message: `${what} is empty`, line: 1, column: 1 });
  } else if (!isMap(doc.contents)) {
    problems.push({ message: `${what} must be a YAML map of keys`, ...at(doc.contents.range?.[0] ?? 0) });
  } else {
    visit(doc.contents, shape, [], what, problems, at);
  }
  if (problems.length > 0) return { ok: false, problems };
  const place = (path: (string | number)[]) => {
    const node = doc.getIn(path, true) as Node | undefined;
    return at(node?.range?.[0] ?? 0);
  };
  return { ok: true, value: doc.toJS(), doc, place };
}

type At = (offset: number) => { line: number; column: number };

function visit(node: unknown, shape: Shape, path: (string | number)[], what: string, problems: ShapeProblem[], at: At, fallback = 0): void {
  // An empty value (`expect:` with nothing after it) has no node; point at its key instead.
  const offset = (node as Node | null)?.range?.[0] ?? fallback;
  const wrong = (expected: string) => problems.push({ message: `\`${pathText(path)}\` must be ${expected}`, ...at(offset) });
  switch (shape.kind) {
    case 'any':
      return;
    case 'text':
      // Numbers count as text, so `seed: 42` and `id: 1` read as written.
      if (!isScalar(node) || (typeof node.value !== 'string' && typeof node.value !== 'number')) wrong('a text');
      return;
    case 'boolean':
      if (!isScalar(node) || typeof node.value !== 'boolean') wrong('true or false');
      return;
    case 'record': {
      if (!isMap(node)) return void wrong('a map');
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const field = shape.fields[key];
        if (!Object.hasOwn(shape.fields, key) || !field) {
          const where = path.length === 0 ? what : `\`${pathText(path)}\``;
          problems.push({ message: `unknown key \`${key}\` in ${where}`, ...at(keyOffset(pair.key, offset)) });
          continue;
        }
        visit(pair.value, field, [...path, key], what, problems, at, keyOffset(pair.key, offset));
      }
      return;
    }
    case 'map': {
      if (!isMap(node)) return void wrong(shape.label);
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        visit(pair.value, shape.values, [...path, key], what, problems, at, keyOffset(pair.key, offset));
      }
      return;
    }
    case 'list':
      if (!isSeq(node)) return void wrong(shape.label);
      node.items.forEach((item, index) => visit(item, shape.items, [...path, index], what, problems, at, offset));
      return;
    case 'either': {
      const option = shape.options.find((candidate) => nodeFits(node, candidate));
      if (!option) return void wrong(shape.label);
      visit(node, option, path, what, problems, at, offset);
      return;
    }
  }
}

function keyOffset(key: unknown, fallback: number): number {
  return (key as Node | null)?.range?.[0] ?? fallback;
}

function nodeFits(node: unknown, shape: Shape): boolean {
  switch (shape.kind) {
    case 'record':
    case 'map':
      return isMap(node);
    case 'list':
      return isSeq(node);
    case 'boolean':
      return isScalar(node) && typeof node.value === 'boolean';
    case 'text':
      return isScalar(node) && (typeof node.value === 'string' || typeof node.value === 'number');
    default:
      return true;
  }
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
