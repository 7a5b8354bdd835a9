import { describe, expect, it } from 'vitest';
import { parsePrompt } from '../../src/prompt/index.ts';
import { BASE_FRONTMATTER, frontmatterErrors, parseErrors, parseOk, promptText } from './helpers.ts';

const messages = (lines: readonly string[]) => frontmatterErrors(lines).map((e) => e.message);
const only = (lines: readonly string[]) => parseErrors(promptText(lines)).map((e) => e.message);

describe('the frontmatter block', () => {
  it('reads the required keys', () => {
    const { frontmatter } = parseOk(promptText(BASE_FRONTMATTER));
    expect(frontmatter).toMatchObject({ name: 'test-prompt', description: 'A prompt under test.', runvil: 0, uses: [] });
    expect(Object.keys(frontmatter.models)).toEqual([]);
    expect(Object.keys(frontmatter.args)).toEqual([]);
  });

  it('must open the file on line 1', () => {
    const errors = parseErrors('\n---\nname: x\n---\n# T\n');
    expect(errors[0]).toMatchObject({ kind: 'Frontmatter', line: 1, column: 1 });
    expect(errors[0]?.message).toBe('invalid frontmatter: the file must start with a `---` line that opens the frontmatter');
  });

  it('must be closed by a second --- line, and nothing else is reported then', () => {
    expect(parseErrors('---\nname: x\n# T\n').map((e) => e.message)).toEqual([
      'invalid frontmatter: the frontmatter opened by `---` on line 1 has no closing `---` line',
    ]);
  });

  it('accepts CRLF line endings and a byte order mark', () => {
    const text = `\uFEFF${promptText(BASE_FRONTMATTER)}`.replace(/\n/g, '\r\n');
    expect(parseOk(text).frontmatter.name).toBe('test-prompt');
  });

  it('reports a YAML syntax error with yaml’s message and its position in the file', () => {
    const [error] = frontmatterErrors(['uses: [web', 'models: {}']);
    expect(error?.kind).toBe('Frontmatter');
    expect(error?.message).toMatch(/^invalid frontmatter: Flow sequence/);
    expect(error?.line).toBeGreaterThanOrEqual(5);
  });

  it('reports a duplicated key as a YAML error', () => {
    const [error] = frontmatterErrors(['name: again']);
    expect(error).toMatchObject({ message: 'invalid frontmatter: Map keys must be unique', line: 5, column: 1 });
  });
});

describe('frontmatter keys', () => {
  it('names each missing required key, without a position', () => {
    expect(only(['description: d'])).toEqual(['invalid frontmatter: missing required key `name`', 'invalid frontmatter: missing required key `runvil`']);
    expect(parseErrors(promptText(['description: d']))[0]?.line).toBeUndefined();
  });

  it('treats an empty block as a map with every required key missing', () => {
    expect(only([])).toHaveLength(3);
  });

  it('refuses a frontmatter that is not a map', () => {
    expect(only(['- a'])).toEqual(['invalid frontmatter: the frontmatter must be a map of keys, such as `name: ask-once`, got a list']);
  });

  it('names an unknown key and lists the allowed ones, at the key’s position', () => {
    const [error] = frontmatterErrors(['foo: 1']);
    expect(error).toMatchObject({
      message: 'invalid frontmatter: unknown key `foo`; allowed keys: name, description, runvil, uses, models, args',
      line: 5,
      column: 1,
    });
  });

  it('requires runvil: 0, the language version', () => {
    expect(only(['name: a', 'description: d', 'runvil: 1'])).toEqual(['invalid frontmatter: `runvil` must be 0 (the language version), got 1']);
    expect(only(['name: a', 'description: d', 'runvil: "0"'])).toEqual(['invalid frontmatter: `runvil` must be 0 (the language version), got "0"']);
    expect(parseErrors(promptText(['name: a', 'description: d', 'runvil: 1']))[0]).toMatchObject({ line: 4, column: 9 });
  });

  it('requires name to be a slug of 1 to 64 lowercase letters, digits and -', () => {
    const bad = (name: string) => only([`name: ${name}`, 'description: d', 'runvil: 0']);
    expect(bad('Ask Once')).toEqual(['invalid frontmatter: `name` must be 1 to 64 lowercase letters, digits and \'-\', such as `ask-once`, got "Ask Once"']);
    expect(bad('a'.repeat(65))).toHaveLength(1);
    expect(bad('123')).toEqual(['invalid frontmatter: `name` must be a string, got 123']);
    expect(parseOk(promptText([`name: ${'a'.repeat(64)}`, 'description: d', 'runvil: 0'])).frontmatter.name).toHaveLength(64);
  });

  it('requires a non-empty description', () => {
    expect(only(['name: a', 'description: "  "', 'runvil: 0'])).toEqual(['invalid frontmatter: `description` must not be empty']);
  });
});

describe('models:', () => {
  it('maps role labels to model settings, {} meaning the Host’s default model', () => {
    const lines = ['models:', '  writer: {}', '  critic: { provider: anthropic, model: m, temperature: 0.2, max_tokens: 100, round_cap: 4 }'];
    const { models } = parseOk(promptText([...BASE_FRONTMATTER, ...lines])).frontmatter;
    expect(models.writer).toEqual({});
    expect(models.critic).toEqual({ provider: 'anthropic', model: 'm', temperature: 0.2, max_tokens: 100, round_cap: 4 });
  });

  it('has no inherited entries, so an undeclared role such as toString is absent', () => {
    const { models } = parseOk(promptText([...BASE_FRONTMATTER, 'models: { writer: {} }'])).frontmatter;
    expect(models.toString).toBeUndefined();
  });

  it('refuses a role label outside the alias grammar, at the label', () => {
    const [error] = frontmatterErrors(['models:', '  2nd: {}']);
    expect(error).toMatchObject({
      message: 'invalid frontmatter: invalid role label "2nd" under `models`: expected [A-Za-z][A-Za-z0-9_-]{0,63}',
      line: 6,
      column: 3,
    });
  });

  it('refuses unknown settings and wrongly typed ones', () => {
    expect(messages(['models:', '  writer: { api_key: x, temperature: hot, round_cap: 0 }'])).toEqual([
      'invalid frontmatter: unknown key `api_key` in `models.writer`; allowed keys: provider, model, temperature, max_tokens, base_url, round_cap, context_window',
      'invalid frontmatter: `models.writer.temperature` must be a number, got "hot"',
      'invalid frontmatter: `models.writer.round_cap` must be at least 1, got 0',
    ]);
  });

  it('refuses a role with no settings map', () => {
    expect(messages(['models:', '  writer:'])).toEqual([
      "invalid frontmatter: `models.writer` must be a map of model settings, such as {} for the Host's default model, got null",
    ]);
  });
});

describe('args:', () => {
  it('takes a type name or a map with type, default and description', () => {
    const lines = ['args:', '  topic: string', '  count: { type: integer, default: 3, description: How many }', '  data: { type: json, default: [1, {a: b}] }'];
    const { args } = parseOk(promptText([...BASE_FRONTMATTER, ...lines])).frontmatter;
    expect(args.topic).toEqual({ type: 'string' });
    expect(args.count).toEqual({ type: 'integer', default: 3, description: 'How many' });
    expect(args.data).toEqual({ type: 'json', default: [1, { a: 'b' }] });
  });

  it('refuses an unknown type', () => {
    expect(messages(['args:', '  topic: text'])).toEqual([
      'invalid frontmatter: `args.topic` must be one of string, integer, number, boolean, json, got "text"',
    ]);
  });

  it('refuses a default that does not match the type', () => {
    expect(messages(['args:', '  n: { type: integer, default: 1.5 }', '  b: { type: boolean, default: "yes" }'])).toEqual([
      "invalid frontmatter: `args.n.default` must be an integer to match the arg's type, got 1.5",
      'invalid frontmatter: `args.b.default` must be a boolean to match the arg\'s type, got "yes"',
    ]);
  });

  it('refuses a map without type, and an arg name outside the alias grammar', () => {
    expect(messages(['args:', '  n: { default: 1 }', '  _x: string'])).toEqual([
      'invalid frontmatter: missing required key `type` in `args.n`',
      'invalid frontmatter: invalid arg name "_x" under `args`: expected [A-Za-z][A-Za-z0-9_-]{0,63}',
    ]);
  });
});

describe('frontmatter errors together', () => {
  it('reports every problem in file order, then the ones with no position', () => {
    const errors = parsePrompt(promptText(['runvil: 2', 'name: X', 'uses: [web, web]']), 'f.md');
    expect(!errors.ok && errors.errors.map((e) => [e.line, e.message])).toEqual([
      [2, 'invalid frontmatter: `runvil` must be 0 (the language version), got 2'],
      [3, 'invalid frontmatter: `name` must be 1 to 64 lowercase letters, digits and \'-\', such as `ask-once`, got "X"'],
      [undefined, 'invalid frontmatter: missing required key `description`'],
      [undefined, 'invalid frontmatter: Pack id web is declared more than once under uses'],
    ]);
  });

  it('gives every error the file name and the Frontmatter kind', () => {
    const errors = parsePrompt(promptText(['runvil: 2']), 'f.md');
    expect(!errors.ok && errors.errors.every((e) => e.kind === 'Frontmatter' && e.file === 'f.md')).toBe(true);
  });
});
