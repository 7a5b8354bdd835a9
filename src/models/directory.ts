/**
 * The Host's model directory: which provider and model serve a role's config, with keys
 * from the Host's environment (never from a prompt). `{}` is the Host's default model:
 * `RUNVIL_DEFAULT_MODEL`, else the first provider the environment has a key or binding for.
 */
import type { ModelConfig } from '../prompt/types.ts';
import { ANTHROPIC_BASE_URL, ANTHROPIC_DEFAULT_MODEL, anthropicProvider } from './anthropic.ts';
import type { RoundOptions } from './http-round.ts';
import { OPENAI_BASE_URL, OPENAI_DEFAULT_MODEL, openAiProvider } from './openai.ts';
import type { ModelDirectory, ModelProvider } from './provider.ts';
import { sameOrigin } from './wire-values.ts';
import { WORKERS_AI_DEFAULT_MODEL, workersAiProvider, type AiBinding } from './workers-ai.ts';

/** The providers a role's `provider:` can name. */
export const PROVIDER_NAMES = ['openai', 'anthropic', 'workers-ai'] as const;

/** One of PROVIDER_NAMES. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** A provider and, optionally, its model: `openai:gpt-4o-mini` as text. */
export interface ModelChoice {
  provider: ProviderName;
  model?: string;
}

/** The environment variables the directory reads. */
export const MODEL_ENV = {
  openaiKey: 'OPENAI_API_KEY',
  openaiBase: 'OPENAI_BASE_URL',
  anthropicKey: 'ANTHROPIC_API_KEY',
  anthropicBase: 'ANTHROPIC_BASE_URL',
  defaultModel: 'RUNVIL_DEFAULT_MODEL',
} as const;

/** Each provider's model for a role whose config names none. */
export const DEFAULT_MODELS: Record<ProviderName, string> = {
  openai: OPENAI_DEFAULT_MODEL,
  anthropic: ANTHROPIC_DEFAULT_MODEL,
  'workers-ai': WORKERS_AI_DEFAULT_MODEL,
};

/** What the directory is built with besides the environment. */
export interface ModelDirectoryOptions {
  /** Timeouts, retries and transport of the HTTP providers. */
  round?: RoundOptions;
  /** Replaces the provider and model of every role (`runvil run --model`). */
  override?: ModelChoice;
  /** Added to the refusal of a role no provider can serve (the command line's `--script` hint). */
  unconfiguredHint?: string;
}

/** Reads `provider` or `provider:model` (the model may hold colons: `llama3.1:8b`); a string is the problem. */
export function parseModelChoice(text: string): ModelChoice | string {
  const at = text.indexOf(':');
  const provider = (at < 0 ? text : text.slice(0, at)).trim();
  const model = at < 0 ? undefined : text.slice(at + 1).trim();
  if (!(PROVIDER_NAMES as readonly string[]).includes(provider)) {
    return `unknown model provider ${JSON.stringify(provider)} in ${JSON.stringify(text)}; the providers are openai, anthropic and workers-ai`;
  }
  if (model === '') return `${JSON.stringify(text)} names no model after the colon (write provider:model, such as openai:gpt-4o-mini)`;
  return model === undefined ? { provider: provider as ProviderName } : { provider: provider as ProviderName, model };
}

/** The Host's models: providers chosen by each role's config, keys from `env`, Workers AI from `bindings.ai`. */
export function modelDirectory(
  env: Record<string, string | undefined>,
  bindings: { ai?: AiBinding } = {},
  options: ModelDirectoryOptions = {},
): ModelDirectory {
  const read = (name: string) => (Object.hasOwn(env, name) ? env[name]?.trim() : undefined) || undefined;
  const openaiKey = read(MODEL_ENV.openaiKey);
  const anthropicKey = read(MODEL_ENV.anthropicKey);
  const openaiBase = read(MODEL_ENV.openaiBase) ?? OPENAI_BASE_URL;
  const anthropicBase = read(MODEL_ENV.anthropicBase) ?? ANTHROPIC_BASE_URL;
  const round = options.round ?? {};
  const providers: Record<ProviderName, ModelProvider | null> = {
    openai: openAiProvider({ baseUrl: openaiBase, round, ...(openaiKey ? { apiKey: openaiKey } : {}) }),
    anthropic: anthropicProvider({ baseUrl: anthropicBase, round, ...(anthropicKey ? { apiKey: anthropicKey } : {}) }),
    'workers-ai': bindings.ai
      ? workersAiProvider({
          binding: bindings.ai,
          ...(round.timeoutMs !== undefined ? { timeoutMs: round.timeoutMs } : {}),
          ...(round.idleMs !== undefined ? { idleMs: round.idleMs } : {}),
          ...(round.maxStreamBytes !== undefined ? { maxStreamBytes: round.maxStreamBytes } : {}),
        })
      : null,
  };
  const fallback = hostDefault(read(MODEL_ENV.defaultModel), { openai: !!openaiKey, anthropic: !!anthropicKey, 'workers-ai': !!bindings.ai });

  /** Why the provider cannot serve the config, or null when it can. */
  function missing(config: ModelConfig & { provider: ProviderName }, role: string): string | null {
    const uses = `role ${JSON.stringify(role)} uses ${config.provider}`;
    switch (config.provider) {
      case 'openai':
        // A server of one's own (Ollama, vLLM) needs no key; OpenAI itself does.
        return !openaiKey && sameOrigin(config.base_url ?? openaiBase, OPENAI_BASE_URL)
          ? `${uses}, which needs ${MODEL_ENV.openaiKey} in the Host's environment (or ${MODEL_ENV.openaiBase} for a compatible server that needs no key)`
          : null;
      case 'anthropic':
        return !anthropicKey && sameOrigin(config.base_url ?? anthropicBase, ANTHROPIC_BASE_URL)
          ? `${uses}, which needs ${MODEL_ENV.anthropicKey} in the Host's environment`
          : null;
      case 'workers-ai':
        return providers['workers-ai'] ? null : `${uses}, which needs the Workers AI binding (AI), and this Host has none`;
    }
  }

  return {
    provider(config, role) {
      const chosen = choose(options.override ? overridden(config, options.override) : config, fallback, role, options.unconfiguredHint);
      if (typeof chosen === 'string') return chosen;
      const problem = missing(chosen, role);
      if (problem) return options.unconfiguredHint ? `${problem}; ${options.unconfiguredHint}` : problem;
      const inner = providers[chosen.provider]!;
      return { round: (request, signal, onDelta) => inner.round({ ...request, config: chosen }, signal, onDelta) };
    },
  };
}

/** The Host's default: RUNVIL_DEFAULT_MODEL, else OpenAI, Anthropic, Workers AI by what is configured. */
function hostDefault(text: string | undefined, configured: Record<ProviderName, boolean>): ModelChoice | string | null {
  if (text !== undefined) {
    const choice = parseModelChoice(text);
    return typeof choice === 'string' ? `${MODEL_ENV.defaultModel}: ${choice}` : choice;
  }
  const provider = PROVIDER_NAMES.find((name) => configured[name]);
  return provider ? { provider } : null;
}

/** The role's config with the provider, model and default filled in; a string when there is none. */
function choose(
  config: ModelConfig,
  fallback: ModelChoice | string | null,
  role: string,
  hint?: string,
): (ModelConfig & { provider: ProviderName; model: string }) | string {
  if (config.provider === undefined) {
    if (typeof fallback === 'string') return fallback;
    if (fallback === null) {
      return (
        `no model provider is configured for role ${JSON.stringify(role)}: set ${MODEL_ENV.openaiKey} or ${MODEL_ENV.anthropicKey} in the environment ` +
        `(and ${MODEL_ENV.defaultModel}=provider:model to pick the model; for a server of your own that needs no key, such as Ollama, ` +
        `set ${MODEL_ENV.openaiBase} and ${MODEL_ENV.defaultModel}=openai:MODEL)${hint ? `; ${hint}` : ''}`
      );
    }
  }
  const provider = config.provider ?? (fallback as ModelChoice).provider;
  if (!(PROVIDER_NAMES as readonly string[]).includes(provider)) {
    return `role ${JSON.stringify(role)} asks for model provider ${JSON.stringify(provider)}; this Host knows openai, anthropic and workers-ai`;
  }
  const name = provider as ProviderName;
  const hostModel = typeof fallback === 'object' && fallback?.provider === name ? fallback.model : undefined;
  return { ...config, provider: name, model: config.model ?? hostModel ?? DEFAULT_MODELS[name] };
}

/** A config under `--model`: its provider and model replaced; its base_url kept only for the same provider. */
function overridden(config: ModelConfig, override: ModelChoice): ModelConfig {
  const same = config.provider === override.provider;
  const { base_url, model, ...rest } = config;
  return {
    ...rest,
    provider: override.provider,
    ...(override.model !== undefined ? { model: override.model } : same && model !== undefined ? { model } : {}),
    ...(same && base_url !== undefined ? { base_url } : {}),
  };
}
