/**
 * The run-wide `var` document: JSON state shared by every section entry, task and arm.
 * Lua reaches it through views that address it by path; writes are visible at once.
 *
 * Keys are the prompt's data, never the host's: every object of the document has a null
 * prototype and every lookup is an own-property one, so `__proto__`, `constructor` or
 * `toString` are keys like any other. The document's size (its canonical JSON in UTF-8
 * bytes) is kept per container as writes land, so the cap costs no walk of the document.
 */
import type { Json } from '../json/json.ts';
import { canonicalJson } from '../json/canonical-json.ts';

/** A path into var: string keys for objects, 1-based integers for list items. */
export type VarPath = (string | number)[];

/** What a write did: null when it landed, else why it did not. */
export type VarWriteRefusal =
  /** The write breaks var's shape (a hole in a list, a list given a named field...): a Lua error. */
  | { type: 'refused'; problem: string }
  /** The write would take the document past its size cap: the run ends with Limit. */
  | { type: 'limit'; message: string };

type VarObject = { [key: string]: Json };
type Container = Json[] | VarObject;

const isObject = (v: Json | undefined): v is VarObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An empty object of the document: no prototype, so no inherited names. */
const emptyObject = (): VarObject => Object.create(null) as VarObject;

/** The var document and the operations its Lua views perform. */
export class VarState {
  private root: Container = emptyObject();
  /** Canonical JSON size in bytes of each container of the document. */
  private readonly sizes = new WeakMap<Container, number>([[this.root, 2]]);

  /** limitBytes caps the document's canonical JSON size (RunLimits.varBytes). */
  constructor(private readonly limitBytes = Infinity) {}

  /** The document's canonical JSON size in UTF-8 bytes. */
  get size(): number {
    return this.sizes.get(this.root)!;
  }

  /** The value at path, or undefined when there is none. */
  get(path: VarPath): Json | undefined {
    let node: Json | undefined = this.root;
    for (const key of path) {
      node = childOf(node, key);
      if (node === undefined) return undefined;
    }
    return node;
  }

  /** Sets (or with undefined, removes) the value at path; null when the write landed. */
  set(path: VarPath, value: Json | undefined): VarWriteRefusal | null {
    const key = path[path.length - 1];
    if (key === undefined) return refused('var itself cannot be replaced; assign its fields');
    const parentPath = path.slice(0, -1);
    const chain = this.containersOn(parentPath);
    let parent = chain?.[chain.length - 1];
    if (!chain || !parent) return refused(`${dotted(parentPath)} is not a table`);
    if (typeof key === 'number') {
      if (isObject(parent)) {
        if (!isEmpty(parent)) return refused(`${dotted(parentPath)} has named fields, so it cannot also hold list items`);
      }
    } else if (Array.isArray(parent) && parent.length > 0) {
      return refused(`${dotted(parentPath)} is a list, so it cannot also hold named fields`);
    }
    const adopted = value === undefined ? undefined : this.adopt(value);
    const delta =
      typeof key === 'number'
        ? listDelta(Array.isArray(parent) ? parent : [], key, adopted, dotted(path), this.sizes)
        : objectDelta(isObject(parent) ? parent : emptyObject(), key, adopted, this.sizes);
    if (typeof delta === 'string') return refused(delta);
    if (this.size + delta > this.limitBytes) {
      return { type: 'limit', message: `the run's var grew past its size limit of ${byteText(this.limitBytes)} of JSON` };
    }
    // An empty container switches between list and object as its first item asks.
    if (typeof key === 'number' && !Array.isArray(parent)) parent = this.replace(chain, parentPath, []);
    else if (typeof key === 'string' && Array.isArray(parent)) parent = this.replace(chain, parentPath, emptyObject());
    if (Array.isArray(parent)) writeListItem(parent, key as number, adopted);
    else if (adopted === undefined) delete parent[key as string];
    else parent[key as string] = adopted;
    for (const container of chain) this.sizes.set(container, this.sizes.get(container)! + delta);
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

  /** A copy of the whole document (its objects null-prototype, as the document's own). */
  snapshot(): Json {
    return copyOf(this.root);
  }

  /** The containers from the root down to path, or null when path does not end at one. */
  private containersOn(path: VarPath): Container[] | null {
    const chain: Container[] = [this.root];
    let node: Json | undefined = this.root;
    for (const key of path) {
      node = childOf(node, key);
      if (node === null || typeof node !== 'object') return null;
      chain.push(node);
    }
    return chain;
  }

  /** Puts an empty container in place of the empty one at the end of chain (same size). */
  private replace(chain: Container[], path: VarPath, container: Container): Container {
    this.sizes.set(container, 2);
    if (path.length === 0) {
      this.root = container;
      chain[0] = container;
    } else {
      const parent = chain[chain.length - 2]!;
      const key = path[path.length - 1]!;
      if (Array.isArray(parent)) parent[(key as number) - 1] = container;
      else parent[key as string] = container;
    }
    chain[chain.length - 1] = container;
    return container;
  }

  /** A copy of value for the document, its objects null-prototype and its containers sized. */
  private adopt(value: Json): Json {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      const list: Json[] = new Array<Json>(value.length);
      let size = value.length > 0 ? value.length + 1 : 2;
      for (let i = 0; i < value.length; i++) {
        const item = this.adopt(value[i]!);
        list[i] = item;
        size += sizeOf(item, this.sizes);
      }
      this.sizes.set(list, size);
      return list;
    }
    const object = emptyObject();
    let count = 0;
    let size = 0;
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item === undefined) continue;
      const adopted = this.adopt(item);
      object[key] = adopted;
      count++;
      size += keySize(key) + sizeOf(adopted, this.sizes);
    }
    this.sizes.set(object, count > 0 ? size + count + 1 : 2);
    return object;
  }
}

function refused(problem: string): VarWriteRefusal {
  return { type: 'refused', problem };
}

function childOf(node: Json | undefined, key: string | number): Json | undefined {
  if (Array.isArray(node)) return typeof key === 'number' && Number.isInteger(key) && key >= 1 ? node[key - 1] : undefined;
  if (isObject(node) && typeof key === 'string') return Object.hasOwn(node, key) ? node[key] : undefined;
  return undefined;
}

function isEmpty(object: VarObject): boolean {
  for (const _ in object) return false;
  return true;
}

/** The size change of putting item at key of object (undefined: removing it). */
function objectDelta(object: VarObject, key: string, item: Json | undefined, sizes: WeakMap<Container, number>): number {
  const had = Object.hasOwn(object, key);
  const old = had ? sizeOf(object[key]!, sizes) : 0;
  if (item === undefined) {
    if (!had) return 0;
    let others = false;
    for (const k in object)
      if (k !== key) {
        others = true;
        break;
      }
    return -(keySize(key) + old + (others ? 1 : 0));
  }
  if (had) return sizeOf(item, sizes) - old;
  return keySize(key) + sizeOf(item, sizes) + (isEmpty(object) ? 0 : 1);
}

/** The size change of putting item at index of list, or why it cannot go there. */
function listDelta(list: Json[], index: number, item: Json | undefined, where: string, sizes: WeakMap<Container, number>): number | string {
  if (item === undefined) {
    if (index === list.length) return -(sizeOf(list[index - 1]!, sizes) + (list.length > 1 ? 1 : 0));
    if (index >= 1 && index < list.length) return `setting ${where} to nil would leave a hole in the list`;
    return 0;
  }
  if (!Number.isInteger(index) || index < 1 || index > list.length + 1) {
    return `${where} is outside the list (length ${list.length}); lists grow one item at a time`;
  }
  if (index <= list.length) return sizeOf(item, sizes) - sizeOf(list[index - 1]!, sizes);
  return sizeOf(item, sizes) + (list.length > 0 ? 1 : 0);
}

function writeListItem(list: Json[], index: number, item: Json | undefined): void {
  if (item === undefined) {
    if (index === list.length) list.pop();
  } else list[index - 1] = item;
}

function sizeOf(value: Json, sizes: WeakMap<Container, number>): number {
  if (value !== null && typeof value === 'object') return sizes.get(value)!;
  return utf8Length(JSON.stringify(value));
}

/** A key's share of its object's size: its quoted text and the colon. */
function keySize(key: string): number {
  return utf8Length(JSON.stringify(key)) + 1;
}

const ASCII = /^[\x00-\x7f]*$/;

function utf8Length(text: string): number {
  if (ASCII.test(text)) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next < 0xe000) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

function copyOf(value: Json): Json {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyOf);
  const object = emptyObject();
  for (const key of Object.keys(value)) object[key] = copyOf(value[key]!);
  return object;
}

/** A byte count as the Limit message names it: MiB or KiB when whole, else bytes. */
function byteText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes.toLocaleString('en-US')} bytes`;
}

function dotted(path: VarPath): string {
  return 'var' + path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('');
}
