/**
 * Preparing a run's catalog: which Packs the run holds, which tools it can offer, and the
 * requirements notice when a declared Pack cannot serve ("The tool catalog and extra Packs",
 * "What declaring a Pack does").
 */
import { parseToolId, wireName, isValidWireName } from '../prompt/name-grammar.ts';
import type { Prompt } from '../prompt/types.ts';
import type { Json } from '../json/json.ts';
import type { Pack, ServiceDirectory, ToolManifest } from './pack.ts';
import { TASK_BUILTINS, type CatalogTool, type RunCatalog } from '../engine/catalog.ts';
import { checkPackManifest, manifestName } from './pack-manifest.ts';

/** The outcome of preparing a run: its catalog, or the requirements notice. */
export type Prepared = { ok: true; catalog: RunCatalog; packs: Map<string, Pack> } | { ok: false; notice: string };

/**
 * What a Host can tell the person about a declared Pack it cannot serve: which variable
 * provides a service, which file installs a Pack. Each answer goes on its own line under
 * the notice's line for that Pack; undefined adds nothing.
 */
export interface Remedies {
  /** How to provide a service the Host lacks, such as `runvil/search-provider`. */
  service?(service: string): string | undefined;
  /** How to install a Pack the Host does not have, by its fully qualified name. */
  pack?(fqName: string): string | undefined;
}

/** Prepares a run of prompt with the Host's Packs and services. */
export function prepareCatalog(prompt: Prompt, hostPacks: readonly Pack[], services: ServiceDirectory, remedies: Remedies = {}): Prepared {
  const log: string[] = [];
  const registry = namedPacks(hostPacks, log);
  const byFqName = new Map(registry.map((pack) => [pack.manifest.fqName, pack]));
  const declared = prompt.frontmatter.uses;
  const declaredIds = new Set(declared.map((entry) => entry.packId));
  const problems: string[] = [];
  const chosen = new Map<string, Pack>();

  for (const entry of declared) {
    const pack = byFqName.get(entry.fqName);
    if (!pack) {
      const line = missingLine(entry.text, entry.vendor, entry.packId, entry.fqName, registry);
      problems.push(withRemedy(line, line.includes('; write ') ? undefined : remedies.pack?.(entry.fqName)));
      continue;
    }
    const reason = unavailability(pack, services);
    if (reason) problems.push(withRemedy(reason.line(entry.packId), reason.service ? remedies.service?.(reason.service) : undefined));
    else chosen.set(entry.packId, pack);
  }
  if (problems.length > 0) return { ok: false, notice: ['the environment cannot satisfy this prompt:', ...problems].join('\n') };

  const unavailable: { id: string; reason: string }[] = [];
  for (const pack of registry) {
    const [vendor, id] = pack.manifest.fqName.split('/') as [string, string];
    if (vendor !== 'runvil' || declaredIds.has(id)) continue;
    const reason = unavailability(pack, services);
    if (reason) unavailable.push({ id, reason: reason.text });
    else chosen.set(id, pack);
  }

  const tools = collectTools(chosen, log);
  const packs = [...chosen.entries()]
    .map(([id, pack]) => ({ id, fqName: pack.manifest.fqName, description: pack.manifest.description, declared: declaredIds.has(id) }))
    .sort((a, b) => compare(a.id, b.id));
  const preludes = declared.flatMap((entry) => {
    const source = chosen.get(entry.packId)?.manifest.prelude;
    return source === undefined ? [] : [{ packId: entry.packId, source }];
  });
  return { ok: true, catalog: { packs, unavailable: unavailable.sort((a, b) => compare(a.id, b.id)), tools, preludes, log }, packs: chosen };
}

function missingLine(text: string, vendor: string, packId: string, fqName: string, registry: readonly Pack[]): string {
  if (text.includes('/')) return `- ${packId} is unavailable: ${fqName} is not installed`;
  const others = registry.map((pack) => pack.manifest.fqName).filter((name) => name.endsWith(`/${packId}`) && name !== fqName);
  if (others.length > 0) {
    return `- ${packId} is unavailable: ${packId} means ${vendor}/${packId}, which is not installed; write ${others.sort()[0]} to use that Pack`;
  }
  return `- missing required Pack: ${packId}`;
}

/**
 * The Packs that can be named: a Pack whose manifest gives no usable fully qualified name is
 * left out of the run with a log line (it could be neither declared nor reported); one whose
 * manifest is otherwise broken stays, to be reported unavailable (pack-manifest.ts).
 */
function namedPacks(hostPacks: readonly Pack[], log: string[]): Pack[] {
  const named: Pack[] = [];
  hostPacks.forEach((pack, index) => {
    const manifest: unknown = typeof pack === 'object' && pack !== null ? pack.manifest : undefined;
    if (manifestName(manifest) !== null) return void named.push(pack);
    const problems = checkPackManifest(manifest);
    const problem = problems.find((text) => text.includes('fqName')) ?? problems[0] ?? 'it gives no `fqName`';
    log.push(`Pack ${index + 1} of the Host's registry has an invalid manifest (${problem}); left out`);
  });
  return named;
}

/** A notice line and, indented under it, what to do about it. */
function withRemedy(line: string, remedy: string | undefined): string {
  return remedy ? `${line}\n  ${remedy}` : line;
}

function unavailability(pack: Pack, services: ServiceDirectory): { text: string; line: (id: string) => string; service?: string } | null {
  const problems = checkPackManifest(pack.manifest);
  if (problems.length > 0) {
    const reason = `the Pack's manifest is invalid: ${problems.join('; ')}`;
    return { text: reason, line: (id) => `- ${id} is unavailable: ${reason}` };
  }
  for (const service of pack.manifest.services ?? []) {
    if (services.get(service) === undefined) {
      return {
        text: `${pack.manifest.fqName.split('/')[1]} needs ${service}, and this host provides none`,
        line: (id) => `- ${id} needs ${service}, and the environment provides none`,
        service,
      };
    }
  }
  const reason = pack.unavailableReason?.(services) ?? null;
  return reason === null ? null : { text: reason, line: (id) => `- ${id} is unavailable: ${reason}` };
}

function collectTools(chosen: Map<string, Pack>, log: string[]): CatalogTool[] {
  const owned: { tool: ToolManifest; pack: string }[] = [];
  for (const [id, pack] of chosen) {
    for (const tool of pack.manifest.tools) {
      const parsed = parseToolId(tool.id);
      if (!parsed.ok || parsed.packId !== id) {
        log.push(`Pack ${pack.manifest.fqName}: tool id ${JSON.stringify(tool.id)}: a Pack's tool id escapes its Pack id; dropped`);
        continue;
      }
      owned.push({ tool, pack: id });
    }
  }
  owned.sort((a, b) => compare(a.tool.id, b.tool.id));
  // A wire name goes to the first tool, in id order, that can take it.
  const taken = new Set<string>();
  return owned.map(({ tool, pack }) => {
    const wire = wireName(tool.id);
    const offered = !(TASK_BUILTINS as readonly string[]).includes(wire) && isValidWireName(wire) && isJsonObject(tool.parameters) && !taken.has(wire);
    if (offered) taken.add(wire);
    const { id, description, parameters, output, trusted } = tool;
    return { id, description, parameters, output, trusted, pack, wire: offered ? wire : null };
  });
}

function isJsonObject(value: Json): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Bytewise comparison, the order of canonical ids. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
