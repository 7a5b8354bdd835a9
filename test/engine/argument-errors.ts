/**
 * The helper the argument-error suites share: Lua expressions run under pcall in one section
 * of a prompt that declares web and user-input and a `writer` role, each answered as
 * `kind|message`.
 */
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import { lua } from './helpers.ts';
import { WRITER, resultOf, runFixture } from './fixture-run.ts';

/** Runs each expression under pcall after `setup`; answers `kind|message` for each (`ok` when it did not raise). */
export async function argumentErrors(platform: LuaPlatform, expressions: string[], setup = ''): Promise<string[]> {
  const block = [
    'local out = {}',
    setup,
    ...expressions.map(
      (expression) =>
        `do local ok, err = pcall(function() return ${expression} end)\n` +
        "  out[#out + 1] = ok and 'ok' or (type(err) == 'string' and ('string|' .. err) or (tostring(err.kind) .. '|' .. tostring(err))) end",
    ),
    "return table.concat(out, '\\n')",
  ].join('\n');
  const outcome = await runFixture(platform, lua(block, `uses: [web, user-input]\n${WRITER}`), { host: { web: { pages: {} } } });
  return resultOf(outcome).split('\n');
}

/** What a lua-kind error with `message` reads as. */
export const lua_ = (message: string) => `lua|${message}`;
