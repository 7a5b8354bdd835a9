/**
 * Finds the YAML node behind a path into the parsed frontmatter, so a message can carry
 * the line and column of the key or value it is about.
 */
import { isAlias, isMap, isScalar, isSeq, type Document } from 'yaml';

/** Start offsets (into the YAML text) of the key and the value at a path; either may be absent. */
export interface NodeOffsets {
  key?: number;
  value?: number;
}

/** Locates the key and value at `path` (map keys and list indexes, as strings). */
export function findNodeOffsets(doc: Document, path: readonly string[]): NodeOffsets {
  let current: unknown = doc.contents;
  const found: NodeOffsets = {};
  for (const step of path) {
    if (isAlias(current)) current = current.resolve(doc);
    if (isMap(current)) {
      // toJS turns every key into a string, so compare with the key's string form.
      const pair = current.items.find((item) => isScalar(item.key) && String(item.key.value) === step);
      if (!pair) return {};
      found.key = offsetOf(pair.key);
      current = pair.value;
    } else if (isSeq(current)) {
      found.key = undefined;
      current = current.items[Number(step)];
    } else {
      return {};
    }
  }
  found.value = offsetOf(current);
  return found;
}

function offsetOf(node: unknown): number | undefined {
  if (node && typeof node === 'object' && 'range' in node) {
    const range = (node as { range?: [number, number, number] | null }).range;
    if (range) return range[0];
  }
  return undefined;
}
