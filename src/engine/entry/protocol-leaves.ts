/**
 * The protocol's layouts of what the leaves answer and take (protocol.ts says why only scalars
 * cross, and names the other protocol modules): the catalog, a var read, an event's fields.
 * protocol.lua reads and writes the same layouts on the Lua side, and
 * test/engine/protocol-leaves.test.ts runs both against each other.
 *
 * - The catalog (the leaf `catalog` with no id): each list as its length, then its items'
 *   fields (CATALOG_PACK_FIELDS, CATALOG_UNAVAILABLE_FIELDS, CATALOG_TOOL_FIELDS) in order.
 * - A var path (the var leaves take it): its keys as a JSON list (state.lua's path_json).
 * - A var read (the leaf `var_get`): a tag (VAR_TAGS), then the value for a scalar, else nil;
 *   a table's keys (the leaf `var_keys`): a JSON list.
 * - An event's fields (the leaf `event_fields`): (name, value) pairs when every field is a
 *   string, a boolean or a finite number; else (the leaf `event`) one JSON object text.
 */
import { defineField, type Json } from '../../json/json.ts';
import type { CatalogPack, CatalogTool } from '../catalog.ts';
import type { EventFields } from '../events.ts';
import type { LuaScalar } from '../lua/vm.ts';

/** The catalog as a section's runtime sees it: its Packs, the Packs it lacks and why, its tools. */
export interface CatalogView {
  packs: Pick<CatalogPack, (typeof CATALOG_PACK_FIELDS)[number]>[];
  unavailable: { id: string; reason: string }[];
  tools: Pick<CatalogTool, (typeof CATALOG_TOOL_FIELDS)[number]>[];
}

/** A Pack's fields in the order they cross (protocol.lua's CATALOG_PACK_FIELDS). */
export const CATALOG_PACK_FIELDS = ['id', 'declared'] as const satisfies readonly (keyof CatalogPack)[];
/** An unavailable Pack's fields in the order they cross. */
export const CATALOG_UNAVAILABLE_FIELDS = ['id', 'reason'] as const;
/** A tool's fields in the order they cross (wire null for a tool the run left out of its offering). */
export const CATALOG_TOOL_FIELDS = ['id', 'description', 'pack', 'wire', 'output', 'trusted'] as const satisfies readonly (keyof CatalogTool)[];

/**
 * The catalog's values for tools.lua: plain values rather than JSON, whose decoding in Lua
 * costs more than the rest of loading the catalog. Written field by field (the orders above).
 */
export function encodeCatalog(catalog: CatalogView): LuaScalar[] {
  const { packs, unavailable, tools } = catalog;
  const values: LuaScalar[] = [packs.length];
  for (const pack of packs) values.push(pack.id, pack.declared);
  values.push(unavailable.length);
  for (const entry of unavailable) values.push(entry.id, entry.reason);
  values.push(tools.length);
  for (const tool of tools) values.push(tool.id, tool.description, tool.pack, tool.wire, tool.output, tool.trusted);
  return values;
}

/** The catalog from its values: the inverse of encodeCatalog, for tests. */
export function decodeCatalog(values: readonly LuaScalar[]): CatalogView {
  let at = 0;
  const list = <T>(width: number, read: (fields: readonly LuaScalar[]) => T): T[] => {
    const count = Number(values[at++]);
    return Array.from({ length: count }, () => read(values.slice(at, (at += width))));
  };
  return {
    packs: list(CATALOG_PACK_FIELDS.length, ([id, declared]) => ({ id: String(id), declared: declared === true })),
    unavailable: list(CATALOG_UNAVAILABLE_FIELDS.length, ([id, reason]) => ({ id: String(id), reason: String(reason) })),
    tools: list(CATALOG_TOOL_FIELDS.length, ([id, description, pack, wire, output, trusted]) => ({
      id: String(id),
      description: String(description),
      pack: String(pack),
      wire: wire === null ? null : String(wire),
      output: output as CatalogTool['output'],
      trusted: trusted === true,
    })),
  };
}

/** A var path as the runtime sends it: JSON of its keys (the root's, an empty Lua table, as {} or []). */
export function varPath(text: LuaScalar): (string | number)[] {
  const parsed = JSON.parse(String(text)) as (string | number)[] | Record<string, never>;
  return Array.isArray(parsed) ? parsed : [];
}

/** A table's keys as the leaf `var_keys` answers them: a JSON list, which state.lua's pairs decodes. */
export function encodeVarKeys(keys: readonly (string | number)[]): string {
  return JSON.stringify(keys);
}

/** The tags of a var read (protocol.lua's VAR_TAGS): nothing there, JSON null, a table (read as a view), a scalar. */
export const VAR_TAGS = { absent: 'nil', null: 'null', table: 'table', scalar: 'scalar' } as const;

/** A var read by kind: a scalar carries its value; a table is read through a view, key by key. */
export type VarRead = { kind: 'absent' | 'null' | 'table' } | { kind: 'scalar'; value: string | number | boolean };

/** What the leaf `var_get` answers for the value at a path: its tag, then the value for a scalar. */
export function encodeVarRead(value: Json | undefined): LuaScalar[] {
  if (value === undefined) return [VAR_TAGS.absent, null];
  if (value === null) return [VAR_TAGS.null, null];
  if (typeof value === 'object') return [VAR_TAGS.table, null];
  return [VAR_TAGS.scalar, value];
}

/** A var read from the leaf's values: the inverse of encodeVarRead, for tests. */
export function decodeVarRead(values: readonly LuaScalar[]): VarRead {
  const [tag, value] = values;
  switch (tag) {
    case VAR_TAGS.absent:
      return { kind: 'absent' };
    case VAR_TAGS.null:
      return { kind: 'null' };
    case VAR_TAGS.table:
      return { kind: 'table' };
    case VAR_TAGS.scalar:
      return { kind: 'scalar', value: value as string | number | boolean };
    default:
      throw new Error(`the leaf var_get answered an unknown tag ${String(tag)}`);
  }
}

/**
 * An event's fields from the (name, value) pairs R.event sends: in name order, as the
 * runtime's JSON encoder would have written them (the event stream's text stays the same
 * whichever way the fields crossed).
 */
export function decodeEventPairs(pairs: readonly LuaScalar[]): EventFields {
  const order = Array.from({ length: pairs.length / 2 }, (_, k) => 2 * k).sort((a, b) => (String(pairs[a]) < String(pairs[b]) ? -1 : 1));
  const fields: EventFields = {};
  for (const at of order) defineField(fields, String(pairs[at]), pairs[at + 1] as Json);
  return fields;
}

/** The (name, value) pairs of plain event fields: the inverse of decodeEventPairs, for tests. */
export function encodeEventPairs(fields: Readonly<Record<string, string | number | boolean>>): LuaScalar[] {
  return Object.entries(fields).flatMap(([name, value]) => [name, value]);
}

/** An event's fields from the JSON object text R.event writes for fields that are not all plain. */
export function decodeEventJson(text: string): EventFields {
  return JSON.parse(text) as EventFields;
}
