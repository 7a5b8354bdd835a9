/**
 * Model roles: which of the frontmatter's `models:` a round uses (the one named, else the
 * default set with models.default, else the first declared), its config and its round cap.
 */
import type { Json } from '../../json/json.ts';
import { formatNameList } from '../../prompt/name-grammar.ts';
import { canonicalJson } from '../../json/canonical-json.ts';
import type { RunContext } from '../run-context.ts';

/** The rounds a loop may take when its role sets no round_cap. */
const DEFAULT_ROUND_CAP = 32;

/** A role's label, its config as canonical JSON and its round cap; or null and why not. */
export function resolveRole(run: RunContext, name: string | null): [string, string, number] | [null, string] {
  const models = run.prompt.frontmatter.models;
  const declared = Object.keys(models);
  const chosen = name ?? run.defaultRole ?? declared[0] ?? null;
  if (chosen === null) return ['default', '{}', DEFAULT_ROUND_CAP];
  const config = Object.hasOwn(models, chosen) ? models[chosen] : undefined;
  if (!config) return [null, `no model role ${JSON.stringify(chosen)} is declared under models:; declared roles: ${formatNameList(declared)}`];
  return [chosen, canonicalJson(config as Json), config.round_cap ?? DEFAULT_ROUND_CAP];
}
