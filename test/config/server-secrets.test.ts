/**
 * runvil.yaml may not name the server's own secrets as `${NAME}`: the file says where
 * requests go, so such a reference would send the API token, the ask secret, a webhook's
 * signing secret or a provider's key to whatever endpoint the file names. Refused at the
 * value's line and column, naming the variable, wherever a value is read from the
 * environment; and refused again when a value is read, for a configuration not read from a
 * checked file.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfigValue } from '../../src/config/deployment-config.ts';
import { formatConfigProblem, parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { SERVER_SECRET_NAMES, serverSecretOf } from '../../src/config/server-secrets.ts';
import { MODEL_ENV } from '../../src/models/directory.ts';
import { BRAVE_SEARCH_API_KEY, TAVILY_API_KEY } from '../../packs/web/providers/index.ts';

function problems(text: string): string[] {
  const outcome = parseDeploymentConfig(text);
  if (outcome.ok) throw new Error(`the file was accepted:\n${text}`);
  return outcome.problems.map((problem) => formatConfigProblem('runvil.yaml', problem));
}

/** Every secret the server reads: its fixed names and two prompts' webhook secrets. */
const SECRETS = [...SERVER_SECRET_NAMES, 'RUNVIL_WEBHOOK_SECRET_GREET', 'RUNVIL_WEBHOOK_SECRET_INTAKE_2'];

/** Each place runvil.yaml reads `${NAME}` from the environment, with the line and column of the value. */
const PLACES: [string, (ref: string) => string, string, string][] = [
  [
    'an MCP header',
    (ref) => `packs:\n  acme/x:\n    mcp:\n      url: https://x\n      headers: { Authorization: "Bearer ${ref}" }\n`,
    '5:33',
    '`packs["acme/x"].mcp.headers.Authorization`',
  ],
  ['an MCP URL', (ref) => `packs:\n  acme/x:\n    mcp: { url: "https://x/mcp?key=${ref}" }\n`, '3:17', '`packs["acme/x"].mcp.url`'],
  [
    "an http Pack's URL",
    (ref) => `packs:\n  acme/d:\n    http: { url: "https://x/${ref}", secret: "\${ACME}" }\n    tools: [{ name: a }]\n`,
    '3:18',
    '`packs["acme/d"].http.url`',
  ],
  [
    "an http Pack's secret",
    (ref) => `packs:\n  acme/d:\n    http: { url: https://x, secret: "${ref}" }\n    tools: [{ name: a }]\n`,
    '3:37',
    '`packs["acme/d"].http.secret`',
  ],
  ["a notify entry's URL", (ref) => `notify:\n  - { url: "https://x/?t=${ref}", secret: "\${S}" }\n`, '2:12', '`notify[0].url`'],
  ["a notify entry's secret", (ref) => `notify:\n  - { url: https://x, secret: "${ref}" }\n`, '2:31', '`notify[0].secret`'],
  ['public_url', (ref) => `public_url: "${ref}"\n`, '1:13', '`public_url`'],
];

describe("runvil.yaml naming one of the server's own secrets", () => {
  for (const name of SECRETS) {
    it(`refuses \${${name}} in every place a value is read, at the value, naming it`, () => {
      for (const [, file, place, key] of PLACES) {
        const found = problems(file(`\${${name}}`));
        expect(found).toEqual([
          expect.stringMatching(
            new RegExp(`^runvil\\.yaml:${place}: ${key.replace(/[[\]."()]/g, '\\$&')}: \\$\\{${name}\\} is .*one of the server's own secrets`),
          ),
        ]);
        expect(found[0]).toContain('runvil.yaml may not send it anywhere; give the service a secret of its own');
      }
    });
  }

  it('says what each secret is', () => {
    expect(problems('packs:\n  acme/x:\n    mcp:\n      url: https://x\n      headers: { Authorization: "Bearer ${RUNVIL_API_TOKEN}" }\n')).toEqual([
      'runvil.yaml:5:33: `packs["acme/x"].mcp.headers.Authorization`: ${RUNVIL_API_TOKEN} is the API token, one of the server\'s own secrets: runvil.yaml may not send it anywhere; give the service a secret of its own',
    ]);
    expect(serverSecretOf('RUNVIL_ASK_SECRET')).toBe('the secret ask answer tokens are derived from');
    expect(serverSecretOf('RUNVIL_WEBHOOK_SECRET_GREET')).toBe("a webhook's signing secret");
  });

  it('refuses a secret however its name is cased, hidden among other references, or named twice', () => {
    const header = (value: string) => problems(`packs:\n  acme/x:\n    mcp:\n      url: https://x\n      headers: { X-Key: "${value}" }\n`);
    expect(header('${runvil_api_token}')[0]).toContain("${runvil_api_token} is the API token, one of the server's own secrets");
    expect(header('${Openai_Api_Key}')[0]).toContain("${Openai_Api_Key} is the OpenAI provider's key");
    expect(header('${MINE}-${RUNVIL_ASK_SECRET}-${ALSO_MINE}')[0]).toContain('${RUNVIL_ASK_SECRET} is the secret ask answer tokens are derived from');
    expect(header('${TAVILY_API_KEY}${BRAVE_SEARCH_API_KEY}')).toHaveLength(2);
  });

  it('reports the secret beside the other problems of the same file, in file order', () => {
    const found = problems(`packs:
  acme/x:
    mcp:
      url: https://x
      headers: { Authorization: "Bearer \${RUNVIL_API_TOKEN}" }
notify:
  - { url: https://x, secret: "\${RUNVIL_WEBHOOK_SECRET_GREET}" }
`);
    expect(found.map((line) => line.split(': ')[0])).toEqual(['runvil.yaml:5:33', 'runvil.yaml:7:31']);
  });

  it("takes the deployment's own variables, even ones that look like the server's", () => {
    for (const name of ['DEMO_MCP_TOKEN', 'RUNVIL_NOTIFY_SECRET', 'RUNVIL_API_TOKEN_FOR_DEMO', 'MY_OPENAI_API_KEY', 'ACME_WEBHOOK_SECRET']) {
      const outcome = parseDeploymentConfig(`packs:\n  acme/x:\n    mcp:\n      url: https://x\n      headers: { Authorization: "Bearer \${${name}}" }\n`);
      expect(outcome.ok).toBe(true);
    }
  });

  it('leaves text that is not read from the environment alone (a description)', () => {
    expect(parseDeploymentConfig('packs:\n  acme/x:\n    description: "needs ${RUNVIL_API_TOKEN}"\n    mcp: { url: https://x }\n').ok).toBe(true);
  });

  it('covers every key the server reads as a secret', () => {
    for (const name of [MODEL_ENV.openaiKey, MODEL_ENV.anthropicKey, BRAVE_SEARCH_API_KEY, TAVILY_API_KEY, 'RUNVIL_API_TOKEN', 'RUNVIL_ASK_SECRET']) {
      expect(serverSecretOf(name)).not.toBeNull();
    }
  });
});

describe("a value read from the environment that names one of the server's own secrets", () => {
  it('is refused when read, and the secret is not read', () => {
    for (const name of SECRETS) {
      const outcome = resolveConfigValue(`Bearer \${${name}}`, { [name]: 'the-real-secret' });
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && outcome.error.kind).toBe('ServerSecretInConfig');
      expect(!outcome.ok && outcome.error.message).toContain(`\${${name}}`);
      expect(JSON.stringify(outcome)).not.toContain('the-real-secret');
    }
  });
});
