import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, tempDir } from './helpers.ts';

/** A prompt named `name` whose frontmatter declares `args` (YAML under `args:`). */
function prompt(name: string, args: string[] = []): string {
  const declared = args.length === 0 ? '' : `args:\n${args.map((line) => `  ${line}\n`).join('')}`;
  return `---\nname: ${name}\ndescription: d\nrunvil: 0\n${declared}---\n# T\n\n## A\nhi\n`;
}

const TRIAGE = prompt('triage', ['title: { type: string }', 'body: { type: string, default: "" }', 'repo: { type: string }']);
const PAYLOAD = prompt('on-payload', ['payload: { type: json }', 'note: { type: string, default: none }']);

/** A runvil.yaml whose triggers are `body` (indented under `triggers:`). */
function config(body: string): string {
  return `triggers:\n${body}`;
}

const GH = `  gh-issues:
    prompt: triage
    from: github
    secret: \${GITHUB_WEBHOOK_SECRET}
    events: [issues.opened]
    args:
      title: $.issue.title
      body: $.issue.body
      repo: $.repository.full_name
`;

let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir({
    'deploy/runvil.yaml': config(GH),
    'deploy/prompts/triage.md': TRIAGE,
    'deploy/prompts/on-payload.md': PAYLOAD,
    'deploy/prompts/renamed.md': prompt('other-name'),
    'deploy/prompts/broken.md': '# no frontmatter\n',
    'elsewhere/triage.md': prompt('triage', ['title: { type: string }']),
    'elsewhere/uploaded.md': prompt('uploaded', ['payload: { type: json }']),
  });
});
afterAll(() => dir.cleanup());

/** Writes `deploy/<name>` and runs `runvil check` on it and `prompts`. */
async function check(name: string, text: string, ...prompts: string[]) {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(dir.path(`deploy/${name}`), text);
  const file = dir.path(`deploy/${name}`);
  const result = await cli(['check', file, ...prompts.map((p) => dir.path(p))]);
  return {
    ...result,
    errors: result.stderr
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(file.length)),
  };
}

describe('runvil check runvil.yaml: triggers against their prompts', () => {
  it('takes triggers whose prompts, in prompts/ beside runvil.yaml, declare what they give', async () => {
    const file = dir.path('deploy/runvil.yaml');
    expect(await cli(['check', file])).toEqual({ status: 0, stdout: `ok: ${file}\n`, stderr: '' });
    const whole = await check('whole.yaml', config('  p: { prompt: on-payload, from: standard, secret: "${S}" }\n'));
    expect(whole).toMatchObject({ status: 0, stderr: '' });
  });

  it('takes a prompt given on the command line before the one in prompts/', async () => {
    const text = config('  t: { prompt: triage, from: github, secret: "${S}", args: { title: $.t } }\n');
    // prompts/triage.md requires repo too; the given triage.md declares title only.
    expect((await check('given.yaml', text)).status).toBe(1);
    const result = await check('given.yaml', text, 'elsewhere/triage.md');
    expect(result).toMatchObject({ status: 0, stderr: '' });
    expect(result.stdout).toContain('ok: ');
  });

  it('finds a prompt deployed another way when its file is given', async () => {
    const text = config('  up: { prompt: uploaded, from: slack, secret: "${S}" }\n');
    expect((await check('uploaded.yaml', text, 'elsewhere/uploaded.md')).status).toBe(0);
    expect((await check('uploaded.yaml', text)).errors).toEqual([
      `:2:17: error[Config]: \`triggers.up.prompt\`: no prompt uploaded: it is not among the prompt files given, and there is no ${dir.path('deploy/prompts/uploaded.md')}; for a prompt deployed with PUT /prompts/uploaded, give its file to runvil check too`,
    ]);
  });

  it('refuses an arg the prompt does not declare, at its path, naming the arg, the trigger and the prompt', async () => {
    const result = await check('undeclared.yaml', config(GH.replace('      repo:', '      labels: $.issue.labels[*].name\n      repo:')));
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.errors).toEqual([
      ":10:15: error[Config]: `triggers.gh-issues.args.labels`: trigger gh-issues gives arg labels ($.issue.labels[*].name), which prompt triage does not declare (it declares title, body, repo): declare it under the prompt's args:, or take this path out",
    ]);
  });

  it('names the prompt that declares no args at all', async () => {
    const result = await check('none.yaml', config('  t: { prompt: triage, from: github, secret: "${S}", args: { x: $.x } }\n'), 'elsewhere/uploaded.md');
    expect(result.errors).toContainEqual(expect.stringContaining('which prompt triage does not declare (it declares title, body, repo)'));
    const empty = await check(
      'none2.yaml',
      config('  t: { prompt: other-name, from: github, secret: "${S}", args: { x: $.x } }\n'),
      'deploy/prompts/renamed.md',
    );
    expect(empty.errors).toEqual([
      ":2:69: error[Config]: `triggers.t.args.x`: trigger t gives arg x ($.x), which prompt other-name does not declare (it declares no args): declare it under the prompt's args:, or take this path out",
    ]);
  });

  it('refuses a trigger that gives no path for an arg the prompt requires, at its args', async () => {
    const result = await check('required.yaml', config(GH.replace('      repo: $.repository.full_name\n', '')));
    expect(result.status).toBe(1);
    expect(result.errors).toEqual([
      ':7:5: error[Config]: `triggers.gh-issues.args` gives no path for arg repo, which prompt triage requires (it has no default): every delivery would be refused with 400 naming it; add a path for repo, or give repo a default in the prompt',
    ]);
    // body has a default: leaving it out is fine.
    expect((await check('optional.yaml', config(GH.replace('      body: $.issue.body\n', '')))).status).toBe(0);
  });

  it('without args:, needs the prompt to declare payload, of type json, and require nothing else', async () => {
    const whole = (name: string) => config(`  t:\n    prompt: ${name}\n    from: stripe\n    secret: \${S}\n`);
    expect((await check('p1.yaml', whole('triage'))).errors).toEqual([
      ":2:3: error[Config]: `triggers.t`: without `args:`, trigger t gives the whole payload as the single arg payload, but prompt triage declares no arg payload: declare `payload: { type: json }` under the prompt's args:, or give the trigger `args:` paths",
      ':2:3: error[Config]: `triggers.t`: without `args:`, trigger t gives only the arg payload, but prompt triage requires arg title (it has no default): every delivery would be refused with 400 naming it; give the trigger `args:` paths, or give title a default',
      ':2:3: error[Config]: `triggers.t`: without `args:`, trigger t gives only the arg payload, but prompt triage requires arg repo (it has no default): every delivery would be refused with 400 naming it; give the trigger `args:` paths, or give repo a default',
    ]);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(dir.path('deploy/prompts/as-text.md'), prompt('as-text', ['payload: { type: string }']));
    expect((await check('p2.yaml', whole('as-text'))).errors).toEqual([
      ':2:3: error[Config]: `triggers.t`: without `args:`, trigger t gives the whole payload, a JSON object, as arg payload, but prompt as-text declares payload as string: declare it `type: json`',
    ]);
  });

  it('refuses a prompt in prompts/ that does not parse, or whose frontmatter names it otherwise', async () => {
    const broken = await check('broken.yaml', config('  t: { prompt: broken, from: github, secret: "${S}" }\n'));
    expect(broken.errors[0]).toMatch(/^:2:16: error\[Config\]: `triggers\.t\.prompt`: prompt broken \(.*broken\.md\) does not parse: run runvil check /);
    const renamed = await check('renamed.yaml', config('  t: { prompt: renamed, from: github, secret: "${S}" }\n'));
    expect(renamed.errors[0]).toMatch(
      /^:2:16: error\[Config\]: `triggers\.t\.prompt`: .*renamed\.md is deployed as renamed, but its frontmatter names it other-name/,
    );
  });

  it('reports every trigger of the file, sorted by place, and still checks the prompt files given', async () => {
    const result = await check(
      'many.yaml',
      config('  a: { prompt: missing, from: github, secret: "${S}" }\n  b: { prompt: triage, from: github, secret: "${S}", args: { nope: $.n } }\n'),
      'elsewhere/triage.md',
    );
    expect(result.status).toBe(1);
    expect(result.errors.map((line) => line.split(' error')[0])).toEqual([':2:16:', ':3:54:', ':3:68:']);
    expect(result.stdout).toBe(`ok: ${dir.path('elsewhere/triage.md')}\n`);
  });

  it('leaves the prompts alone when the file has no triggers, and says nothing more when the file is bad', async () => {
    expect((await check('plain.yaml', 'notify: []\n')).status).toBe(0);
    const bad = await check('bad.yaml', config('  t: { prompt: missing, from: gitlab, secret: "${S}" }\n'));
    expect(bad.errors).toEqual([':2:31: error[Config]: `triggers.t.from` must be one of github, stripe, slack, standard']);
  });
});
