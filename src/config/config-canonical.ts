/**
 * The deployment's configuration as plain JSON, the form a build digests (src/host/run-build.ts):
 * what the file configures, not how it is written. Maps become objects and sets sorted arrays,
 * so canonical JSON of it is the same whatever order the file lists things in; a trigger's place
 * in the file (its line and column, kept for messages) is left out, so a comment or a blank line
 * changes no build. `${NAME}` references stay as written: a build never holds a secret's value.
 * The command line (from runvil.yaml) and the Worker (from the bundled file) both make it here,
 * so `runvil deploy-check` compares like with like. Platform-neutral.
 */
import type { Json } from '../json/json.ts';
import type { DeploymentConfig } from './deployment-config.ts';

/** `config` as plain JSON, for canonical JSON and a digest. */
export function canonicalConfig(config: DeploymentConfig): Json {
  const triggers = new Map([...config.triggers].map(([name, { line: _line, column: _column, ...trigger }]) => [name, trigger]));
  return plain({ ...config, triggers });
}

/** A value of the parsed configuration as JSON: Maps as objects (null prototype), Sets as sorted arrays, undefined fields left out. */
function plain(value: unknown): Json {
  if (value === null || typeof value !== 'object') return value === undefined ? null : (value as Json);
  if (value instanceof Map) return record([...value].map(([key, item]) => [String(key), plain(item)]));
  if (value instanceof Set) return [...value].map(plain).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (Array.isArray(value)) return value.map(plain);
  return record(
    Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => [key, plain(item)]),
  );
}

function record(entries: [string, Json][]): Json {
  const object: { [key: string]: Json } = Object.create(null);
  for (const [key, item] of entries) object[key] = item;
  return object;
}
