/**
 * Resources served by prompts (runvil.yaml's `mcp.resources`): listed, read by running the
 * prompt (a template's variables as its args, a base64 result as a blob), each behind its
 * prompt's start scope; and subscriptions in a 2025-11-25 session, with a run's file
 * updated when its run ends. An attacker's URIs (undeclared, dot segments, huge variables,
 * another scheme's look-alikes) read nothing and run nothing.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, json } from './app/client.ts';
import { replaceDeploymentConfig } from '../../src/worker/deployment/deployment.ts';
import { parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { mcpClient, type Era } from './mcp/mcp-client.ts';

const prompt = (name: string, body: string, args = '') =>
  `---\nname: ${name}\ndescription: A resource of the tests.\nrunvil: 0\n${args}---\n# ${name}\n\n\`\`\`lua\n${body}\n\`\`\`\n`;

const PROMPTS: Record<string, string> = {
  'res-handbook': prompt('res-handbook', "return 'The handbook.'"),
  'res-report': prompt(
    'res-report',
    'return json.encode({ day = args.day, lines = args.lines })',
    'args:\n  day: { type: string }\n  lines: { type: integer, default: 3 }\n',
  ),
  'res-pixel': prompt('res-pixel', "return 'iVBORw0KGgo='"),
  'res-not-base64': prompt('res-not-base64', "return 'this is not base64!'"),
  'res-fails': prompt('res-fails', "error('the report source is down')"),
  'res-asks': prompt('res-asks', "return tools.call('user-input/ask', { question = 'Which?' })", 'uses: [user-input]\n'),
  'res-one-ask': prompt(
    'res-one-ask',
    "local answer = tools.call('user-input/ask', { question = 'Note?' })\nstore.write('note.txt', answer)\nreturn answer",
    'uses: [user-input]\n',
  ),
};

const CONFIG = `mcp:
  resources:
    docs://handbook: { prompt: res-handbook, description: The handbook }
    reports://{day}/summary: { prompt: res-report, mime_type: application/json }
    reports://{day}/lines/{lines}: { prompt: res-report, mime_type: application/json }
    img://pixel: { prompt: res-pixel, mime_type: image/png, encoding: base64 }
    img://broken: { prompt: res-not-base64, mime_type: image/png, encoding: base64 }
    docs://failing: { prompt: res-fails }
    docs://asking: { prompt: res-asks }
`;

function useConfig(text: string): void {
  const outcome = parseDeploymentConfig(text);
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
  replaceDeploymentConfig(outcome.config);
}

beforeAll(async () => {
  for (const [name, source] of Object.entries(PROMPTS)) await json(await call('PUT', `/prompts/${name}`, { body: source }), 201);
});

afterEach(() => replaceDeploymentConfig(null));

/** The runs of `prompt` so far. */
async function runsOf(name: string): Promise<number> {
  const { runs } = await json<{ runs: { prompt: string }[] }>(await call('GET', `/runs?prompt=${name}&limit=100`), 200);
  return runs.length;
}

describe.each<Era>(['modern', 'legacy'])('resources served by prompts, to a %s caller', (era) => {
  it('lists the fixed resources and the templates runvil.yaml declares', async () => {
    useConfig(CONFIG);
    const client = await mcpClient(era);
    const { resources } = await client.listResources();
    expect(resources.slice(0, 5)).toEqual([
      { uri: 'docs://handbook', name: 'res-handbook', description: 'The handbook', mimeType: 'text/plain' },
      { uri: 'img://pixel', name: 'res-pixel', mimeType: 'image/png' },
      { uri: 'img://broken', name: 'res-not-base64', mimeType: 'image/png' },
      { uri: 'docs://failing', name: 'res-fails', mimeType: 'text/plain' },
      { uri: 'docs://asking', name: 'res-asks', mimeType: 'text/plain' },
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual([
      'reports://{day}/summary',
      'reports://{day}/lines/{lines}',
      'runvil://runs/{run_id}/files/{+path}',
    ]);
    await client.close();
  });

  it("reads a resource by running its prompt: text, a template's variables as args, base64 as a blob", async () => {
    useConfig(CONFIG);
    const client = await mcpClient(era);
    expect((await client.readResource({ uri: 'docs://handbook' })).contents).toEqual([
      { uri: 'docs://handbook', mimeType: 'text/plain', text: 'The handbook.' },
    ]);
    expect((await client.readResource({ uri: 'reports://2026-12-03/summary' })).contents).toEqual([
      { uri: 'reports://2026-12-03/summary', mimeType: 'application/json', text: '{"day":"2026-12-03","lines":3}' },
    ]);
    // A variable is percent-decoded, and coerced by the arg's type as a command line's would be.
    expect((await client.readResource({ uri: 'reports://a%20b%2Fc/lines/7' })).contents).toEqual([
      { uri: 'reports://a%20b%2Fc/lines/7', mimeType: 'application/json', text: '{"day":"a b/c","lines":7}' },
    ]);
    expect((await client.readResource({ uri: 'img://pixel' })).contents).toEqual([{ uri: 'img://pixel', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }]);
    await client.close();
  });

  it('says why a resource could not be read: the run failed, waits, answers no base64, or a variable does not fit the arg', async () => {
    useConfig(CONFIG);
    const client = await mcpClient(era);
    await expect(client.readResource({ uri: 'docs://failing' })).rejects.toThrow(
      /docs:\/\/failing could not be read: its run [0-9a-f]{64} failed: .*the report source is down/,
    );
    await expect(client.readResource({ uri: 'docs://asking' })).rejects.toThrow(/its run [0-9a-f]{64} is suspended \(it waits on something/);
    await expect(client.readResource({ uri: 'img://broken' })).rejects.toThrow(/not base64 \(encoding: base64\)/);
    await expect(client.readResource({ uri: 'reports://x/lines/many' })).rejects.toThrow(/lines takes an integer/);
    await client.close();
  });
});

describe('an attacker reading resources', () => {
  it.each([
    ['a URI no resource declares', 'docs://secrets'],
    ['a declared URI with a suffix', 'docs://handbook/../../etc'],
    ['a dot segment for a variable', 'reports://../summary'],
    ['an encoded dot segment', 'reports://%2e%2e/summary'],
    ['a variable spanning segments', 'reports://a/b/summary'],
    ['a variable past the bound', `reports://${'x'.repeat(5000)}/summary`],
    ['a variable of broken percent-encoding', 'reports://%E0%A4%A/summary'],
    ['the template itself', 'reports://{day}/summary'],
    ['the declared URI in another case', 'DOCS://handbook'],
    ['an empty URI', ''],
  ])('reads nothing and starts no run for %s', async (_, uri) => {
    useConfig(CONFIG);
    const before = await runsOf('res-report');
    const client = await mcpClient('modern');
    await expect(client.readResource({ uri })).rejects.toThrow();
    await client.close();
    expect(await runsOf('res-report')).toBe(before);
  });

  it("sees and reads only the resources whose prompt its key may run, and no run's files without runs:read", async () => {
    useConfig(CONFIG);
    const created = await json<{ key: string }>(await call('POST', '/keys', { body: { name: 'handbook-reader', scopes: ['runs:start:res-handbook'] } }), 201);
    const client = await mcpClient('modern', { token: created.key });
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual(['docs://handbook']);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await client.readResource({ uri: 'docs://handbook' })).contents).toHaveLength(1);
    await expect(client.readResource({ uri: 'reports://1/summary' })).rejects.toThrow(/runs:start:res-report/);
    await expect(client.readResource({ uri: `runvil://runs/${'0'.repeat(64)}/files/a.txt` })).rejects.toThrow(/runs:read/);
    await client.close();
  });
});

describe('subscriptions', () => {
  it('a session subscribes to a declared resource and unsubscribes; an unknown URI is not found', async () => {
    useConfig(CONFIG);
    const client = await mcpClient('legacy');
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    await expect(client.subscribeResource({ uri: 'docs://handbook' })).resolves.toEqual({});
    await expect(client.subscribeResource({ uri: 'reports://2026/summary' })).resolves.toEqual({});
    await expect(client.unsubscribeResource({ uri: 'docs://handbook' })).resolves.toEqual({});
    for (const uri of ['docs://secrets', 'reports://../summary', `runvil://runs/${'0'.repeat(64)}/files/a.txt`, 'runvil://runs/x/files/a.txt'])
      await expect(client.subscribeResource({ uri })).rejects.toThrow(/not found/i);
    await client.close();
  });

  it("a session subscribed to a run's file hears that it was updated when the run ends", async () => {
    const started = await json<{ run_id: string }>(await call('POST', '/prompts/res-one-ask/runs', { body: { args: {} } }), 202);
    const uri = `runvil://runs/${started.run_id}/files/note.txt`;
    const client = await mcpClient('legacy');
    const updated = new Promise<string>((resolve) =>
      client.setNotificationHandler('notifications/resources/updated', (notification) => resolve(notification.params.uri)),
    );
    await client.subscribeResource({ uri });
    await json(await call('POST', `/runs/${started.run_id}/asks/0-1?wait=30`, { body: { answer: 'ship it' } }), 200);
    expect(await updated).toBe(uri);
    expect((await client.readResource({ uri })).contents).toEqual([{ uri, mimeType: 'text/plain', text: 'ship it' }]);
    await client.close();
  });

  it('a 2026-07-28 caller has no resources/subscribe (the protocol has no session to send updates on)', async () => {
    useConfig(CONFIG);
    const client = await mcpClient('modern');
    await expect(client.subscribeResource({ uri: 'docs://handbook' })).rejects.toThrow(/not supported by the negotiated protocol version/);
    await client.close();
  });
});
