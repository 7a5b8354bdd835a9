/**
 * Code Lua would run unmetered (a finalizer, an xpcall handler after the budget's stop) and
 * pattern matching that backtracks without end, on the real Worker: each run is cancelled
 * or ends with Limit, and while it spins /health and other runs still answer.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, getRun, json, settled, until } from './app/client.ts';
import { GREET } from './app/prompts.ts';

const lua = (code: string) => '```lua\n' + code + '\n```\n';
const spinner = (name: string, code: string) => `---
name: ${name}
description: Tries to run Lua outside the instruction budget.
runvil: 0
---
# Spin

## Main
${lua(code)}`;

const SPINNERS: [name: string, code: string][] = [
  ['spin-finalizer', `for i = 1, 1e9 do pcall(setmetatable, {}, { __gc = function() while true do end end }) end`],
  ['spin-handler', `while true do xpcall(function() while true do end end, function(e) while true do end end) end`],
  [
    'spin-nested-handler',
    `xpcall(function() while true do end end, function() return xpcall(function() while true do end end, function() pcall(function() while true do end end) end) end)`,
  ],
  ['spin-pattern', `while true do string.find(('a'):rep(60), ('a*'):rep(12) .. 'b') end`],
  ['spin-pattern-gsub', `local page = ('('):rep(40000) while true do page:gsub('%b()', '') end`],
];

beforeAll(async () => {
  await call('PUT', '/prompts/greet', { body: GREET });
  for (const [name, code] of SPINNERS) await call('PUT', `/prompts/${name}`, { body: spinner(name, code) });
});

const start = async (prompt: string) => (await json<{ run_id: string }>(await call('POST', `/prompts/${prompt}/runs`, { body: {} }), 202)).run_id;

describe('a run that tries to spin outside the budget', () => {
  for (const [name] of SPINNERS) {
    it(`${name}: leaves /health and other runs answering, and is cancelled or ends with Limit`, async () => {
      const runId = await start(name);
      expect(await json(await call('GET', '/health', { token: null }), 200)).toEqual({ ok: true });
      const other = await start('greet');
      expect(await settled(other)).toMatchObject({ status: 'completed', result: 'hello world x1' });
      // The budget may have ended it meanwhile (a pattern spends it fast); otherwise a cancel does.
      const response = await call('POST', `/runs/${runId}/cancel`, { body: { reason: 'spinning' } });
      const ended = response.status === 200 ? await response.json() : await getRun(runId);
      expect([
        ['cancelled', 'Cancelled'],
        ['failed', 'Limit'],
      ]).toContainEqual([ended.status, ended.error?.kind]);
    });
  }

  it('ends with Limit when nobody cancels it', async () => {
    const runId = await start('spin-pattern');
    const ended = await until(runId, (view) => view.status !== 'running');
    expect(ended).toMatchObject({ status: 'failed', error: { kind: 'Limit' } });
  }, 60_000);
});
