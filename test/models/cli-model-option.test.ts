import { afterEach, describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../src/cli/args.ts';
import { cli, promptText, tempDir } from '../cli/helpers.ts';
import { modelServer, type ModelServer } from './helpers.ts';

let server: ModelServer | undefined;
let dir: Awaited<ReturnType<typeof tempDir>> | undefined;
afterEach(async () => {
  await server?.close();
  await dir?.cleanup();
  server = dir = undefined;
});

const usage = (argv: string[]) => {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('expected a usage error');
};

describe('runvil run --model', () => {
  it('reads provider:MODEL', () => {
    expect(parseCommandLine(['run', 'p.md', '--model', 'openai:llama3.1:8b'])).toMatchObject({ model: { provider: 'openai', model: 'llama3.1:8b' } });
  });

  it('refuses an unknown provider, and --script beside it', () => {
    expect(usage(['run', 'p.md', '--model', 'gemini:pro'])).toBe(
      '--model: unknown model provider "gemini" in "gemini:pro"; the providers are openai, anthropic and workers-ai',
    );
    expect(usage(['run', 'p.md', '--model', 'openai:x', '--script', 's.yaml'])).toBe(
      '--model and --script do not go together: --script answers every model round from its file',
    );
  });

  it("sends every role's rounds to the model it names, with the environment's key and base address", async () => {
    server = await modelServer([{ json: { choices: [{ message: { content: 'hello from the server' } }], usage: { prompt_tokens: 3, completion_tokens: 4 } } }]);
    dir = await tempDir({ 'ask.md': promptText('## Ask\nSay hi.\n', 'models:\n  writer: { provider: anthropic, model: claude-x }\n') });
    const result = await cli(['run', dir.path('ask.md'), '--model', 'openai:gpt-cli', '--quiet'], {
      env: { OPENAI_API_KEY: 'sk-cli', OPENAI_BASE_URL: server.url },
    });
    expect(result).toEqual({ status: 0, stdout: 'hello from the server\n', stderr: '' });
    expect(server.bodies()).toEqual([{ model: 'gpt-cli', messages: [{ role: 'user', content: 'Say hi.' }] }]);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-cli');
  });

  it('uses RUNVIL_DEFAULT_MODEL for a prompt without models:, and prints a Model error as error[Model]', async () => {
    server = await modelServer([{ status: 404, json: { error: { message: 'model not found' } } }]);
    dir = await tempDir({ 'ask.md': promptText('## Ask\nSay hi.\n') });
    const result = await cli(['run', dir.path('ask.md')], { env: { OPENAI_BASE_URL: server.url, RUNVIL_DEFAULT_MODEL: 'openai:nope' } });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `error[Model]: openai: the model "nope" or the address ${server.url}/chat/completions is unknown (HTTP 404): {"error":{"message":"model not found"}}\n`,
    );
  });
});
