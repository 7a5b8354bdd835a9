import { describe, expect, it } from 'vitest';
import { TRIGGER_SENDERS } from '../../src/config/deployment-config.ts';
import { formatConfigProblem, parseDeploymentConfig } from '../../src/config/parse-config.ts';
import { SERVER_SECRET_NAMES } from '../../src/config/server-secrets.ts';

/** The example of DESIGN.md, Part 3, "Triggers", whole. */
const DESIGN_EXAMPLE = `triggers:
  gh-issues:                         # POST /hooks/gh-issues
    prompt: triage
    from: github                     # github | stripe | slack | standard (Standard Webhooks)
    secret: \${GITHUB_WEBHOOK_SECRET}
    events: [issues.opened, issues.edited]   # optional filter: sender event type[.action]
    args:                            # each arg from a JSON path of the payload (RFC 9535)
      title: $.issue.title
      body: $.issue.body
      repo: $.repository.full_name
`;

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

/** A file with one trigger `t` whose body is `lines` (each indented under it). */
function oneTrigger(...lines: string[]): string {
  return `triggers:\n  t:\n${lines.map((line) => `    ${line}\n`).join('')}`;
}

const GOOD = ['prompt: triage', 'from: github', 'secret: ${HOOK_SECRET}'];

describe('triggers: in runvil.yaml', () => {
  it('reads the example of the design whole, with the place of each trigger', () => {
    const config = accepted(DESIGN_EXAMPLE);
    expect([...config.triggers.keys()]).toEqual(['gh-issues']);
    expect(config.triggers.get('gh-issues')).toEqual({
      name: 'gh-issues',
      prompt: 'triage',
      from: 'github',
      secret: '${GITHUB_WEBHOOK_SECRET}',
      events: ['issues.opened', 'issues.edited'],
      args: [
        { name: 'title', path: '$.issue.title' },
        { name: 'body', path: '$.issue.body' },
        { name: 'repo', path: '$.repository.full_name' },
      ],
      line: 2,
      column: 3,
    });
  });

  it('gives the defaults: every event, and the whole payload as the single arg payload', () => {
    const trigger = accepted(oneTrigger(...GOOD)).triggers.get('t')!;
    expect(trigger.events).toBeNull();
    expect(trigger.args).toBeNull();
  });

  it('keeps triggers in file order, each with its own place', () => {
    const config = accepted(`triggers:
  zeta: { prompt: a, from: stripe, secret: "\${A}" }
  alpha:
    prompt: b
    from: slack
    secret: \${B}
  mid: { prompt: c, from: standard, secret: "\${C}", events: [invoice.paid] }
`);
    expect([...config.triggers.values()].map((t) => [t.name, t.from, t.line, t.column])).toEqual([
      ['zeta', 'stripe', 2, 3],
      ['alpha', 'slack', 3, 3],
      ['mid', 'standard', 7, 3],
    ]);
  });

  it('takes every sender', () => {
    for (const from of TRIGGER_SENDERS) expect(accepted(oneTrigger('prompt: p', `from: ${from}`, 'secret: ${S}')).triggers.get('t')!.from).toBe(from);
  });

  it('takes event types as the senders write them: type, type.action, dotted Stripe types', () => {
    const events = ['issues', 'issues.opened', 'customer.subscription.created', 'block_actions', 'push'];
    expect(accepted(oneTrigger(...GOOD, `events: [${events.join(', ')}]`)).triggers.get('t')!.events).toEqual(events);
  });

  it('takes paths with filters, wildcards, descendants and the function extensions', () => {
    const paths = ['$', '$.a', "$['a b']", '$.a[0]', '$.a[-1]', '$.a[*].b', '$..login', '$.a[?@.n > 1].n', '$.l[?match(@.t, "ab+")]', '$.l[?search(@, "x")]'];
    const text = oneTrigger(...GOOD, 'args:', ...paths.map((path, i) => `  a${i}: ${JSON.stringify(path)}`));
    expect(
      accepted(text)
        .triggers.get('t')!
        .args!.map((arg) => arg.path),
    ).toEqual(paths);
  });
});

describe('triggers: refused, each problem at its line and column', () => {
  it('refuses unknown keys and values of the wrong kind, as the schema does elsewhere', () => {
    expect(problems(oneTrigger(...GOOD, 'filter: [push]'))).toEqual(['runvil.yaml:6:5: unknown key `filter` in `triggers.t`']);
    expect(problems('triggers: [a]\n')).toEqual(['runvil.yaml:1:11: `triggers` must be a map of trigger name to trigger']);
    expect(problems('triggers:\n  t: github\n')).toEqual(['runvil.yaml:2:6: `triggers.t` must be a map with prompt, from and secret']);
    expect(problems(oneTrigger('prompt: p', 'from: gitlab', 'secret: ${S}'))).toEqual([
      'runvil.yaml:4:11: `triggers.t.from` must be one of github, stripe, slack, standard',
    ]);
    expect(problems(oneTrigger(...GOOD, 'events: issues'))).toEqual(['runvil.yaml:6:13: `triggers.t.events` must be a list of texts']);
    expect(problems(oneTrigger(...GOOD, 'events: [3]'))).toEqual(['runvil.yaml:6:14: `triggers.t.events[0]` must be a text']);
    expect(problems(oneTrigger(...GOOD, 'args: [$.a]'))).toEqual(['runvil.yaml:6:11: `triggers.t.args` must be a map of arg name to JSON path']);
    expect(problems(oneTrigger(...GOOD, 'args: { a: 1 }'))).toEqual([
      'runvil.yaml:6:16: `triggers.t.args.a` must be a JSON path (RFC 9535), such as $.issue.title',
    ]);
    expect(problems(oneTrigger('prompt: [a]', 'from: github', 'secret: ${S}'))).toEqual(['runvil.yaml:3:13: `triggers.t.prompt` must be a text']);
  });

  it('refuses a trigger name that cannot be the last part of /hooks/<name>, at the name', () => {
    for (const name of ['Gh', 'gh_issues', 'gh.issues', 'a/b', 'a'.repeat(65), 'é', '"a b"']) {
      const [problem, ...rest] = problems(`triggers:\n  ${name}: { prompt: p, from: github, secret: "\${S}" }\n`);
      expect(rest).toEqual([]);
      expect(problem).toMatch(/^runvil\.yaml:2:3: `triggers(\.|\[).*: ".*" is not a trigger name: it becomes \/hooks\/<name>/);
    }
  });

  it('names each missing key at the trigger', () => {
    expect(problems('triggers:\n  t: {}\n')).toEqual([
      'runvil.yaml:2:3: `triggers.t` needs a `prompt`: the prompt its deliveries start',
      'runvil.yaml:2:3: `triggers.t` needs `from`: the sender, one of github, stripe, slack, standard',
      'runvil.yaml:2:3: `triggers.t` needs a `secret` (${NAME} of the signing secret the sender was given): every delivery is checked against it',
    ]);
  });

  it('refuses a prompt name the prompt grammar refuses', () => {
    for (const prompt of ['Triage', 'tri age', 'triage.md', 'prompts/triage', '']) {
      expect(problems(oneTrigger(`prompt: "${prompt}"`, 'from: github', 'secret: ${S}'))).toEqual([
        `runvil.yaml:3:13: \`triggers.t.prompt\`: ${JSON.stringify(prompt)} is not a prompt name (lowercase letters, digits and '-')`,
      ]);
    }
  });

  it('refuses a literal secret, or anything but exactly one ${NAME}', () => {
    for (const secret of ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'hunter2', 'prefix-${S}', '${S}${T}', '${S} ', '$S', '${1S}', '""']) {
      expect(problems(oneTrigger('prompt: p', 'from: github', `secret: ${secret.startsWith('"') ? secret : JSON.stringify(secret)}`))).toEqual([
        'runvil.yaml:5:13: `triggers.t.secret` must name an environment variable, such as ${GITHUB_WEBHOOK_SECRET}: secrets never live in runvil.yaml',
      ]);
    }
  });

  it("refuses each of the server's own secrets, in any case", () => {
    const names = [...SERVER_SECRET_NAMES, 'RUNVIL_WEBHOOK_SECRET_TRIAGE', 'runvil_api_token', 'Anthropic_Api_Key'];
    for (const name of names) {
      const [problem, ...rest] = problems(oneTrigger('prompt: p', 'from: stripe', `secret: \${${name}}`));
      expect(rest).toEqual([]);
      expect(problem).toMatch(
        new RegExp(
          `^runvil\\.yaml:5:13: \`triggers\\.t\\.secret\`: \\$\\{${name}\\} is .*, one of the server's own secrets: .*give the trigger a secret of its own$`,
        ),
      );
    }
  });

  it('refuses an empty event filter and event types with spaces or nothing in them', () => {
    expect(problems(oneTrigger(...GOOD, 'events: []'))).toEqual([
      'runvil.yaml:6:13: `triggers.t.events` is empty: leave it out to start a run for every event',
    ]);
    for (const event of ['', ' ', 'issues opened', 'issues.opened ', '\\tpush', 'a\\nb']) {
      expect(problems(oneTrigger(...GOOD, `events: [push, "${event}"]`))).toEqual([
        `runvil.yaml:6:20: \`triggers.t.events[1]\`: ${JSON.stringify(JSON.parse(`"${event}"`))} is not an event type: a type, or type.action, such as issues.opened, with no spaces`,
      ]);
    }
  });

  it('refuses an empty args map and arg names no prompt can declare, at the name', () => {
    expect(problems(oneTrigger(...GOOD, 'args: {}'))).toEqual([
      'runvil.yaml:6:11: `triggers.t.args` is empty: leave it out to give the whole payload as the single arg payload',
    ]);
    for (const arg of ['9lives', '_x', 'a b', 'a.b', 'a'.repeat(65)]) {
      const [problem, ...rest] = problems(oneTrigger(...GOOD, 'args:', `  "${arg}": $.a`));
      expect(rest).toEqual([]);
      expect(problem).toMatch(/^runvil\.yaml:7:7: `triggers\.t\.args.*`: ".*" is not an arg name/);
    }
  });

  it('refuses a path that is no RFC 9535 path, at the path, naming the arg and the path', () => {
    const bad = [
      'issue.title',
      '$.',
      '$.a[',
      '$[?@.a',
      '$..',
      '$.a[1:2:0',
      '$[?foo(@)]',
      '$[?length(@) == ]',
      '$.a.b c',
      '$[01]',
      '$["a"',
      '@.a',
      '$[?count(@.*) == 1 && @]x',
      "$['\\q']",
    ];
    for (const path of bad) {
      const [problem, ...rest] = problems(oneTrigger(...GOOD, 'args:', `  title: ${JSON.stringify(path)}`));
      expect(rest).toEqual([]);
      expect(
        problem!.startsWith(`runvil.yaml:7:14: \`triggers.t.args.title\`: the path of arg title: ${JSON.stringify(path)} is not a JSON path (RFC 9535): `),
      ).toBe(true);
    }
  });

  it('refuses a pattern of match() or search() written in the path that is no I-Regexp, naming it', () => {
    const bad: [string, string][] = [
      ['(a', 'has an unclosed group'],
      ['\\\\d+', 'has \\d, which I-Regexp does not have'],
      ['(?=a)b', 'cannot have ? here'],
      ['a{3,2}', 'is one RE2 cannot take'],
      ['(ab){501}', 'is too large: it has 1002 characters and classes to match, repeats counted, more than 1000'],
      ['(a)\\\\1', 'has \\1, which I-Regexp does not have'],
      ['[b-a]', 'has a range whose end comes before its start'],
      ['\\\\p{Letter}', 'has \\p{Letter}, which names no general category'],
    ];
    for (const how of ['match', 'search']) {
      for (const [pattern, reason] of bad) {
        const [problem, ...rest] = problems(oneTrigger(...GOOD, 'args:', `  t: '$.l[?${how}(@, "${pattern}")]'`));
        expect(rest).toEqual([]);
        expect(problem).toContain('runvil.yaml:7:10: `triggers.t.args.t`: the path of arg t: ');
        expect(problem).toContain(`of ${how}() ${reason}`);
      }
    }
  });

  it('reports every problem of every trigger, sorted by place', () => {
    expect(
      problems(`triggers:
  Bad:
    prompt: Triage
    from: github
    secret: abc
  ok: { prompt: p, from: slack, secret: "\${S}", args: { x: "$.[" } }
`),
    ).toEqual([
      'runvil.yaml:2:3: `triggers.Bad`: "Bad" is not a trigger name: it becomes /hooks/<name>, so lowercase letters, digits and \'-\' (at most 64)',
      'runvil.yaml:3:13: `triggers.Bad.prompt`: "Triage" is not a prompt name (lowercase letters, digits and \'-\')',
      'runvil.yaml:5:13: `triggers.Bad.secret` must name an environment variable, such as ${GITHUB_WEBHOOK_SECRET}: secrets never live in runvil.yaml',
      expect.stringMatching(/^runvil\.yaml:6:60: `triggers\.ok\.args\.x`: the path of arg x: "\$\.\[" is not a JSON path \(RFC 9535\): /),
    ]);
  });
});
