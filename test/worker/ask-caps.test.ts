/**
 * The caps on an ask, end to end in the Worker: a question past 8,000 characters, more than
 * 25 choices, a choice past 200 characters, choices given twice or none, a timeout outside
 * (0, 30 days]: the call fails in Lua with a message saying which cap, and the ask is never
 * stored, listed in GET /asks, or notified. Asks within the caps go through as before.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFICATION_TYPES } from '../../src/config/deployment-config.ts';
import { MAX_CHOICE_CHARS, MAX_CHOICES, MAX_QUESTION_CHARS } from '../../src/host/ask-limits.ts';
import { call, json, settled } from './app/client.ts';
import { notifications } from './app/test-worker.ts';

const lua = (code: string) => '```lua\n' + code + '\n```\n';

/** Asks with a question of `chars` characters, `count` choices of `length` characters (0: none), and `timeout` (0: none); answers how the call ended. */
const CAPPED = `---
name: capped
description: Asks with the sizes it is given.
runvil: 0
uses: [user-input]
args:
  chars: { type: integer, default: 10 }
  count: { type: integer, default: 0 }
  length: { type: integer, default: 3 }
  twice: { type: boolean, default: false }
  timeout: { type: number, default: 0 }
---
# Capped

## Ask
${lua(`local spec = { question = string.rep('q', args.chars) }
if args.count > 0 then
  spec.choices = {}
  for i = 1, args.count do
    local n = tostring(args.twice and 1 or i)
    spec.choices[i] = string.rep('c', args.length - #n) .. n
  end
end
if args.timeout ~= 0 then spec.timeout = args.timeout end
local ok, out = pcall(tools.call, 'user-input/ask', spec)
return (ok and 'answered: ' or 'refused: ') .. tostring(out)`)}`;

const URL = 'https://chat.test/caps';

beforeAll(async () => {
  await json(await call('PUT', '/prompts/capped', { body: CAPPED }), 201);
});

afterEach(() => {
  notifications.targets = [];
});

async function run(args: object): Promise<{ runId: string; status: string; result: string | null; pending: unknown[] }> {
  notifications.targets = [{ url: URL, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', events: new Set(NOTIFICATION_TYPES), prompts: null }];
  const { run_id: runId } = await json<{ run_id: string }>(await call('POST', '/prompts/capped/runs', { body: { args } }), 202);
  const view = await settled(runId);
  return { runId, status: view.status, result: view.result, pending: view.pending };
}

/** Runs `args` and checks the ask was refused in Lua with `message`, and left no trace as an ask. */
async function refused(args: object, message: string | RegExp): Promise<void> {
  const before = notifications.sent.length;
  const { runId, status, result, pending } = await run(args);
  expect(status).toBe('completed');
  expect(result).toMatch(/^refused: /);
  expect(result).toMatch(message);
  expect(pending).toEqual([]);
  const listed = await json<{ asks: { run_id: string }[] }>(await call('GET', '/asks?status=pending&prompt=capped&limit=100'), 200);
  expect(listed.asks.filter((ask) => ask.run_id === runId)).toEqual([]);
  const events = await (await call('GET', `/runs/${runId}/events`)).text();
  expect(events).not.toContain('ask_pending');
  const created = notifications.sent.slice(before).filter((sent) => sent.url === URL && sent.body.includes('"ask.created"'));
  expect(created).toEqual([]);
}

describe('an ask within the caps', () => {
  it(`waits for its answer with a question of ${MAX_QUESTION_CHARS} characters and ${MAX_CHOICES} choices of ${MAX_CHOICE_CHARS}`, async () => {
    const { runId, status, pending } = await run({ chars: MAX_QUESTION_CHARS, count: MAX_CHOICES, length: MAX_CHOICE_CHARS, timeout: 2_592_000 });
    expect(status).toBe('suspended');
    expect(pending).toHaveLength(1);
    await json(await call('POST', `/runs/${runId}/cancel`), 200);
  });
});

describe('an ask past a cap', () => {
  for (const chars of [MAX_QUESTION_CHARS + 1, 100_000, 2_000_000]) {
    it(`is refused in Lua, and never stored, listed or notified, for a question of ${chars} characters`, async () => {
      await refused({ chars }, new RegExp(`question.*(${chars} characters long|at most ${MAX_QUESTION_CHARS})`));
    });
  }

  for (const count of [MAX_CHOICES + 1, 1000]) {
    it(`is refused for ${count} choices`, async () => {
      await refused({ count }, /choices/);
    });
  }

  for (const length of [MAX_CHOICE_CHARS + 1, 10_000]) {
    it(`is refused for a choice of ${length} characters`, async () => {
      await refused({ count: 2, length }, /choices/);
    });
  }

  it('is refused for a choice given twice', async () => {
    await refused({ count: 2, twice: true }, /choices must be a list of 1 to 25 distinct strings/);
  });

  for (const timeout of [-1, 2_592_001, 1e308]) {
    it(`is refused for a timeout of ${timeout} seconds`, async () => {
      await refused({ timeout }, /timeout/);
    });
  }
});
