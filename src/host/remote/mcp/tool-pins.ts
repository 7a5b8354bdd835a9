/**
 * Pinned tool definitions (DESIGN.md Part 3, "MCP servers of the 2026-07-28 protocol"): a
 * server that changes a tool after it was approved (a description that now tells the model to
 * send its secrets somewhere: tool poisoning) must not reach a new run unnoticed. Each
 * Pack's tool list has a digest: SHA-256 over the canonical JSON of its definitions (name,
 * description, inputSchema, outputSchema), taken in name order, so a server that lists the
 * same tools in another order or over other pages has not changed them. `runvil.yaml` may fix
 * the digest (`pin:`); without one the definitions first seen are pinned (trust on first use)
 * in a PinStore until the root accepts a change. A list that differs from the pin names the
 * tools that changed: added, removed or redefined, by comparing each tool's own digest.
 */
import { canonicalJson } from '../../../json/canonical-json.ts';
import { hexOf, sha256 } from '../../../json/digest.ts';
import type { Json } from '../../../json/json.ts';

/** A tool as the server lists it: the parts a digest covers. */
export interface ListedTool {
  name: string;
  description?: unknown;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

/** The digest of a whole tool list, and each tool's by name. */
export interface ToolDefinitions {
  digest: string;
  /** Each tool's digest, by name; a JSON object (null prototype) so a PinStore can keep it as it is. */
  tools: Record<string, string>;
}

/** Where the definitions first seen (or last accepted) are kept, by Pack name: KV in the Worker, a file for the command line. */
export interface PinStore {
  get(fqName: string): Promise<ToolDefinitions | null>;
  put(fqName: string, definitions: ToolDefinitions): Promise<void>;
}

/** How a Pack's tools stand against its pin. */
export type PinVerdict = { ok: true; digest: string; pinned: string } | { ok: false; digest: string; pinned: string; changed: string[] };

/** The requirements reason of a Pack whose tools changed (the line reads `- <pack id> is unavailable: <this>`). */
export const toolsChanged = (names: readonly string[]): string =>
  `its tools changed since they were pinned: ${names.length > 0 ? names.join(', ') : '(the list, though no one tool)'}`;

/** The digests of `tools`, as listed. */
export async function toolDefinitions(tools: readonly ListedTool[]): Promise<ToolDefinitions> {
  const byName = new Map<string, string[]>();
  for (const tool of tools) {
    const name = String(tool.name);
    const text = canonicalJson({ name, description: jsonOf(tool.description), inputSchema: jsonOf(tool.inputSchema), outputSchema: jsonOf(tool.outputSchema) });
    byName.set(name, [...(byName.get(name) ?? []), text]);
  }
  const names = [...byName.keys()].sort();
  const each: Record<string, string> = Object.create(null);
  const whole: string[] = [];
  for (const name of names) {
    // A name listed twice is one entry of both definitions, in a fixed order.
    const texts = byName.get(name)!.sort();
    const text = texts.length === 1 ? texts[0]! : `[${texts.join(',')}]`;
    each[name] = await digestOf(text);
    whole.push(text);
  }
  return { digest: await digestOf(`[${whole.join(',')}]`), tools: each };
}

/**
 * Judges `seen` against the Pack's pin: `pin` when runvil.yaml fixes one, else what `store`
 * keeps, else (trust on first use) `seen` itself, which the store then keeps.
 */
export async function judgePin(fqName: string, seen: ToolDefinitions, pin: string | undefined, store: PinStore | null): Promise<PinVerdict> {
  const kept = store ? await store.get(fqName) : null;
  if (pin !== undefined) {
    if (seen.digest === pin) return { ok: true, digest: seen.digest, pinned: pin };
    // Which tools changed is known only against definitions kept with that digest; else every tool is named.
    const against = kept?.digest === pin ? kept.tools : null;
    return { ok: false, digest: seen.digest, pinned: pin, changed: against ? changedTools(against, seen.tools) : Object.keys(seen.tools).sort() };
  }
  if (kept === null) {
    await store?.put(fqName, seen);
    return { ok: true, digest: seen.digest, pinned: seen.digest };
  }
  if (kept.digest === seen.digest) return { ok: true, digest: seen.digest, pinned: kept.digest };
  return { ok: false, digest: seen.digest, pinned: kept.digest, changed: changedTools(kept.tools, seen.tools) };
}

/** The names of the tools added, removed or redefined between `before` and `after`, sorted. */
export function changedTools(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  const changed = [...names].filter((name) => !Object.hasOwn(before, name) || !Object.hasOwn(after, name) || before[name] !== after[name]);
  // Digests equal tool by tool but not as a whole cannot happen; were it to, no tool would be named.
  return changed.sort();
}

/** A PinStore over a key-value namespace (the Worker's KV): one key per Pack. */
export function keyValuePinStore(kv: { get(key: string): Promise<string | null>; put(key: string, value: string): Promise<void> }): PinStore {
  const key = (fqName: string) => `pins/${fqName}`;
  return {
    async get(fqName) {
      return parseDefinitions(await kv.get(key(fqName)));
    },
    async put(fqName, definitions) {
      await kv.put(key(fqName), JSON.stringify(definitions));
    },
  };
}

/** A PinStore in memory (tests, and a command line with nowhere to write). */
export function memoryPinStore(): PinStore {
  const kept = new Map<string, ToolDefinitions>();
  return {
    get: async (fqName) => kept.get(fqName) ?? null,
    put: async (fqName, definitions) => void kept.set(fqName, definitions),
  };
}

/** Definitions as a PinStore kept them in JSON, or null when the text is not that. */
export function parseDefinitions(text: string | null): ToolDefinitions | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const record = value as { digest?: unknown; tools?: unknown } | null;
  if (typeof record !== 'object' || record === null || typeof record.digest !== 'string') return null;
  if (typeof record.tools !== 'object' || record.tools === null || Array.isArray(record.tools)) return null;
  const tools: Record<string, string> = Object.create(null);
  for (const [name, digest] of Object.entries(record.tools)) if (typeof digest === 'string') tools[name] = digest;
  return { digest: record.digest, tools };
}

async function digestOf(text: string): Promise<string> {
  return `sha256:${hexOf(await sha256(text))}`;
}

/** A listed part as JSON; one that is absent stays absent. */
function jsonOf(value: unknown): Json | undefined {
  return value === undefined ? undefined : (value as Json);
}
