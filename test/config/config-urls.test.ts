/**
 * A URL of runvil.yaml built from `${NAME}` is checked as a URL the file writes out is, once
 * its variables are read: a variable cannot bring in another scheme, credentials, or (for
 * `public_url`) a path. Each place a URL is read refuses it: an MCP Pack, an HTTP tool
 * service, a notify endpoint; and the message never quotes what the variable holds.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfigUrl } from '../../src/config/config-urls.ts';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import type { ConfiguredPack, HttpSource } from '../../src/config/deployment-config.ts';
import { mcpEndpoint } from '../../src/host/remote/mcp/mcp-pack.ts';
import { httpToolPack } from '../../src/host/remote/http/http-tool-pack.ts';

/** Values a variable may hold that the file's URL checks refuse, with what the refusal says. */
const SMUGGLED: [string, string][] = [
  ['ftp://files.example/mcp', 'must be an http or https URL, got ftp:'],
  ['file:///etc/passwd', 'must be an http or https URL, got file:'],
  ['javascript:alert(1)', 'must be an http or https URL, got javascript:'],
  ['data:text/html,<script>1</script>', 'must be an http or https URL, got data:'],
  ['gopher://127.0.0.1:6379/_FLUSHALL', 'must be an http or https URL, got gopher:'],
  ['ws://127.0.0.1:9229/', 'must be an http or https URL, got ws:'],
  ['https://admin:hunter2@internal.example/mcp', 'must not hold a user name or password (put credentials in headers, from ${NAME})'],
  ['https://admin@internal.example/mcp', 'must not hold a user name or password (put credentials in headers, from ${NAME})'],
  ['http://:hunter2@internal.example/', 'must not hold a user name or password (put credentials in headers, from ${NAME})'],
  ['//evil.example/mcp', 'is not a URL'],
  ['/runs/steal', 'is not a URL'],
  ['not a url at all', 'is not a URL'],
  ['', 'is not a URL'],
];

describe('a URL read from ${NAME}', () => {
  for (const [value, problem] of SMUGGLED) {
    it(`is refused when the variable holds ${JSON.stringify(value)}, without quoting it`, () => {
      const outcome = resolveConfigUrl('${SERVICE_URL}', { SERVICE_URL: value }, 'notify[0].url');
      expect(outcome).toEqual({
        ok: false,
        error: { kind: 'RefusedConfigUrl', message: `runvil.yaml's \`notify[0].url\`, once \${SERVICE_URL} is read, ${problem}` },
      });
      if (value.length > 4) expect(JSON.stringify(outcome)).not.toContain(value);
    });
  }

  it('is refused when a part of it, read from a variable, makes it one the file could not write', () => {
    const refused = (text: string, vars: Record<string, string>) => {
      const outcome = resolveConfigUrl(text, vars, 'packs["acme/x"].mcp.url');
      return outcome.ok ? null : outcome.error.message;
    };
    expect(refused('https://${HOST}/mcp', { HOST: 'user:pw@evil.example' })).toContain('mcp.url`, once ${HOST} is read, must not hold a user name or password');
    expect(refused('${SCHEME}://x/mcp', { SCHEME: 'file' })).toContain('once ${SCHEME} is read, must be an http or https URL, got file:');
    expect(refused('${A}${B}', { A: 'javascript', B: ':alert(1)' })).toContain('once ${A} and ${B} are read, must be an http or https URL');
    expect(refused('http${S}', { S: 's:\\\\' })).toContain('is not a URL');
  });

  it('is taken when the variable holds an http(s) URL', () => {
    expect(resolveConfigUrl('${U}', { U: 'https://mcp.example/mcp?x=1' }, 'u')).toEqual({ ok: true, value: 'https://mcp.example/mcp?x=1' });
    expect(resolveConfigUrl('http://127.0.0.1:${PORT}/mcp', { PORT: '3001' }, 'u')).toEqual({ ok: true, value: 'http://127.0.0.1:3001/mcp' });
  });

  it('names a variable that is not set, as any value does', () => {
    const outcome = resolveConfigUrl('${MCP_URL}', {}, 'u');
    expect(!outcome.ok && outcome.error).toMatchObject({ kind: 'MissingConfigVariable', name: 'MCP_URL' });
  });
});

describe('public_url read from ${NAME}', () => {
  it('must be an origin once read, as a written one must', () => {
    for (const value of [
      'https://runvil.example.com/base',
      'https://runvil.example.com/?a=1',
      'https://runvil.example.com/#x',
      'https://u:p@runvil.example.com',
    ]) {
      const outcome = resolveConfigUrl('${PUBLIC_URL}', { PUBLIC_URL: value }, 'public_url', 'origin');
      expect(outcome.ok).toBe(false);
    }
    expect(resolveConfigUrl('${PUBLIC_URL}', { PUBLIC_URL: 'https://runvil.example.com' }, 'public_url', 'origin')).toEqual({
      ok: true,
      value: 'https://runvil.example.com',
    });
  });
});

describe('each place runvil.yaml gives a URL, once its variables are read', () => {
  const vars = { SERVICE_URL: 'file:///etc/passwd', SERVICE_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };

  it('an MCP Pack has no endpoint: the Pack cannot serve, saying why', () => {
    const outcome = parseDeploymentConfig('packs:\n  acme/x:\n    mcp: { url: "${SERVICE_URL}" }\n');
    const pack = outcome.ok ? outcome.config.packs.get('acme/x')! : null;
    const endpoint = mcpEndpoint('acme/x', pack!.source as Extract<ConfiguredPack['source'], { kind: 'mcp' }>, vars);
    expect(endpoint).toEqual({
      ok: false,
      message: 'runvil.yaml\'s `packs["acme/x"].mcp.url`, once ${SERVICE_URL} is read, must be an http or https URL, got file:',
    });
  });

  it('an HTTP tool service is unavailable, and a call sends nothing', async () => {
    const outcome = parseDeploymentConfig(
      'packs:\n  acme/d:\n    http: { url: "${SERVICE_URL}", secret: "${SERVICE_SECRET}" }\n    tools: [{ name: start }]\n',
    );
    const config = (outcome.ok ? outcome.config.packs.get('acme/d') : null) as ConfiguredPack & { source: HttpSource };
    const sent: string[] = [];
    const pack = httpToolPack(config, { vars, fetch: async (input) => (sent.push(String(input)), new Response('{}')) });
    expect(pack.unavailableReason?.(new Map())).toBe(
      'runvil.yaml\'s `packs["acme/d"].http.url`, once ${SERVICE_URL} is read, must be an http or https URL, got file:',
    );
    expect(sent).toEqual([]);
  });
});
