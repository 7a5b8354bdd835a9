/**
 * The run-wide `var` document: JSON state shared by every section entry, task and arm.
 * Lua reaches it through views that address it by path; writes are visible at once.
 */
import type { Json } from '../prompt/types.ts';
import { canonicalJson } from './journal.ts';

/** A path into var: string keys for objects, 1-based integers for list items. */
export type VarPath = (string | number)[];

type Container = Json[] | { [key: string]: Json };

const isObject = (v: Json | undefined): v is { [key: string]: Json } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The var document and the operations its Lua views perform. */
export class VarState {
  private root: { [key: string]: Json } = {};

  /** The value at path, or undefined when there is none. */
  get(path: VarPath): Json | undefined {
    let node: Json | undefined = this.root;
    for (const key of path) {
      if (Array.isArray(node) && typeof key === 'number') node = node[key - 1];
      else if (isObject(node) && typeof key === 'string') node = node[key];
      else return undefined;
    }
    return node;
  }

  /** Sets (or with undefined, removes) the value at path; returns a problem text or null. */
  set(path: VarPath, value: Json | undefined): string | null {
    const parentPath = path.slice(0, -1);
    const key = path[path.length - 1];
    if (key === undefined) return 'var itself cannot be replaced; assign its fields';
    let parent = this.get(parentPath);
    if (parent === undefined || parent === null || typeof parent !== 'object') {
      return `${dotted(parentPath)} is not a table`;
    }
    if (typeof key === 'number') {
      if (isObject(parent)) {
        if (Object.keys(parent).length > 0) return `${dotted(parentPath)} has named fields, so it cannot also hold list items`;
        parent = this.replace(parentPath, []);
      }
      return setListItem(parent as Json[], key, value, dotted(path));
    }
    if (Array.isArray(parent)) {
      if (parent.length > 0) return `${dotted(parentPath)} is a list, so it cannot also hold named fields`;
      parent = this.replace(parentPath, {});
    }
    const object = parent as { [key: string]: Json };
    if (value === undefined) delete object[key];
    else object[key] = value;
    return null;
  }

  /** Length of the list at path (0 for an object, as Lua's # gives). */
  length(path: VarPath): number {
    const node = this.get(path);
    return Array.isArray(node) ? node.length : 0;
  }

  /** The keys at path in iteration order: list indexes, or object keys sorted. */
  keys(path: VarPath): (string | number)[] {
    const node = this.get(path);
    if (Array.isArray(node)) return node.map((_, i) => i + 1);
    if (isObject(node)) return Object.keys(node).sort();
    return [];
  }

  /** Canonical JSON text of the value at path. */
  json(path: VarPath): string {
    return canonicalJson(this.get(path) ?? null);
  }

  /** A copy of the whole document. */
  snapshot(): { [key: string]: Json } {
    return structuredClone(this.root);
  }

  private replace(path: VarPath, container: Container): Container {
    if (path.length === 0) {
      this.root = container as { [key: string]: Json };
      return container;
    }
    const parent = this.get(path.slice(0, -1)) as Container;
    const key = path[path.length - 1]!;
    if (Array.isArray(parent)) parent[(key as number) - 1] = container;
    else parent[key as string] = container;
    return container;
  }
}

function setListItem(list: Json[], index: number, value: Json | undefined, where: string): string | null {
  if (value === undefined) {
    if (index === list.length) list.pop();
    else if (index >= 1 && index < list.length) return `setting ${where} to nil would leave a hole in the list`;
    return null;
  }
  if (index < 1 || index > list.length + 1) return `${where} is outside the list (length ${list.length}); lists grow one item at a time`;
  list[index - 1] = value;
  return null;
}

function dotted(path: VarPath): string {
  return 'var' + path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('');
}
