import { describe, expect, it } from 'vitest';
import { NOTIFICATION_TYPES, resolveConfigValue } from '../../src/config/deployment-config.ts';
import { DEFAULT_TOOL_TIMEOUT_SECONDS, formatConfigProblem, parseDeploymentConfig } from '../../src/config/parse-config.ts';

/** The example of DESIGN.md, Part 2, whole. */
const DESIGN_EXAMPLE = `public_url: https://runvil.example.com
packs:
  everything/demo:
    description: The MCP reference server
    mcp:
      url: http://127.0.0.1:3001/mcp
      headers: { Authorization: "Bearer \${DEMO_MCP_TOKEN}" }
    trusted: false
  acme/deploy:
    http:
      url: https://deploy.example.com/runvil-tools
      secret: \${ACME_DEPLOY_SECRET}
    trusted: true
    tools:
      - name: start
        description: Start a deploy of a service and wait until it is live.
        parameters: { type: object, properties: { service: { type: string } }, required: [service] }
        output: plain
        timeout: 3600
notify:
  - url: https://chat-bridge.example.com/runvil
    secret: \${RUNVIL_NOTIFY_SECRET}
    events: [ask.created, ask.closed, run.completed, run.failed, run.cancelled]
    prompts: [intake]
`;

/** The problems of a file that must be refused, as printed. */
function problems(text: string): string[] {
  const outcome = parseDeploymentConfig(text);
  if (outcome.ok) throw new Error('the file was accepted');
  return outcome.problems.map((problem) => formatConfigProblem('runvil.yaml', problem));
}

function accepted(text: string) {
  const outcome = parseDeploymentConfig(text);
  if (!outcome.ok) throw new Error(outcome.problems.map((p) => formatConfigProblem('runvil.yaml', p)).join('\n'));
  return outcome.config;
}

describe('runvil.yaml', () => {
  it('reads the example of the design whole: packs in file order, sources, tools, notify', () => {
    const config = accepted(DESIGN_EXAMPLE);
    expect(config.publicUrl).toBe('https://runvil.example.com');
    expect([...config.packs.keys()]).toEqual(['everything/demo', 'acme/deploy']);
    const demo = config.packs.get('everything/demo')!;
    expect(demo).toMatchObject({ fqName: 'everything/demo', description: 'The MCP reference server', trusted: false });
    expect(demo.source.kind).toBe('mcp');
    if (demo.source.kind === 'mcp') {
      expect(demo.source.url).toBe('http://127.0.0.1:3001/mcp');
      expect([...demo.source.headers]).toEqual([['Authorization', 'Bearer ${DEMO_MCP_TOKEN}']]);
    }
    const deploy = config.packs.get('acme/deploy')!;
    expect(deploy.trusted).toBe(true);
    expect(deploy.source).toEqual({
      kind: 'http',
      url: 'https://deploy.example.com/runvil-tools',
      secret: '${ACME_DEPLOY_SECRET}',
      tools: [
        {
          name: 'start',
          description: 'Start a deploy of a service and wait until it is live.',
          parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          output: 'plain',
          timeoutSeconds: 3600,
        },
      ],
    });
    expect(config.notify).toHaveLength(1);
    expect(config.notify[0]!.url).toBe('https://chat-bridge.example.com/runvil');
    expect([...config.notify[0]!.events]).toEqual([...NOTIFICATION_TYPES]);
    expect([...config.notify[0]!.prompts!]).toEqual(['intake']);
  });

  it('gives the defaults: untrusted Packs, plain output, 900 s, every event and every prompt', () => {
    const config = accepted(`packs:
  acme/jobs:
    http: { url: https://jobs.example.com, secret: "\${JOBS_SECRET}" }
    tools: [{ name: run }]
  acme/mcp:
    mcp: { url: https://mcp.example.com/mcp }
notify:
  - { url: https://hook.example.com, secret: "\${HOOK}" }
`);
    const jobs = config.packs.get('acme/jobs')!;
    expect(jobs.trusted).toBe(false);
    expect(jobs.description).toBe('');
    expect(jobs.source.kind === 'http' && jobs.source.tools[0]).toEqual({
      name: 'run',
      description: '',
      parameters: { type: 'object', properties: {} },
      output: 'plain',
      timeoutSeconds: DEFAULT_TOOL_TIMEOUT_SECONDS,
    });
    expect(config.packs.get('acme/mcp')!.trusted).toBe(false);
    expect([...config.notify[0]!.events].sort()).toEqual([...NOTIFICATION_TYPES].sort());
    expect(config.notify[0]!.prompts).toBeNull();
    expect(config.publicUrl).toBeNull();
  });

  it('takes an empty file, or one of comments only, as a deployment with nothing configured', () => {
    for (const text of ['', '\n', '# nothing yet\n', '  # a\n# b']) {
      const config = accepted(text);
      expect(config.packs.size).toBe(0);
      expect(config.notify).toEqual([]);
    }
  });

  it('names an unknown key with its place, at any level', () => {
    expect(problems('colour: blue\n')).toEqual(['runvil.yaml:1:1: unknown key `colour` in runvil.yaml']);
    expect(problems('packs:\n  acme/x:\n    mcp: { url: https://x, header: {} }\n')).toEqual([
      'runvil.yaml:3:28: unknown key `header` in `packs["acme/x"].mcp`',
    ]);
    expect(problems('packs:\n  acme/x:\n    mcp: { url: https://x }\n    trust: true\n')).toEqual([
      'runvil.yaml:4:5: unknown key `trust` in `packs["acme/x"]`',
    ]);
    expect(problems('notify:\n  - url: https://x\n    secret: ${S}\n    event: [ask.created]\n')).toEqual([
      'runvil.yaml:4:5: unknown key `event` in `notify[0]`',
    ]);
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x, secret: "${S}" }\n    tools:\n      - name: a\n        timeout_seconds: 5\n')).toEqual([
      'runvil.yaml:6:9: unknown key `timeout_seconds` in `packs["acme/d"].tools[0]`',
    ]);
  });

  it('names a value of the wrong type and what it must be', () => {
    expect(problems('packs: [acme/x]\n')).toEqual(['runvil.yaml:1:8: `packs` must be a map of Pack name (vendor/name) to Pack']);
    expect(problems('packs:\n  acme/x:\n    mcp: { url: https://x }\n    trusted: yes please\n')).toEqual([
      'runvil.yaml:4:14: `packs["acme/x"].trusted` must be true or false',
    ]);
    expect(problems('packs:\n  acme/x:\n    mcp: { url: 3001 }\n')).toEqual(['runvil.yaml:3:17: `packs["acme/x"].mcp.url` must be a text']);
    expect(problems('notify: { url: https://x }\n')).toEqual(['runvil.yaml:1:9: `notify` must be a list of notification endpoints']);
    expect(problems('notify:\n  - { url: https://x, secret: "${S}", events: [run.started] }\n')).toEqual([
      'runvil.yaml:2:48: `notify[0].events[0]` must be one of ask.created, ask.closed, run.completed, run.failed, run.cancelled',
    ]);
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x, secret: "${S}" }\n    tools: [{ name: a, timeout: soon }]\n')).toEqual([
      'runvil.yaml:4:33: `packs["acme/d"].tools[0].timeout` must be a whole number of seconds from 1 to 2592000 (30 days)',
    ]);
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x, secret: "${S}" }\n    tools: [{ name: a, timeout: 0 }]\n')[0]).toContain(
      'timeout` must be a whole number',
    );
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x, secret: "${S}" }\n    tools: [{ name: a, output: json }]\n')).toEqual([
      'runvil.yaml:4:32: `packs["acme/d"].tools[0].output` must be plain or structured',
    ]);
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x, secret: "${S}" }\n    tools: [{ name: a, parameters: "{}" }]\n')[0]).toContain(
      '`packs["acme/d"].tools[0].parameters` must be a JSON Schema (a map)',
    );
  });

  it('reports a YAML syntax error at its place', () => {
    const [first] = problems('packs:\n  acme/x: { mcp: \n');
    expect(first).toMatch(/^runvil\.yaml:\d+:\d+: invalid YAML: /);
  });

  it('refuses a Pack name that is not vendor/name, at the name', () => {
    const pack = (name: string) => problems(`packs:\n  ${JSON.stringify(name)}:\n    mcp: { url: https://x }\n`);
    expect(pack('demo')).toEqual(["runvil.yaml:2:3: `packs.demo`: a Pack is named vendor/name, such as acme/deploy, with exactly one '/'"]);
    expect(pack('acme/x/y')[0]).toContain("with exactly one '/'");
    expect(pack('Acme/x')[0]).toContain("segments may contain only lowercase ASCII letters, digits, '-', '_', '.'");
    expect(pack('acme/')[0]).toContain('segments must not be empty');
    expect(pack('/x')[0]).toContain('segments must not be empty');
    expect(pack('acme/x\u0007')[0]).toContain('segments must not contain a control character');
    expect(pack('runvil/web')).toEqual([
      'runvil.yaml:2:3: `packs["runvil/web"]`: the vendor runvil is Runvil\'s own Packs\'; name a configured Pack with your own vendor, such as acme/web',
    ]);
  });

  it('needs exactly one of mcp and http in a Pack', () => {
    expect(problems('packs:\n  acme/x: { trusted: true }\n')).toEqual([
      'runvil.yaml:2:11: `packs["acme/x"]` needs `mcp` (an MCP server) or `http` (an HTTP tool service)',
    ]);
    expect(problems('packs:\n  acme/x:\n    mcp: { url: https://x }\n    http: { url: https://x, secret: "${S}" }\n    tools: [{ name: a }]\n')).toEqual([
      'runvil.yaml:4:11: `packs["acme/x"]` has both `mcp` and `http`: a Pack is served by one MCP server or one HTTP tool service',
    ]);
    expect(problems('packs:\n  acme/x: {}\n')[0]).toContain('needs `mcp` (an MCP server) or `http`');
  });

  it("takes an MCP Pack's timeout: (how long a call its server makes a task may wait), a whole number of seconds, and no http Pack's", () => {
    const pack = accepted('packs:\n  acme/x:\n    mcp: { url: https://x }\n    timeout: 600\n').packs.get('acme/x')!;
    expect(pack.source.kind === 'mcp' && pack.source.timeoutSeconds).toBe(600);
    const untimed = accepted('packs:\n  acme/x:\n    mcp: { url: https://x }\n').packs.get('acme/x')!;
    expect(untimed.source.kind === 'mcp' && untimed.source.timeoutSeconds).toBeUndefined();
    for (const bad of ['0', '-5', '1.5', '2592001', '"ten"'])
      expect(problems(`packs:\n  acme/x:\n    mcp: { url: https://x }\n    timeout: ${bad}\n`)[0]).toContain('packs["acme/x"].timeout');
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x, secret: "${S}" }\n    tools: [{ name: a }]\n    timeout: 60\n')).toEqual([
      "runvil.yaml:5:14: `packs[\"acme/d\"].timeout`: a Pack's `timeout` bounds an MCP server's tasks; an http Pack's tools each give their own `timeout`",
    ]);
  });

  it("takes an MCP Pack's pin:, the digest GET /packs shows, and refuses any other text or a pin on an http Pack", () => {
    const digest = `sha256:${'a1'.repeat(32)}`;
    const pack = accepted(`packs:\n  acme/x:\n    mcp: { url: https://x }\n    pin: ${digest}\n`).packs.get('acme/x')!;
    expect(pack.source.kind === 'mcp' && pack.source.pin).toBe(digest);
    expect(problems('packs:\n  acme/x:\n    mcp: { url: https://x }\n    pin: sha256:ABC\n')).toEqual([
      'runvil.yaml:4:10: `packs["acme/x"].pin`: a pin is the digest GET /packs shows for the Pack, sha256: and 64 hex digits, got "sha256:ABC"',
    ]);
    expect(problems(`packs:\n  acme/x:\n    mcp: { url: https://x }\n    pin: ${digest.toUpperCase()}\n`)[0]).toContain('a pin is the digest GET /packs shows');
    expect(problems('packs:\n  acme/x:\n    mcp: { url: https://x }\n    pin: 3\n')).toEqual([
      'runvil.yaml:4:10: `packs["acme/x"].pin` must be a digest of the MCP server\'s tools (sha256:...)',
    ]);
    expect(problems(`packs:\n  acme/d:\n    http: { url: https://x, secret: "\${S}" }\n    tools: [{ name: a }]\n    pin: ${digest}\n`)).toEqual([
      'runvil.yaml:5:10: `packs["acme/d"].pin`: `pin` fixes an MCP server\'s tool definitions; an http Pack\'s tools are the ones this file lists',
    ]);
  });

  it('refuses an http Pack without a secret, or without tools', () => {
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x }\n    tools: [{ name: a }]\n')).toEqual([
      'runvil.yaml:3:11: `packs["acme/d"].http` needs a `secret` (${NAME} of a whsec_... secret): an http Pack signs every call with it',
    ]);
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x, secret: "${S}" }\n')).toEqual([
      'runvil.yaml:3:5: `packs["acme/d"]` needs `tools`: an http Pack lists the tools its service performs',
    ]);
    expect(problems('packs:\n  acme/d:\n    http: { url: https://x, secret: "${S}" }\n    tools: []\n')[0]).toContain('needs `tools`');
    expect(problems('packs:\n  acme/d:\n    http: { secret: "${S}" }\n    tools: [{ name: a }]\n')).toEqual([
      'runvil.yaml:3:11: `packs["acme/d"].http` needs a `url`',
    ]);
  });

  it('refuses a secret written into the file: secrets come from the environment', () => {
    for (const secret of ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '"prefix-${S}"', '"${S}${T}"', '"$S"', '"${1S}"']) {
      const http = problems(`packs:\n  acme/d:\n    http: { url: https://x, secret: ${secret} }\n    tools: [{ name: a }]\n`);
      expect(http).toEqual([
        expect.stringContaining('`packs["acme/d"].http.secret` must name an environment variable, such as ${ACME_SECRET}: secrets never live in runvil.yaml'),
      ]);
      const notify = problems(`notify:\n  - { url: https://x, secret: ${secret} }\n`);
      expect(notify[0]).toContain('`notify[0].secret` must name an environment variable');
    }
    expect(problems('notify:\n  - { url: https://x }\n')).toEqual([
      'runvil.yaml:2:5: `notify[0]` needs a `secret` (${NAME} of a whsec_... secret): every delivery is signed with it',
    ]);
  });

  it('refuses structured output on an untrusted Pack, at the tool', () => {
    const text = (trusted: string) =>
      `packs:\n  acme/d:\n    http: { url: https://x, secret: "\${S}" }\n${trusted}    tools:\n      - name: stats\n        output: structured\n`;
    expect(problems(text(''))).toEqual([
      'runvil.yaml:6:17: `packs["acme/d"].tools[0].output`: structured output is for a trusted Pack\'s tools (add `trusted: true` to the Pack, or use plain)',
    ]);
    expect(problems(text('    trusted: false\n'))[0]).toContain('structured output is for a trusted Pack');
    const config = accepted(text('    trusted: true\n'));
    const source = config.packs.get('acme/d')!.source;
    expect(source.kind === 'http' && source.tools[0]!.output).toBe('structured');
  });

  it('refuses tool names the name grammar refuses, a missing name and a name given twice', () => {
    const tool = (tools: string) => problems(`packs:\n  acme/d:\n    http: { url: https://x, secret: "\${S}" }\n    tools: ${tools}\n`);
    expect(tool('[{ name: Start }]')[0]).toContain('`packs["acme/d"].tools[0].name`: "Start" is not a tool name: segments may contain only lowercase');
    expect(tool('[{ name: a/b }]')[0]).toContain('is not a tool name: a Pack id is one segment');
    expect(tool('[{ name: "" }]')[0]).toContain('segments must not be empty');
    expect(tool('[{ description: nameless }]')).toEqual(['runvil.yaml:4:13: `packs["acme/d"].tools[0]` needs a `name`']);
    expect(tool('[{ name: a }, { name: a }]')).toEqual(['runvil.yaml:4:34: `packs["acme/d"].tools[1].name`: a is listed twice']);
  });

  it('refuses tools on an MCP Pack: its server lists them', () => {
    expect(problems('packs:\n  acme/x:\n    mcp: { url: https://x }\n    tools: [{ name: a }]\n')).toEqual([
      'runvil.yaml:4:12: `packs["acme/x"]`: an MCP Pack\'s tools come from its server\'s tools/list; `tools` belongs to an `http` Pack',
    ]);
  });

  it('refuses URLs that are not http(s), or that carry credentials; checks ${NAME} ones when used', () => {
    const mcp = (url: string) => problems(`packs:\n  acme/x:\n    mcp: { url: ${JSON.stringify(url)} }\n`);
    expect(mcp('ftp://x/mcp')).toEqual(['runvil.yaml:3:17: `packs["acme/x"].mcp.url` must be an http or https URL, got ftp:']);
    expect(mcp('file:///etc/passwd')[0]).toContain('must be an http or https URL, got file:');
    expect(mcp('javascript:alert(1)')[0]).toContain('must be an http or https URL');
    expect(mcp('127.0.0.1:3001/mcp')[0]).toContain('is not a URL');
    expect(mcp('not a url')[0]).toContain('is not a URL: "not a url"');
    expect(mcp('https://user:pw@x/mcp')[0]).toContain('must not hold a user name or password');
    expect(accepted('packs:\n  acme/x:\n    mcp: { url: "${MCP_URL}" }\n').packs.size).toBe(1);
    expect(problems('notify:\n  - { url: "gopher://x", secret: "${S}" }\n')[0]).toContain('`notify[0].url` must be an http or https URL');
  });

  it('takes public_url as an origin only', () => {
    expect(accepted('public_url: https://runvil.example.com/\n').publicUrl).toBe('https://runvil.example.com/');
    expect(accepted('public_url: http://127.0.0.1:8787\n').publicUrl).toBe('http://127.0.0.1:8787');
    for (const url of ['https://runvil.example.com/base', 'https://runvil.example.com/?a=1', 'https://runvil.example.com/#x']) {
      expect(problems(`public_url: ${JSON.stringify(url)}\n`)).toEqual([
        'runvil.yaml:1:13: `public_url` must be an origin such as https://runvil.example.com, with no path, query or fragment',
      ]);
    }
  });

  it('refuses MCP headers that are not header names, or that the transport owns, or given twice', () => {
    const headers = (map: string) => problems(`packs:\n  acme/x:\n    mcp:\n      url: https://x\n      headers: ${map}\n`);
    expect(headers('{ "bad header": x }')).toEqual(['runvil.yaml:5:18: `packs["acme/x"].mcp.headers["bad header"]`: "bad header" is not an HTTP header name']);
    expect(headers('{ "X-A\\r\\nX-B": x }')[0]).toContain('is not an HTTP header name');
    for (const owned of ['Mcp-Session-Id', 'content-type', 'Accept', 'Host', 'mcp-protocol-version']) {
      expect(headers(`{ ${owned}: x }`)[0]).toContain(`the MCP transport sets ${owned} itself`);
    }
    expect(headers('{ X-Token: a, x-token: b }')[0]).toContain('header x-token is given twice');
  });

  it('checks notify prompts and event lists', () => {
    expect(problems('notify:\n  - { url: https://x, secret: "${S}", prompts: [Intake] }\n')).toEqual([
      'runvil.yaml:2:49: `notify[0].prompts[0]`: "Intake" is not a prompt name (lowercase letters, digits and \'-\')',
    ]);
    expect(problems('notify:\n  - { url: https://x, secret: "${S}", prompts: [] }\n')[0]).toContain('`notify[0].prompts` is empty');
    expect(problems('notify:\n  - { url: https://x, secret: "${S}", events: [] }\n')[0]).toContain('`notify[0].events` is empty');
    const config = accepted('notify:\n  - { url: https://x, secret: "${S}", events: [run.failed, run.failed] }\n');
    expect([...config.notify[0]!.events]).toEqual(['run.failed']);
  });

  it('reports every problem of a file, in file order', () => {
    const found = problems(`public_url: https://x/y
packs:
  demo:
    mcp: { url: https://x }
  acme/d:
    http: { url: https://x, secret: plain }
    tools: [{ name: a, output: structured }]
`);
    expect(found.map((line) => line.split(': ')[0])).toEqual(['runvil.yaml:1:13', 'runvil.yaml:3:3', 'runvil.yaml:6:37', 'runvil.yaml:7:32']);
  });

  it('does not let a key named like an Object property reach a prototype', () => {
    const config = accepted('packs:\n  acme/constructor:\n    mcp: { url: https://x }\n  __proto__/x:\n    mcp: { url: https://x }\n');
    expect([...config.packs.keys()]).toEqual(['acme/constructor', '__proto__/x']);
    expect(({} as Record<string, unknown>).mcp).toBeUndefined();
    expect(problems('packs:\n  __proto__:\n    mcp: { url: https://x }\n')[0]).toContain("with exactly one '/'");
  });
});

describe('${NAME} in runvil.yaml values', () => {
  it('reads each reference from the environment when the value is used', () => {
    expect(resolveConfigValue('Bearer ${TOKEN}', { TOKEN: 'abc' })).toEqual({ ok: true, value: 'Bearer abc' });
    expect(resolveConfigValue('${A}-${B}', { A: '1', B: '2' })).toEqual({ ok: true, value: '1-2' });
    expect(resolveConfigValue('no reference', {})).toEqual({ ok: true, value: 'no reference' });
  });

  it('names a missing variable, and does not take one from the prototype', () => {
    expect(resolveConfigValue('Bearer ${DEMO_MCP_TOKEN}', {})).toEqual({
      ok: false,
      error: { kind: 'MissingConfigVariable', name: 'DEMO_MCP_TOKEN', message: 'runvil.yaml needs the environment variable DEMO_MCP_TOKEN, which is not set' },
    });
    const outcome = resolveConfigValue('${toString}', {});
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error.name).toBe('toString');
  });
});
