/**
 * The deployment's configuration as the rest of Runvil sees it: `runvil.yaml` (DESIGN.md,
 * Part 2, "The deployment's configuration") after it was parsed and checked. Values may
 * still hold `${NAME}` references: they are read from the environment when a value is used
 * (`resolveConfigValue`), so a secret set after the build is seen, and a missing one is an
 * error that names it at the moment it matters.
 */
import type { Json } from '../json/json.ts';
import { serverSecretProblem } from './server-secrets.ts';
import type { McpConfig } from './mcp-config.ts';

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
  /** `pin:`: the digest the server's tool definitions must have (`sha256:<hex>`); absent: the first seen are pinned. */
  pin?: string;
  /** How long a call the server made a task may wait on it, in seconds (mcp-task-call.ts); absent: DEFAULT_TASK_TIMEOUT_SECONDS. */
  timeoutSeconds?: number;
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

/** The senders a trigger understands (DESIGN.md Part 3, "Triggers"). */
export const TRIGGER_SENDERS = ['github', 'stripe', 'slack', 'standard'] as const;

/** One of TRIGGER_SENDERS. */
export type TriggerSender = (typeof TRIGGER_SENDERS)[number];

/** One arg a trigger takes from the delivery's payload by an RFC 9535 JSON path. */
export interface TriggerArg {
  /** The prompt's arg. */
  name: string;
  /** The path as written (`$.issue.title`), compiled by src/config/trigger-paths.ts. */
  path: string;
}

/** One `triggers:` entry: a sender whose signed deliveries start runs of a prompt at `POST /hooks/<name>`. */
export interface Trigger {
  /** The trigger's name, the last part of its route. */
  name: string;
  /** The deployed prompt it starts. */
  prompt: string;
  from: TriggerSender;
  /** The signing secret, always a `${NAME}` reference (resolved at use). */
  secret: ConfigText;
  /** Event types (`issues` or `issues.opened`) that start a run; null: every event. */
  events: readonly string[] | null;
  /** The args taken from the payload; null: the whole payload is the single arg `payload`. */
  args: readonly TriggerArg[] | null;
  /** Where the trigger is written in runvil.yaml (1-based), for messages about it. */
  line: number;
  column: number;
}

/** `runvil.yaml`, checked. */
export interface DeploymentConfig {
  /** The origin used in callback and answer URLs; null: RUNVIL_ORIGIN, else none (src/worker/deployment/public-origin.ts). */
  publicUrl: ConfigText | null;
  /** Configured Packs by fully qualified name, in file order. */
  packs: ReadonlyMap<string, ConfiguredPack>;
  notify: readonly NotifyTarget[];
  /** Webhook triggers by name, in file order. */
  triggers: ReadonlyMap<string, Trigger>;
  /** `mcp:`: which prompts `/mcp` serves under which tool names; absent: every prompt under its own name. */
  mcp?: McpConfig;
}

/** The configuration of a deployment with no `runvil.yaml`. */
export const EMPTY_CONFIG: DeploymentConfig = { publicUrl: null, packs: new Map(), notify: [], triggers: new Map() };

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
