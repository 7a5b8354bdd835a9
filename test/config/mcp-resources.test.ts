import { describe, expect, it } from 'vitest';
import { matchResource, MAX_VARIABLE_CHARS, type McpResource } from '../../src/config/mcp-resources.ts';
import { formatConfigProblem, parseDeploymentConfig } from '../../src/config/parse-config.ts';

function accepted(text: string): readonly McpResource[] {
  const outcome = parseDeploymentConfig(text);
  if (!outcome.ok) throw new Error(outcome.problems.map((p) => formatConfigProblem('runvil.yaml', p)).join('\n'));
  return outcome.config.mcp?.resources ?? [];
}

function problems(text: string): string[] {
  const outcome = parseDeploymentConfig(text);
  if (outcome.ok) throw new Error('the file was accepted');
  return outcome.problems.map((problem) => formatConfigProblem('runvil.yaml', problem));
}

const CONFIG = `mcp:
  resources:
    docs://handbook:
      prompt: handbook
      description: The handbook as it stands
    reports://daily/{day}/summary:
      prompt: daily-summary
      name: Daily summary
      mime_type: application/json
    charts://{name}.png:
      prompt: chart
      mime_type: image/png
      encoding: base64
`;

describe('mcp.resources in runvil.yaml', () => {
  it('reads fixed resources and templates, in file order, with their defaults', () => {
    const resources = accepted(CONFIG);
    expect(resources.map(({ uri, prompt, name, mimeType, encoding, variables }) => ({ uri, prompt, name, mimeType, encoding, variables }))).toEqual([
      { uri: 'docs://handbook', prompt: 'handbook', name: 'handbook', mimeType: 'text/plain', encoding: 'text', variables: [] },
      {
        uri: 'reports://daily/{day}/summary',
        prompt: 'daily-summary',
        name: 'Daily summary',
        mimeType: 'application/json',
        encoding: 'text',
        variables: ['day'],
      },
      { uri: 'charts://{name}.png', prompt: 'chart', name: 'chart', mimeType: 'image/png', encoding: 'base64', variables: ['name'] },
    ]);
    expect(resources[0]!.description).toBe('The handbook as it stands');
  });

  it('refuses, at their places, what cannot be served', () => {
    const found = problems(`mcp:
  resources:
    runvil://runs/x: { prompt: a }
    no-scheme: { prompt: a }
    x://{a}{b}: { prompt: a }
    x://{a}/{a}: { prompt: a }
    x://{a.b}: { prompt: a }
    x://open{: { prompt: a }
    x://fine: { name: no prompt }
    x://mime: { prompt: a, mime_type: text }
    x://enc: { prompt: a, encoding: hex }
    x://bad-prompt: { prompt: Not_A_Prompt }
`);
    expect(found).toHaveLength(10);
    expect(found[0]).toMatch(/runvil: URIs are the runs’ files/);
    expect(found[1]).toMatch(/is not a URI/);
    expect(found[2]).toMatch(/two variables with nothing between them/);
    expect(found[3]).toMatch(/names a variable twice/);
    expect(found[4]).toMatch(/\{a\.b\} is not a template variable/);
    expect(found[5]).toMatch(/unbalanced/);
    expect(found[6]).toMatch(/needs `prompt:`/);
    expect(found[7]).toMatch(/is not a media type/);
    expect(found[8]).toMatch(/neither text nor base64/);
    expect(found[9]).toMatch(/needs `prompt:`/);
  });
});

describe('a URI matched against the declared resources', () => {
  const resources = accepted(CONFIG);
  const match = (uri: string) => {
    const found = matchResource(resources, uri);
    return found ? { prompt: found.resource.prompt, args: { ...found.args } } : null;
  };

  it('finds a fixed resource by its exact URI, and a template with its variables as args', () => {
    expect(match('docs://handbook')).toEqual({ prompt: 'handbook', args: {} });
    expect(match('reports://daily/2026-12-03/summary')).toEqual({ prompt: 'daily-summary', args: { day: '2026-12-03' } });
    expect(match('charts://sales.png')).toEqual({ prompt: 'chart', args: { name: 'sales' } });
  });

  it('percent-decodes a variable, which may then hold any text', () => {
    expect(match('reports://daily/a%20b%2Fc/summary')).toEqual({ prompt: 'daily-summary', args: { day: 'a b/c' } });
  });

  it.each([
    ['a URI no resource declares', 'docs://other'],
    ['a declared URI with more after it', 'docs://handbook/x'],
    ['a variable across segments', 'reports://daily/a/b/summary'],
    ['a dot segment', 'reports://daily/../summary'],
    ['a single dot', 'reports://daily/./summary'],
    ['an encoded dot segment', 'reports://daily/%2E%2E/summary'],
    ['an empty variable', 'reports://daily//summary'],
    ['a variable that is not percent-encoding', 'reports://daily/%E0%A4/summary'],
    ['a variable past the bound', `reports://daily/${'x'.repeat(MAX_VARIABLE_CHARS + 1)}/summary`],
    ['a query where a variable is', 'reports://daily/?x/summary'],
    ['the template itself', 'reports://daily/{day}/summary'],
  ])('matches nothing for %s', (_, uri) => {
    expect(match(uri)).toBeNull();
  });

  it('matches a long hostile URI in one pass', () => {
    const hostile = `charts://${'.'.repeat(50_000)}png`;
    expect(match(hostile)).toBeNull();
  });
});
