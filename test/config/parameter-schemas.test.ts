/**
 * A tool's parameter schema given in a file (an `http` Pack's `parameters` in runvil.yaml, a
 * test file's Pack) is held to the bounds every parameter schema has (issue 25): nested too
 * deep, too long, or with a pattern RE2 cannot match in linear time, it is the file's error,
 * at the line and column of `parameters`, saying what is wrong.
 */
import { describe, expect, it } from 'vitest';
import { readTestText } from '../../src/cli/test-file.ts';
import { formatConfigProblem, parseDeploymentConfig } from '../../src/config/parse-config.ts';

/** A runvil.yaml with one `http` Pack whose one tool has `parameters` (YAML flow text). */
const config = (parameters: string) => `packs:
  acme/deploy:
    http: { url: https://deploy.example.com, secret: "\${S}" }
    tools:
      - name: start
        parameters: ${parameters}
`;

function problems(text: string): string[] {
  const outcome = parseDeploymentConfig(text);
  return outcome.ok ? [] : outcome.problems.map((problem) => formatConfigProblem('runvil.yaml', problem));
}

const nested = (depth: number): string => (depth <= 1 ? '{ type: string }' : `{ type: object, properties: { a: ${nested(depth - 1)} } }`);

describe("an http Pack's parameters in runvil.yaml", () => {
  it('takes a schema with patterns RE2 can match', () => {
    expect(problems(config(`{ type: object, properties: { service: { type: string, pattern: "^[a-z][a-z0-9-]*$" } } }`))).toEqual([]);
  });

  it('refuses a pattern RE2 cannot match in linear time, naming it, at its line and column', () => {
    expect(problems(config(`{ type: object, properties: { tag: { type: string, pattern: "^(?!latest).*$" } } }`))).toEqual([
      'runvil.yaml:6:21: `packs["acme/deploy"].tools[0].parameters` has the pattern "^(?!latest).*$", which cannot be matched in linear time (it has a lookahead or lookbehind)',
    ]);
    expect(problems(config(`{ type: object, patternProperties: { "^(a)\\\\1$": {} } }`))).toEqual([
      'runvil.yaml:6:21: `packs["acme/deploy"].tools[0].parameters` has the pattern "^(a)\\\\1$", which cannot be matched in linear time (it has a backreference)',
    ]);
  });

  it('refuses a schema nested too deep or too long', () => {
    expect(problems(config(nested(40)))).toEqual(['runvil.yaml:6:21: `packs["acme/deploy"].tools[0].parameters` is nested deeper than 32 levels']);
    const wide = `{ type: object, properties: { ${Array.from({ length: 4_000 }, (_, i) => `f${i}: { type: string }`).join(', ')} } }`;
    expect(problems(config(wide))).toEqual(['runvil.yaml:6:21: `packs["acme/deploy"].tools[0].parameters` is longer than 65,536 characters of JSON']);
  });
});

describe("a test file's Pack", () => {
  const testFile = (parameters: string) => `source: |
  ---
  name: probe
  description: Calls a tool.
  runvil: 0
  uses: [acme/probe]
  ---
  # Probe

  ## Call

  \`\`\`lua
  return tools.call('probe/look', {})
  \`\`\`
host:
  packs:
    acme/probe:
      tools:
        - name: look
          returns: seen
          parameters: ${parameters}
expect:
  result_contains: seen
`;

  async function problemsOf(text: string): Promise<string[]> {
    const read = await readTestText(text, 'probe.test.yaml', async () => 'no files');
    return read.ok ? [] : read.problems.map((problem) => `${problem.line}:${problem.column}: ${problem.message}`);
  }

  it('refuses a pattern RE2 cannot match in linear time, naming it, at its line and column', async () => {
    expect(await problemsOf(testFile(`{ type: object, properties: { q: { pattern: "(?<=x)y" } } }`))).toEqual([
      '21:23: `host.packs["acme/probe"].tools[0].parameters` has the pattern "(?<=x)y", which cannot be matched in linear time (it has a lookahead or lookbehind)',
    ]);
    expect(await problemsOf(testFile(`{ type: object, properties: { q: { pattern: "^(a|a)*$" } } }`))).toEqual([]);
  });

  it('refuses a schema nested too deep', async () => {
    expect(await problemsOf(testFile(nested(40)))).toEqual(['21:23: `host.packs["acme/probe"].tools[0].parameters` is nested deeper than 32 levels']);
  });
});
