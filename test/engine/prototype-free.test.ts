/**
 * Names from a prompt are data, never the host's: var keys, args, section names and tool
 * names spelled like Object.prototype's members are ordinary keys, and nothing a run does
 * reaches the process's Object.prototype.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { argsFromData } from '../../src/prompt/run-args.ts';
import { lua, newPlatform, prompt, resultOf, run } from './helpers.ts';

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

const HOST_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  '__defineGetter__',
  '__lookupSetter__',
  'hasOwnProperty',
  'isPrototypeOf',
  'toString',
  'valueOf',
  'toLocaleString',
  'propertyIsEnumerable',
];

/** Whether Object.prototype is as a fresh process has it. */
function prototypeUntouched(): void {
  const probe = {} as Record<string, unknown>;
  for (const name of ['X', 'polluted', 'run_id', 'value', 'a']) expect(probe[name]).toBeUndefined();
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(BASELINE);
}
const BASELINE = Object.getOwnPropertyNames(Object.prototype).sort();

afterEach(prototypeUntouched);

async function value(code: string): Promise<string> {
  return resultOf(await run(platform, lua(code)));
}

describe.each(HOST_NAMES)('the var key %s', (name) => {
  const k = JSON.stringify(name);

  it('reads as nil before it is written, at the top and nested', async () => {
    expect(await value(`var.t = {}\nreturn tostring(var[${k}]) .. ' ' .. tostring(var.t[${k}])`)).toBe('nil nil');
  });

  it('holds what is written to it, as a scalar and as a nested table', async () => {
    expect(
      await value(
        `var[${k}] = 'v'\nvar.t = {}\nvar.t[${k}] = { X = 'deep' }\nvar.t[${k}][${k}] = 7\nreturn var[${k}] .. ' ' .. var.t[${k}].X .. ' ' .. var.t[${k}][${k}]`,
      ),
    ).toBe('v deep 7');
  });

  it('reaches no host object when written through: var.a[name].X = v', async () => {
    expect(await value(`var.a = {}\nvar.a[${k}] = {}\nvar.a[${k}].X = 'v'\nvar.a[${k}].polluted = true\nreturn json.encode(var.a)`)).toBe(
      `{${k}:{"X":"v","polluted":true}}`,
    );
  });

  it('is nil under a fresh table, so writing through it fails as indexing nil does', async () => {
    expect(
      await value(
        `var.a = {}\nlocal ok = pcall(function() var.a[${k}].X = 'v' end)\nlocal ok2 = pcall(function() var[${k}].polluted = 'v' end)\nreturn tostring(ok) .. tostring(ok2) .. json.encode(var.a)`,
      ),
    ).toBe('falsefalse{}');
  });

  it('keeps a table assigned whole, with the name inside it, as data', async () => {
    const out = await value(
      `var.b = { [${k}] = { X = 1, [${k}] = { 'l' } }, z = 2 }\nlocal seen = {}\nfor key, v in pairs(var.b) do seen[#seen + 1] = key end\nreturn json.encode(var.b) .. ' ' .. table.concat(seen, ',') .. ' ' .. #var.b[${k}][${k}]`,
    );
    const inner = [
      [k, '["l"]'],
      ['"X"', '1'],
    ]
      .sort((a, b) => (a[0]! < b[0]! ? -1 : 1))
      .map(([key, v]) => `${key}:${v}`)
      .join(',');
    const outer = [
      [k, `{${inner}}`],
      ['"z"', '2'],
    ]
      .sort((a, b) => (a[0]! < b[0]! ? -1 : 1))
      .map(([key, v]) => `${key}:${v}`)
      .join(',');
    expect(out).toBe(`{${outer}} ${[name, 'z'].sort().join(',')} 1`);
  });

  it('switches an empty table from object to list and back under that name', async () => {
    expect(await value(`var[${k}] = {}\nvar[${k}][1] = 'a'\nvar[${k}][1] = nil\nvar[${k}].x = 1\nreturn json.encode(var[${k}]) .. #var[${k}]`)).toBe(
      '{"x":1}0',
    );
  });

  it('is removed by assigning nil, and then reads nil again', async () => {
    expect(await value(`var[${k}] = 1\nvar[${k}] = nil\nreturn tostring(var[${k}]) .. json.encode(var)`)).toBe('nil{}');
  });

  it('counts in # and pairs only as the key it is', async () => {
    expect(
      await value(`var.l = { 1, 2 }\nvar.o = { [${k}] = 1 }\nlocal n = 0\nfor _ in pairs(var.o) do n = n + 1 end\nreturn #var.l .. ' ' .. #var.o .. ' ' .. n`),
    ).toBe('2 0 1');
  });

  it('replays to the same result and events', async () => {
    const target = lua(
      `var[${k}] = { [${k}] = { n = 1 } }\nvar[${k}][${k}].n = var[${k}][${k}].n + 1\nstore.write('f', json.encode(var))\nreturn json.encode(var) .. store.read('f')`,
    );
    const first = await run(platform, target);
    const again = await run(platform, target, { journal: first.journal });
    expect(resultOf(again)).toBe(resultOf(first));
    expect(resultOf(first)).toBe(`{${k}:{${k}:{"n":2}}}`.repeat(2));
    expect(again.events.map((e) => e.type)).toEqual(first.events.map((e) => e.type));
  });
});

describe('after a run that wrote every host name into var', () => {
  const writeAll = HOST_NAMES.map((n) => `var[${JSON.stringify(n)}] = { X = 'v', [${JSON.stringify(n)}] = { polluted = true } }`).join('\n');

  it('leaves Object.prototype untouched and lets the next run and parse work', async () => {
    expect(resultOf(await run(platform, lua(`${writeAll}\nreturn 'done'`)))).toBe('done');
    prototypeUntouched();
    expect(resultOf(await run(platform, prompt('# Next\n\n## A\n\n```lua\nreturn tostring(var.X) .. tostring(var.polluted)\n```\n')))).toBe('nilnil');
  });
});

describe('section names spelled like host names', () => {
  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'])('are ordinary sections: ## %s', async (name) => {
    const body = `# T\n\n## ${name}\n\n\`\`\`lua\nreturn sys.section_name .. '|' .. json.encode(sys.replies)\n\`\`\`\n`;
    expect(resultOf(await run(platform, prompt(body)))).toBe(`${name}|{}`);
  });
});

describe('run args spelled like host names', () => {
  it.each(HOST_NAMES)('are refused as undeclared: %s', (name) => {
    const given = JSON.parse(`{${JSON.stringify(name)}: "x"}`) as { [key: string]: string };
    const outcome = argsFromData(prompt('# T\n').frontmatter.args, given);
    expect(outcome).toMatchObject({ ok: false, arg: name, message: `unknown arg \`${name}\`: the prompt declares no args` });
  });

  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty'])('reach the run as the value declared: %s', async (name) => {
    const target = lua(`return args[${JSON.stringify(name)}] .. '|' .. json.encode(args)`, `args:\n  ${name}: string\n`);
    const outcome = argsFromData(target.frontmatter.args, { [name]: 'given' });
    if (!outcome.ok) throw new Error(outcome.message);
    expect(resultOf(await run(platform, target, { args: outcome.args }))).toBe(`given|{"${name}":"given"}`);
  });

  it.each(['constructor', 'toString', 'valueOf'])('are missing when declared and not given: %s', (name) => {
    const outcome = argsFromData(lua('return 1', `args:\n  ${name}: string\n`).frontmatter.args, {});
    expect(outcome).toMatchObject({ ok: false, arg: name, message: `missing required arg \`${name}\` (string)` });
  });
});

describe('a model that calls a tool named like a host name', () => {
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])('is told %s is out of scope, as for any unknown name', async (name) => {
    const outcome = await run(platform, prompt('# T\n\n## A\n\nSay hi.\n'), {
      model: [{ tool_calls: [{ id: 'c1', name, arguments: {} }] }, { content: 'done' }],
    });
    expect(outcome.status === 'failed' && outcome.error).toMatchObject({
      kind: 'Tool',
      message: `tool ${JSON.stringify(name)} is not in this section's scope; in-scope aliases: []`,
    });
  });
});
