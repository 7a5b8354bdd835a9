import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { newPlatform, prompt, resultOf, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const block = (code: string) => '```lua\n' + code + '\n```\n';

async function failure(body: string, frontmatter = '') {
  const outcome = await run(platform, prompt(body, frontmatter));
  if (outcome.status !== 'failed') throw new Error(`expected a failure, got ${outcome.result}`);
  return outcome.error;
}

describe('the section walk', () => {
  it('runs the H1 pass, then falls through sections until one returns', async () => {
    const outcome = await run(
      platform,
      prompt(
        `# Walk\n\n${block("var.trail = 'h1'")}\n## A\n\n${block("var.trail = var.trail .. ',A'")}\n## B\n\n${block("return var.trail .. ',B'")}\n## C\n\n${block("return 'never'")}`,
      ),
    );
    expect(resultOf(outcome)).toBe('h1,A,B');
    expect(outcome.events.filter((e) => e.type === 'section_entered').map((e) => e.section)).toEqual(['Walk', 'A', 'B']);
  });

  it('ends with an empty result when the file ends without a value', async () => {
    expect(resultOf(await run(platform, prompt(`# Quiet\n\n## A\n\n${block('local x = 1')}`)))).toBe('');
  });

  it('ends a section at the first block that returns a value', async () => {
    const body = `# T\n\n## A\n\n${block('var.a = 1')}\n${block("return 'second'")}\n${block('var.never = true')}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('second');
  });

  it('jumps to another section at once and continues the walk there', async () => {
    const body = `# T\n\n## A\n\n${block("var.n = 1\njump('## C')\nvar.n = 99")}\n## B\n\n${block("return 'skipped B'")}\n## C\n\n${block('var.n = var.n + 1')}\n## D\n\n${block("return 'D after C: ' .. var.n")}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('D after C: 2');
  });

  it('does not let pcall catch a jump', async () => {
    const body = `# T\n\n## A\n\n${block("pcall(jump, '## B')\nreturn 'caught'")}\n## B\n\n${block("return 'jumped'")}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('jumped');
  });

  it('jumps from the H1 pass to start the walk at the target', async () => {
    const body = `# T\n\n${block("jump('## B')")}\n## A\n\n${block("return 'A'")}\n## B\n\n${block("return 'B'")}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('B');
  });

  it('compares heading references after trimming, case-sensitively', async () => {
    const body = `# T\n\n## A\n\n${block("local ok, err = pcall(jump, '## b')\nvar.err = tostring(err)\njump('  ##   B  ')")}\n## B\n\n${block('return var.err')}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('jump: unknown heading "## b"');
  });

  it('raises a Lua error naming an unknown heading', async () => {
    const error = await failure(`# T\n\n## A\n\n${block("jump('## Nowhere')")}`);
    expect(error).toMatchObject({ kind: 'Lua', message: 'jump: unknown heading "## Nowhere"' });
  });

  it('refuses a heading reference without ##', async () => {
    const error = await failure(`# T\n\n## A\n\n${block("call('A')")}`);
    expect(error.message).toBe('call: invalid heading reference "A": expected "## Name", such as "## Ask"');
  });

  it('caps section entries so a jump loop ends with Limit', async () => {
    const body = `# T\n\n## A\n\n${block("jump('## B')")}\n## B\n\n${block("jump('## A')")}`;
    const outcome = await run(platform, prompt(body), { limits: { entries: 50 } });
    expect(outcome.status).toBe('failed');
    if (outcome.status === 'failed') {
      expect(outcome.error.kind).toBe('Limit');
      expect(outcome.error.message).toContain('50 section entries');
    }
  });
});

describe('call and require', () => {
  it('runs a called section as its own entry and returns its value', async () => {
    const body = `# T\n\n## Main\n\n${block("local a = call('## Twice', 21)\nlocal b = call('## Nothing')\nreturn a .. '|' .. tostring(b) .. '|' .. tostring(helper)")}\n## Twice\n\n${block("local n = ...\nhelper = 'only in the callee'\nreturn n * 2")}\n## Nothing\n\n${block('local x = 1')}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('42|nil|nil');
  });

  it("raises the called section's error at the call", async () => {
    const body = `# T\n\n## Main\n\n${block("local ok, err = pcall(call, '## Bad')\nreturn err.kind .. ': ' .. tostring(err)")}\n## Bad\n\n${block("store.read('absent.md')")}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('store: store.read: no file at absent.md');
  });

  it('refuses jump inside a called section', async () => {
    const body = `# T\n\n## Main\n\n${block("local ok, err = pcall(call, '## Jumper')\nreturn tostring(err)")}\n## Jumper\n\n${block("jump('## Main')")}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe(
      'jump is unavailable in a section entered with call: the walk cannot move from here; return a value instead',
    );
  });

  it('runs a required section once per entry, in the requiring VM', async () => {
    const body = `# T\n\n## Main\n\n${block("local lib = require '## lib'\nrequire '## lib'\nreturn lib.twice(4) .. '|' .. shared .. '|' .. var.loads")}\n## lib\n\n${block("var.loads = (var.loads or 0) + 1\nshared = 'global from lib'\nreturn { twice = function(n) return n * 2 end }")}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('8|global from lib|1');
  });

  it('refuses a require loop with a clear error', async () => {
    const error = await failure(`# T\n\n## A\n\n${block("require '## A'")}`);
    expect(error.message).toBe('require: "## A" requires itself while it loads');
  });
});

describe('the scalar return rule', () => {
  it('turns numbers and booleans into text', async () => {
    const body = `# T\n\n## A\n\n${block("return call('## N') .. ',' .. call('## F') .. ',' .. call('## B')")}\n## N\n\n${block('return 42')}\n## F\n\n${block('return 2.5')}\n## B\n\n${block('return false')}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('42,2.5,false');
  });

  it('refuses a table with a Lua error naming its type', async () => {
    const error = await failure(`# T\n\n## A\n\n${block('return { 1, 2 }')}`);
    expect(error).toMatchObject({ kind: 'Lua', message: 'cannot return a table as a result' });
  });

  it('refuses a function the same way', async () => {
    const error = await failure(`# T\n\n## A\n\n${block('return print')}`);
    expect(error.message).toBe('cannot return a function as a result');
  });
});

describe('prose', () => {
  it('evaluates {{ expressions }} into the prose global', async () => {
    const body = `# T\n\n## A\n\n${block("var.topic = 'Lua'")}\nWrite about {{ var.topic }} in {{ 2 + 3 }} lines.\n\n${block('return prose')}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('Write about Lua in 5 lines.');
  });

  it('runs a prose-only section as a model step and returns the last reply', async () => {
    const body = `# T\n\nYou are terse.\n\n## Ask\n\nName a color.\n\n## Check\n\n${block("var.reply = sys.replies['Ask']")}\n## Again\n\nAnd another?\n`;
    const outcome = await run(platform, prompt(body, 'models:\n  writer: {}\n'), { model: [{ content: 'red' }, { content: 'blue' }] });
    expect(resultOf(outcome)).toBe('blue');
    expect(outcome.events.filter((e) => e.type === 'model_turn_completed')).toHaveLength(2);
  });
});

describe('errors in Lua', () => {
  it('reports an uncaught error with the prompt file line', async () => {
    const error = await failure(`# T\n\n## A\n\n${block('local x = nil\nreturn x.field')}`);
    expect(error.kind).toBe('Lua');
    expect(error.message).toBe("test.md:13: attempt to index a nil value (local 'x')");
  });

  it("keeps a custom error value's kind and fields through pcall", async () => {
    const body = `# T\n\n## A\n\n${block("local ok, err = pcall(error, { kind = 'mine', detail = 7 })\nreturn err.kind .. err.detail")}`;
    expect(resultOf(await run(platform, prompt(body)))).toBe('mine7');
  });
});
