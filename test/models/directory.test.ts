import { describe, expect, it } from 'vitest';
import { modelDirectory, parseModelChoice, type ModelDirectoryOptions } from '../../src/models/directory.ts';
import type { AiBinding } from '../../src/models/workers-ai.ts';
import type { ModelConfig } from '../../src/prompt/types.ts';
import { fastRounds, loopPrompt, modelServer, runLoop } from './helpers.ts';

/** A transport that answers every POST with a reply both HTTP formats read, and records where it went. */
function recordingFetch() {
  const sent: { url: string; headers: Record<string, string>; body: Record<string, unknown> }[] = [];
  const transport = async (input: string | URL | Request, init?: RequestInit) => {
    sent.push({ url: String(input), headers: init?.headers as Record<string, string>, body: JSON.parse(String(init?.body)) as Record<string, unknown> });
    return new Response(JSON.stringify({ choices: [{ message: { content: 'ok' } }], content: [{ type: 'text', text: 'ok' }] }));
  };
  return { sent, transport: transport as typeof fetch };
}

const noAi: AiBinding = { run: async () => ({ response: 'from workers ai' }) };

/** Where a role's round goes: `provider model-name url`, or the refusal. */
async function destination(env: Record<string, string>, config: ModelConfig, options: ModelDirectoryOptions & { ai?: AiBinding } = {}) {
  const { sent, transport } = recordingFetch();
  const directory = modelDirectory(env, options.ai ? { ai: options.ai } : {}, { ...options, round: fastRounds({ fetch: transport }) });
  const provider = directory.provider(config, 'writer');
  if (typeof provider === 'string') return provider;
  const outcome = await provider.round({ role: 'writer', config, messages: [{ role: 'user', content: 'x' }], tools: null });
  if (!outcome.ok) return outcome.message;
  const request = sent[0];
  return request ? `${String(request.body.model)} ${request.url}` : `workers-ai ${outcome.reply.content}`;
}

describe("a role's {} config", () => {
  it('is RUNVIL_DEFAULT_MODEL when the environment names one', async () => {
    const env = { OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a', RUNVIL_DEFAULT_MODEL: 'anthropic:claude-x' };
    expect(await destination(env, {})).toBe('claude-x https://api.anthropic.com/v1/messages');
  });

  it("is OpenAI's default model when OPENAI_API_KEY is set", async () => {
    expect(await destination({ OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' }, {})).toBe('gpt-4o-mini https://api.openai.com/v1/chat/completions');
  });

  it("is Anthropic's default model when only ANTHROPIC_API_KEY is set", async () => {
    expect(await destination({ ANTHROPIC_API_KEY: 'a' }, {})).toBe('claude-haiku-4-5 https://api.anthropic.com/v1/messages');
  });

  it('is Workers AI when the Host has only the binding', async () => {
    expect(await destination({}, {}, { ai: noAi })).toBe('workers-ai from workers ai');
  });

  it('is refused, naming the environment variables, when nothing is configured', async () => {
    expect(await destination({}, {}, { unconfiguredHint: 'or use a script' })).toBe(
      'no model provider is configured for role "writer": set OPENAI_API_KEY or ANTHROPIC_API_KEY in the environment (and RUNVIL_DEFAULT_MODEL=provider:model to pick the model; for a server of your own that needs no key, such as Ollama, set OPENAI_BASE_URL and RUNVIL_DEFAULT_MODEL=openai:MODEL); or use a script',
    );
  });

  it('is refused when RUNVIL_DEFAULT_MODEL does not read', async () => {
    expect(await destination({ OPENAI_API_KEY: 'o', RUNVIL_DEFAULT_MODEL: 'gemini:pro' }, {})).toBe(
      'RUNVIL_DEFAULT_MODEL: unknown model provider "gemini" in "gemini:pro"; the providers are openai, anthropic and workers-ai',
    );
  });
});

describe("a role's config that names a provider or a model", () => {
  it('keeps its own model over the default one', async () => {
    expect(await destination({ OPENAI_API_KEY: 'o', RUNVIL_DEFAULT_MODEL: 'openai:gpt-a' }, { model: 'gpt-b' })).toBe(
      'gpt-b https://api.openai.com/v1/chat/completions',
    );
  });

  it("takes the Host's default model when it names the default's provider", async () => {
    expect(await destination({ OPENAI_API_KEY: 'o', RUNVIL_DEFAULT_MODEL: 'openai:gpt-a' }, { provider: 'openai' })).toBe(
      'gpt-a https://api.openai.com/v1/chat/completions',
    );
  });

  it("takes its provider's default model when it names another provider", async () => {
    expect(await destination({ OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a', RUNVIL_DEFAULT_MODEL: 'openai:gpt-a' }, { provider: 'anthropic' })).toBe(
      'claude-haiku-4-5 https://api.anthropic.com/v1/messages',
    );
  });

  it('is refused for a provider this Host does not know', async () => {
    expect(await destination({ OPENAI_API_KEY: 'o' }, { provider: 'gemini' })).toBe(
      'role "writer" asks for model provider "gemini"; this Host knows openai, anthropic and workers-ai',
    );
  });

  it('is refused for openai without a key, unless a base address points at a server of its own', async () => {
    expect(await destination({}, { provider: 'openai' })).toBe(
      'role "writer" uses openai, which needs OPENAI_API_KEY in the Host\'s environment (or OPENAI_BASE_URL for a compatible server that needs no key)',
    );
    expect(await destination({}, { provider: 'openai', model: 'llama3.1:8b', base_url: 'http://localhost:11434/v1/' })).toBe(
      'llama3.1:8b http://localhost:11434/v1/chat/completions',
    );
    expect(await destination({ OPENAI_BASE_URL: 'http://vllm:8000/v1' }, { provider: 'openai' })).toBe('gpt-4o-mini http://vllm:8000/v1/chat/completions');
  });

  it('is refused for workers-ai on a Host without the binding', async () => {
    expect(await destination({ OPENAI_API_KEY: 'o' }, { provider: 'workers-ai' })).toBe(
      'role "writer" uses workers-ai, which needs the Workers AI binding (AI), and this Host has none',
    );
  });
});

describe('the override of every role (runvil run --model)', () => {
  it('replaces the provider and the model, and drops a base_url meant for another provider', async () => {
    const env = { OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' };
    const config = { provider: 'openai', model: 'gpt-b', base_url: 'http://proxy/v1', temperature: 0.3 };
    expect(await destination(env, config, { override: { provider: 'anthropic', model: 'claude-y' } })).toBe('claude-y https://api.anthropic.com/v1/messages');
    expect(await destination(env, config, { override: { provider: 'openai', model: 'gpt-c' } })).toBe('gpt-c http://proxy/v1/chat/completions');
    expect(await destination(env, {}, { override: { provider: 'openai' } })).toBe('gpt-4o-mini https://api.openai.com/v1/chat/completions');
  });
});

describe('a model choice as text', () => {
  it('reads provider and provider:model, the model keeping its own colons', () => {
    expect(parseModelChoice('openai:llama3.1:8b')).toEqual({ provider: 'openai', model: 'llama3.1:8b' });
    expect(parseModelChoice('workers-ai:@cf/meta/llama-3.1-8b-instruct')).toEqual({ provider: 'workers-ai', model: '@cf/meta/llama-3.1-8b-instruct' });
    expect(parseModelChoice('anthropic')).toEqual({ provider: 'anthropic' });
  });

  it('refuses an unknown provider and an empty model', () => {
    expect(parseModelChoice('gpt-4o')).toBe('unknown model provider "gpt-4o" in "gpt-4o"; the providers are openai, anthropic and workers-ai');
    expect(parseModelChoice('openai:')).toBe('"openai:" names no model after the colon (write provider:model, such as openai:gpt-4o-mini)');
  });
});

describe('the journal of a round', () => {
  it('does not depend on the model the directory chose, so a run replays under another choice', async () => {
    const server = await modelServer([{ json: { choices: [{ message: { content: 'done' } }] } }]);
    try {
      const models = modelDirectory(
        { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: server.url },
        {},
        { round: fastRounds(), override: { provider: 'openai', model: 'gpt-cli' } },
      );
      const first = await runLoop(loopPrompt('{ provider: anthropic }'), models);
      expect(first.outcome).toMatchObject({ status: 'completed', result: 'done' });
      expect(server.bodies()[0]).toMatchObject({ model: 'gpt-cli' });
      const replayed = await runLoop(loopPrompt('{ provider: anthropic }'), modelDirectory({}), { journal: first.outcome.journal });
      expect(replayed.outcome).toMatchObject({ status: 'completed', result: 'done' });
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
