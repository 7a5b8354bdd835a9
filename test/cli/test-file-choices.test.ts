/**
 * A test file's answers to an ask with choices: only one of the choices reaches Lua, as the
 * API takes only those (POST /runs/:id/asks/:ask_id answers 400 naming them). An answer
 * outside them, in `answers:` or as a recorded ask's output, is the test file's error at
 * its line, naming the ask and its choices; matched exactly, as the API matches.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { readTestText } from '../../src/cli/test-file.ts';
import { runPromptTest } from '../../src/cli/test-run.ts';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { newPlatform } from '../engine/helpers.ts';
import { cli, tempDir } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

/** A prompt that asks `question` with `choices` (Lua table text) and returns the answer. */
const source = (choices: string, question = 'Ship it?') => `---
name: choosy
description: Asks with choices.
runvil: 0
uses: [user-input]
---
# Choosy

## Ask

\`\`\`lua
return 'got ' .. tools.call('user-input/ask', { question = ${JSON.stringify(question)}, choices = ${choices} })
\`\`\`
`;

/** A test file of `source` with the given YAML lines after it. */
const testFile = (prompt: string, rest: string) => `source: |\n${prompt.replace(/^/gm, '  ').trimEnd()}\n${rest}`;

/** Runs a test file's text as `runvil test` would; its failure lines (none when it passed). */
async function run(text: string): Promise<string[]> {
  const read = await readTestText(text, 'choosy.test.yaml', async () => 'no files');
  if (!read.ok) return read.problems.map((problem) => `${problem.line}:${problem.column}: ${problem.message}`);
  return runPromptTest(platform, read.value);
}

const YES_NO = "{ 'Yes', 'No' }";
/** The line of `answers:`'s first item in testFile(source(...), ANSWERS...). */
const answersLine = source(YES_NO).split('\n').length + 2;

describe("a test file's answers to an ask with choices", () => {
  it('passes with one of the choices', async () => {
    expect(await run(testFile(source(YES_NO), 'answers:\n  - "No"\nexpect:\n  result: got No\n'))).toEqual([]);
  });

  it('is refused at its line for an answer outside them, naming the ask, its question and every choice', async () => {
    expect(await run(testFile(source(YES_NO), 'answers:\n  - "Maybe"\nexpect:\n  result: got Maybe\n'))).toEqual([
      `choosy.test.yaml:${answersLine}:5: \`answers[0]\`: the answer "Maybe" is not one of the choices of the ask 0-1 ("Ship it?"): "Yes", "No"`,
    ]);
  });

  it('matches exactly: another case, or the choice with whitespace around it, is refused', async () => {
    for (const answer of ['yes', 'YES', ' Yes', 'Yes ', 'Yes\n', '\tNo']) {
      const lines = await run(testFile(source(YES_NO), `answers:\n  - ${JSON.stringify(answer)}\nexpect:\n  result: got ${answer.trim()}\n`));
      expect(lines).toEqual([expect.stringContaining(`\`answers[0]\`: the answer ${JSON.stringify(answer)} is not one of the choices of the ask 0-1`)]);
    }
  });

  it('takes a number as its text, and refuses it when that text is no choice', async () => {
    const numbered = source("{ '1', '2' }");
    expect(await run(testFile(numbered, 'answers: [2]\nexpect:\n  result: got 2\n'))).toEqual([]);
    expect(await run(testFile(source("{ '1.0' }"), 'answers: [1.0]\nexpect:\n  result: got 1.0\n'))).toEqual([
      expect.stringContaining('`answers[0]`: the answer "1" is not one of the choices of the ask 0-1 ("Ship it?"): "1.0"'),
    ]);
  });

  it('refuses answers that are not texts (or maps, for a form) before anything runs', async () => {
    for (const answer of ['true', '~', '[Yes]']) {
      const lines = await run(testFile(source(YES_NO), `answers:\n  - ${answer}\nexpect:\n  result: got Yes\n`));
      expect(lines).toEqual([`${answersLine}:5: \`answers[0]\` must be a text, or for an ask with a form a map of its fields`]);
    }
  });

  it('refuses a map for an ask without a form, at its line', async () => {
    const lines = await run(testFile(source(YES_NO), `answers:\n  - { pick: Yes }\nexpect:\n  result: got Yes\n`));
    expect(lines).toEqual([
      expect.stringContaining('`answers[0]`: the answer {"pick":"Yes"} is not one of the choices of the ask 0-1 ("Ship it?"): "Yes", "No"'),
    ]);
  });

  it('compares Unicode choices as written: the same letters in another normal form are refused', async () => {
    const composed = 'Café ☕';
    const decomposed = composed.normalize('NFD');
    const unicode = source(`{ ${JSON.stringify(composed)}, '日本' }`, 'Où ?');
    expect(await run(testFile(unicode, `answers:\n  - ${JSON.stringify(composed)}\nexpect:\n  result: got ${composed}\n`))).toEqual([]);
    expect(await run(testFile(unicode, `answers:\n  - ${JSON.stringify(decomposed)}\nexpect:\n  result: got x\n`))).toEqual([
      `choosy.test.yaml:${answersLine}:5: \`answers[0]\`: the answer ${JSON.stringify(decomposed)} is not one of the choices of the ask 0-1 ("Où ?"): ${JSON.stringify(composed)}, "日本"`,
    ]);
  });

  it('names each refused answer, the later ones too', async () => {
    const twice = source(YES_NO).replace("return 'got ' .. tools.call", "tools.call('user-input/ask', { question = 'Free?' })\nreturn 'got ' .. tools.call");
    const lines = await run(testFile(twice, 'answers:\n  - anything\n  - nope\nexpect:\n  result: got x\n'));
    expect(lines).toEqual([
      expect.stringMatching(/:5: `answers\[1\]`: the answer "nope" is not one of the choices of the ask 0-2 \("Ship it\?"\): "Yes", "No"$/),
    ]);
  });
});

describe("a test file's recorded ask outside its choices", () => {
  /** Asks from a task: its ask is a recorded call, answered from `recorded:`. */
  const inTask = `---
name: choosy
description: Asks with choices in a task.
runvil: 0
uses: [user-input]
---
# Choosy

## Main

\`\`\`lua
return tasks.await(tasks.spawn('## Ask'))
\`\`\`

## Ask

\`\`\`lua
return 'got ' .. tools.call('user-input/ask', { question = 'Ship it?', choices = { 'Yes', 'No' } })
\`\`\`
`;
  const recorded = (output: string) =>
    `recorded:\n  - tool: user-input/ask\n    args: { question: "Ship it?", choices: [ "Yes", "No" ] }\n    task: "0.0"\n    output: ${output}\nexpect:\n  result: got Yes\n`;

  it('passes with one of the choices', async () => {
    expect(await run(testFile(inTask, recorded('"Yes"')))).toEqual([]);
  });

  it('is refused at its output, naming the chain, the question and the choices', async () => {
    for (const [output, shown] of [
      ['"yes"', '"yes"'],
      ['" Yes"', '" Yes"'],
      ['42', '42'],
      ['{ pick: "Yes" }', '{"pick":"Yes"}'],
    ] as const) {
      const lines = await run(testFile(inTask, recorded(output)));
      expect(lines).toEqual([
        `choosy.test.yaml:25:13: \`recorded[0].output\`: the answer ${shown} is not one of the choices of the ask made by chain 0.0 ("Ship it?"): "Yes", "No"`,
      ]);
    }
  });
});

describe('runvil run --from a test file with an answer outside its choices', () => {
  it('refuses to rebuild the run, naming the answer at its line, the ask and its choices', async () => {
    const dir = await tempDir({ 'choosy.test.yaml': testFile(source(YES_NO), 'answers: [Maybe]\nexpect:\n  result: got Maybe\n') });
    try {
      const result = await cli(['run', '--from', dir.path('choosy.test.yaml')]);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        `choosy.test.yaml:${answersLine - 1}:11: \`answers[0]\`: the answer "Maybe" is not one of the choices of the ask 0-1 ("Ship it?"): "Yes", "No"`,
      );
    } finally {
      await dir.cleanup();
    }
  });
});

describe("a test file's answers to an ask with a form", () => {
  const formAsk = `---
name: choosy
description: Asks with a form.
runvil: 0
uses: [user-input]
---
# Choosy

## Ask

\`\`\`lua
return 'got ' .. tools.call('user-input/ask', { question = 'Size?', form = { type = 'object', properties = { size = { type = 'string', enum = { 's', 'm' } } }, required = { 'size' } } })
\`\`\`
`;
  const line = formAsk.split('\n').length + 2;

  it('passes with a map that fits, and Lua gets its JSON text', async () => {
    expect(await run(testFile(formAsk, 'answers:\n  - { size: m }\nexpect:\n  result: \'got {"size":"m"}\'\n'))).toEqual([]);
  });

  it('is refused at its line for a map that does not fit, or a text, naming the field', async () => {
    expect(await run(testFile(formAsk, 'answers:\n  - { size: xl }\nexpect:\n  result: got\n'))).toEqual([
      `choosy.test.yaml:${line}:5: \`answers[0]\`: the answer does not fit the form of the ask 0-1 ("Size?"): the field "size" must be one of "s", "m", not "xl"`,
    ]);
    expect(await run(testFile(formAsk, 'answers:\n  - m\nexpect:\n  result: got\n'))).toEqual([
      `choosy.test.yaml:${line}:5: \`answers[0]\`: the answer does not fit the form of the ask 0-1 ("Size?"): the answer to a form must be a JSON object of its fields ("size"), not the text "m"`,
    ]);
  });
});
