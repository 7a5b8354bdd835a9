/**
 * Checking a Pack's manifest when a Host sets up a run: a manifest that does not fit
 * pack-manifest-schema.json makes its Pack unavailable with the problems as the reason,
 * rather than breaking the run. The schema is compiled ahead of time by
 * scripts/gen-validators.mjs (ajv standalone), because workerd refuses the code generation
 * ajv does at run time.
 */
import type { ErrorObject } from 'ajv';
import validate from './pack-manifest-validator.generated.js';

const checked = new WeakMap<object, string[]>();

/**
 * The problems of a manifest, each one line such as `` `tools[0].output` must be "plain"
 * or "structured" ``; an empty list when it fits. Checked once per manifest object.
 */
export function checkPackManifest(manifest: unknown): string[] {
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) return ['the manifest must be an object'];
  const known = checked.get(manifest);
  if (known) return known;
  const problems = validate(manifest) ? [] : (validate.errors ?? []).map(describe);
  const unique = [...new Set(problems)];
  checked.set(manifest, unique);
  return unique;
}

/** The fully qualified name a manifest gives, when it gives one that can name the Pack. */
export function manifestName(manifest: unknown): string | null {
  if (typeof manifest !== 'object' || manifest === null) return null;
  const name = (manifest as { fqName?: unknown }).fqName;
  return typeof name === 'string' && /^[a-z0-9._-]+\/[a-z0-9._-]+$/.test(name) ? name : null;
}

function describe(error: ErrorObject): string {
  const path = pathOf(error.instancePath);
  const at = path === '' ? 'the manifest' : `\`${path}\``;
  switch (error.keyword) {
    case 'required':
      return `${at} needs \`${String((error.params as { missingProperty?: unknown }).missingProperty)}\``;
    case 'additionalProperties':
      return `unknown key \`${String((error.params as { additionalProperty?: unknown }).additionalProperty)}\` in ${at}`;
    default: {
      const label = (error.parentSchema as { description?: unknown } | undefined)?.description;
      return `${at} must be ${typeof label === 'string' ? label : (error.message ?? 'valid')}`;
    }
  }
}

/** `/tools/0/output` as `tools[0].output`. */
function pathOf(pointer: string): string {
  let text = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) text += `[${part}]`;
    else text += text === '' ? part : `.${part}`;
  }
  return text;
}
