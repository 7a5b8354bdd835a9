/**
 * The deployment's configuration as the rest of Runvil sees it: `runvil.yaml` (DESIGN.md,
 * Part 2, "The deployment's configuration") after it was parsed and checked. Values may
 * still hold `${NAME}` references: they are read from the environment when a value is used
 * (`resolveConfigValue`), so a secret set after the build is seen, and a missing one is an
 * error that names it at the moment it matters.
 */
import type { Json } from '../json/json.ts';
import { serverSecretProblem } from './server-secrets.ts';

/** A string from `runvil.yaml` that may hold `${NAME}` references, resolved at use. */
export type ConfigText = string;

/** One tool of an `http` Pack, as the file declares it. */
export interface ConfiguredTool {
  /** The tool's name; its tool id is `<pack id>/<name>`. */
  name: string;
  description: string;
  /** JSON Schema of the arguments (default `{ type: object, properties: {} }`). */
  parameters: Json;
  /** `structured` only on a trusted Pack. */
  output: 'plain' | 'structured';
  /** Seconds a call may wait for its result (default 900). */
  timeoutSeconds: number;
}

/** An MCP server over Streamable HTTP. */
export interface McpSource {
  kind: 'mcp';
  url: ConfigText;
  /** Extra request headers, by name (such as `Authorization`). */
  headers: ReadonlyMap<string, ConfigText>;
}

/** An HTTP tool service: every call is a signed POST to `url`. */
export interface HttpSource {
  kind: 'http';
  url: ConfigText;
  /** The Standard Webhooks secret (`whsec_...`) that signs every call. */
  secret: ConfigText;
  tools: readonly ConfiguredTool[];
}

/** A third-party Pack the deployment serves. */
export interface ConfiguredPack {
  /** The fully qualified name, `vendor/name`. */
  fqName: string;
  description: string;
  /** Untrusted (false) unless the file says otherwise. */
  trusted: boolean;
  source: McpSource | HttpSource;
}

/** Run events a notification endpoint can subscribe to. */
export const NOTIFICATION_TYPES = ['ask.created', 'ask.closed', 'run.completed', 'run.failed', 'run.cancelled'] as const;

/** One of NOTIFICATION_TYPES. */
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** One `notify:` entry: where run events are pushed. */
export interface NotifyTarget {
  url: ConfigText;
  /** The Standard Webhooks secret (`whsec_...`) that signs every delivery. */
  secret: ConfigText;
  /** The event types sent (default: all). */
  events: ReadonlySet<NotificationType>;
  /** The prompts whose runs are reported, or null for every prompt. */
  prompts: ReadonlySet<string> | null;
}

/** `runvil.yaml`, checked. */
export interface DeploymentConfig {
  /** The origin used in callback and answer URLs; null: RUNVIL_ORIGIN, else none (src/worker/public-origin.ts). */
  publicUrl: ConfigText | null;
  /** Configured Packs by fully qualified name, in file order. */
  packs: ReadonlyMap<string, ConfiguredPack>;
  notify: readonly NotifyTarget[];
}

/** The configuration of a deployment with no `runvil.yaml`. */
export const EMPTY_CONFIG: DeploymentConfig = { publicUrl: null, packs: new Map(), notify: [] };

/** A `${NAME}` the environment does not hold. */
export interface MissingConfigVariable {
  kind: 'MissingConfigVariable';
  name: string;
  message: string;
}

/** A `${NAME}` that names one of the server's own secrets (server-secrets.ts): never read for the file. */
export interface ServerSecretInConfig {
  kind: 'ServerSecretInConfig';
  name: string;
  message: string;
}

/** Why a value of runvil.yaml could not be read. */
export type ConfigValueError = MissingConfigVariable | ServerSecretInConfig;

/**
 * Reads every `${NAME}` of `text` from `vars` (own keys only); a missing name, or one of the
 * server's own secrets, is an error value that names it. The file's check refuses the latter
 * already; this refusal holds for a configuration that was not read from a checked file.
 */
export function resolveConfigValue(
  text: ConfigText,
  vars: Readonly<Record<string, string | undefined>>,
): { ok: true; value: string } | { ok: false; error: ConfigValueError } {
  let refused: ConfigValueError | null = null;
  const value = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const secret = serverSecretProblem(name);
    if (secret !== null) {
      refused ??= { kind: 'ServerSecretInConfig', name, message: `runvil.yaml: ${secret}` };
      return '';
    }
    const found = Object.hasOwn(vars, name) ? vars[name] : undefined;
    if (found === undefined)
      refused ??= { kind: 'MissingConfigVariable', name, message: `runvil.yaml needs the environment variable ${name}, which is not set` };
    return found ?? '';
  });
  if (refused !== null) return { ok: false, error: refused };
  return { ok: true, value };
}
