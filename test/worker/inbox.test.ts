/**
 * The inbox in workerd: `GET /asks` and `GET /runs` read the D1 index the run objects write
 * through their outbox. Pending asks are listed oldest first, the others newest first; an
 * answered ask is gone from the pending list when the answer's response arrives; pages
 * follow opaque cursors; bad query input is refused with 400 naming the field.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call, json, settled, testEnv, until } from './app/client.ts';
import { dropObjects } from './app/test-worker.ts';

vi.setConfig({ testTimeout: 30_000 });

const lua = (code: string) => '```lua\n' + code + '\n```\n';

/** Asks once, with choices; returns the answer. */
const APPROVE = `---
name: approve
description: Asks for an approval with two choices.
runvil: 0
uses: [user-input]
args:
  what: { type: string, default: the deploy }
---
# Approve

## Ask
${lua("return 'got ' .. tools.call('user-input/ask', { question = 'Approve ' .. args.what .. '?', choices = { 'yes', 'no' } })")}`;

/** Asks with a 1 s timeout; returns how the ask ended. */
const HURRY = `---
name: hurry
description: Asks with a timeout.
runvil: 0
uses: [user-input]
---
# Hurry

## Ask
${lua("local ok, err = pcall(tools.call, 'user-input/ask', { question = 'Quick?', timeout = 1 })\nreturn tostring(ok) .. '|' .. tostring(err)")}`;

interface ListedAsk {
  kind: 'ask';
  ask_id: string;
  run_id: string;
  prompt: string;
  question: string;
  choices: string[] | null;
  expires_at: string | null;
  token: string;
  answer_url: string;
  status: string;
  answered_by: string | null;
}
type Asks = { asks: ListedAsk[]; next_cursor: string | null };
type Runs = {
  runs: { run_id: string; prompt: string; status: string; created_at: string; ended_at: string | null; pending_count: number }[];
  next_cursor: string | null;
};

const start = async (prompt: string, args: object = {}): Promise<string> => {
  const { run_id } = await json<{ run_id: string }>(await call('POST', `/prompts/${prompt}/runs`, { body: { args } }), 202);
  await settled(run_id);
  return run_id;
};
const asks = async (query: string): Promise<Asks> => json<Asks>(await call('GET', `/asks?${query}`), 200);
const runs = async (query: string): Promise<Runs> => json<Runs>(await call('GET', `/runs?${query}`), 200);

/** Polls until `check` passes (the index shows other changes within a second). */
async function eventually(check: () => Promise<void>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (error) {
      if (i > 300) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

beforeAll(async () => {
  await json(await call('PUT', '/prompts/approve', { body: APPROVE }), 201);
  await json(await call('PUT', '/prompts/hurry', { body: HURRY }), 201);
});

describe('the inbox of two runs that ask', () => {
  let first: string;
  let second: string;

  beforeAll(async () => {
    first = await start('approve', { what: 'the first' });
    second = await start('approve', { what: 'the second' });
  });

  it('lists both pending asks, oldest first, each with its token, answer URL and choices', async () => {
    await eventually(async () => {
      const listed = await asks('status=pending&prompt=approve');
      expect(listed.asks.map((ask) => ask.run_id)).toEqual([first, second]);
      expect(listed.next_cursor).toBeNull();
      expect(listed.asks[0]).toEqual({
        kind: 'ask',
        ask_id: '0-1',
        run_id: first,
        prompt: 'approve',
        task: '0',
        question: 'Approve the first?',
        choices: ['yes', 'no'],
        form: null,
        asked_at: expect.stringMatching(/^\d{4}-/),
        expires_at: null,
        token: expect.stringMatching(/^[0-9a-f]{64}$/),
        answer_url: `https://runvil.test/runs/${first}/asks/0-1`,
        status: 'pending',
        answered_by: null,
      });
    });
    // The listed token is the ask's own: the run view shows the same one.
    const view = await json<{ pending: { token: string }[] }>(await call('GET', `/runs/${first}`), 200);
    expect((await asks('prompt=approve')).asks[0]!.token).toBe(view.pending[0]!.token);
  });

  it('lists both runs, newest first, with their pending asks counted', async () => {
    await eventually(async () => {
      const listed = await runs('prompt=approve');
      expect(listed.runs).toEqual([
        {
          run_id: second,
          prompt: 'approve',
          status: 'suspended',
          created_at: expect.any(String),
          ended_at: null,
          pending_count: 1,
          build: expect.objectContaining({ engine: expect.any(String) }),
        },
        {
          run_id: first,
          prompt: 'approve',
          status: 'suspended',
          created_at: expect.any(String),
          ended_at: null,
          pending_count: 1,
          build: expect.objectContaining({ engine: expect.any(String) }),
        },
      ]);
    });
  });

  it('refuses an answer outside the choices with 400 naming them, and lists the ask still', async () => {
    const ask = (await asks('prompt=approve')).asks[0]!;
    const refused = await call('POST', `/runs/${first}/asks/0-1`, { body: { answer: 'maybe' }, token: ask.token });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: { message: 'the answer must be one of the ask\'s choices: "yes", "no"', field: 'answer', choices: ['yes', 'no'] },
    });
    expect((await asks('prompt=approve')).asks.map((listed) => listed.run_id)).toEqual([first, second]);
  });

  it('drops an answered ask from the pending list by the time the answer returns', async () => {
    const ask = (await asks('prompt=approve')).asks[0]!;
    const answered = await call('POST', ask.answer_url.replace('https://runvil.test', ''), {
      body: { answer: 'yes', answered_by: 'ada@example.com' },
      token: ask.token,
    });
    expect(answered.status).toBe(200);
    // No wait, no poll: the very next read.
    expect((await asks('status=pending&prompt=approve')).asks.map((listed) => listed.run_id)).toEqual([second]);
    expect((await asks('status=answered&prompt=approve')).asks).toEqual([
      expect.objectContaining({ run_id: first, ask_id: '0-1', status: 'answered', answered_by: 'ada@example.com' }),
    ]);
  });

  it('takes the same answer again (200), refuses another (409)', async () => {
    const token = (await asks('status=answered&prompt=approve')).asks[0]!.token;
    expect((await call('POST', `/runs/${first}/asks/0-1`, { body: { answer: 'yes' }, token })).status).toBe(200);
    expect((await call('POST', `/runs/${first}/asks/0-1`, { body: { answer: 'no' }, token })).status).toBe(409);
  });

  it('shows the first run completed in the run list, with no pending ask', async () => {
    await eventually(async () => {
      const listed = await runs('prompt=approve&status=completed');
      expect(listed.runs).toEqual([
        {
          run_id: first,
          prompt: 'approve',
          status: 'completed',
          created_at: expect.any(String),
          ended_at: expect.stringMatching(/^\d{4}-/),
          pending_count: 0,
          build: expect.objectContaining({ engine: expect.any(String) }),
        },
      ]);
    });
    expect((await runs('prompt=approve&status=suspended')).runs.map((run) => run.run_id)).toEqual([second]);
  });

  it("closes the other run's ask as cancelled when the run is cancelled", async () => {
    await json(await call('POST', `/runs/${second}/cancel`), 200);
    await eventually(async () => {
      expect((await asks('status=pending&prompt=approve')).asks).toEqual([]);
      expect((await asks('status=cancelled&prompt=approve')).asks.map((ask) => ask.run_id)).toEqual([second]);
    });
  });
});

describe('an answer that reaches a new object', () => {
  it('is out of the pending list by the time the answer returns, after the object that held the run was dropped', async () => {
    await json(await call('PUT', '/prompts/approve-later', { body: APPROVE.replace('name: approve', 'name: approve-later') }), 201);
    const runId = await start('approve-later');
    await eventually(async () => expect((await asks('status=pending&prompt=approve-later')).asks.map((ask) => ask.run_id)).toEqual([runId]));
    const { token } = (await asks('status=pending&prompt=approve-later')).asks[0]!;
    // An eviction: the answer is the first call of a new object, which replays the run.
    await dropObjects();
    expect((await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'no' }, token })).status).toBe(200);
    expect((await asks('status=pending&prompt=approve-later')).asks).toEqual([]);
    expect((await asks('status=answered&prompt=approve-later')).asks.map((ask) => ask.run_id)).toEqual([runId]);
    expect(await until(runId, (view) => view.status !== 'running' && view.status !== 'suspended')).toMatchObject({ status: 'completed', result: 'got no' });
  });
});

describe('answers an attacker would send', () => {
  it('are refused with 400 naming the field, and the ask stays pending, unanswered', async () => {
    const runId = await start('approve', { what: 'the attack' });
    const token = (await json<{ pending: ListedAsk[] }>(await call('GET', `/runs/${runId}`), 200)).pending[0]!.token;
    const send = (body: unknown) => call('POST', `/runs/${runId}/asks/0-1`, { body, token });
    for (const [body, field] of [
      [{ answer: 1 }, 'answer'],
      [{ answer: ['yes'] }, 'answer'],
      [{ answer: null }, 'answer'],
      [{ answer: { yes: true } }, 'answer'],
      [{}, 'answer'],
      [{ answer: 'yes', answered_by: 'x'.repeat(201) }, 'answered_by'],
      [{ answer: 'yes', answered_by: 7 }, 'answered_by'],
      [{ answer: 'Yes' }, 'answer'],
      [{ answer: 'yes ' }, 'answer'],
      [{ answer: '' }, 'answer'],
      [{ answer: 'yes\u0000' }, 'answer'],
      [{ answer: 'yes', extra: 1 }, 'extra'],
    ] as const) {
      const response = await send(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: { field: string } }).error.field).toBe(field);
    }
    const view = await json<{ status: string; pending: ListedAsk[] }>(await call('GET', `/runs/${runId}`), 200);
    expect(view.status).toBe('suspended');
    expect(view.pending.map((ask) => ask.ask_id)).toEqual(['0-1']);
    await eventually(async () => expect((await asks('prompt=approve')).asks.map((ask) => ask.run_id)).toContain(runId));
    await json(await call('POST', `/runs/${runId}/cancel`), 200);
  });
});

describe('choices and timeouts a prompt gets wrong', () => {
  const BAD = (args: string) => `---
name: bad-ask
description: Asks with bad choices or timeout.
runvil: 0
uses: [user-input]
---
# Bad ask

## Ask
${lua(`local ok, err = pcall(tools.call, 'user-input/ask', ${args})
return tostring(ok) .. '|' .. tostring(err)`)}`;

  it('fail the call with a model-safe message, asking no one', async () => {
    for (const args of [
      "{ question = 'x', choices = {} }",
      "{ question = 'x', choices = { 1, 2 } }",
      "{ question = 'x', choices = { 'a', 'a' } }",
      "{ question = 'x', choices = { '' } }",
      "{ question = 'x', choices = 'yes' }",
      "{ question = 'x', choices = { ('y'):rep(201) } }",
      "{ question = 'x', timeout = 0 }",
      "{ question = 'x', timeout = -5 }",
      "{ question = 'x', timeout = '10' }",
      "{ question = 'x', timeout = 1e9 }",
    ]) {
      expect([200, 201]).toContain((await call('PUT', '/prompts/bad-ask', { body: BAD(args) })).status);
      const view = await json<{ status: string; result: string }>(await call('POST', '/prompts/bad-ask/runs?wait=10', { body: {} }), 200);
      expect(view.status, args).toBe('completed');
      expect(view.result, args).toMatch(/^false\|tool call failure: user-input_ask: (argument|choices|timeout)/);
    }
  });
});

describe('an ask with a timeout', () => {
  it('closes as expired at its deadline; the call fails with the closed window, and the ask is listed as expired', async () => {
    const runId = await start('hurry');
    const pending = (await json<{ pending: ListedAsk[] }>(await call('GET', `/runs/${runId}`), 200)).pending[0]!;
    expect(Date.parse(pending.expires_at!) - Date.parse((pending as unknown as { asked_at: string }).asked_at)).toBe(1000);
    const done = await json<{ status: string; result: string }>(await call('GET', `/runs/${runId}`), 200);
    expect(done.status).toBe('suspended');
    await eventually(async () => {
      const view = await json<{ status: string; result: string }>(await call('GET', `/runs/${runId}`), 200);
      expect(view).toMatchObject({ status: 'completed', result: "false|tool call failure: the operator's window closed" });
    });
    await eventually(async () => expect((await asks('status=expired&prompt=hurry')).asks.map((ask) => ask.run_id)).toEqual([runId]));
    const late = await call('POST', `/runs/${runId}/asks/0-1`, { body: { answer: 'now' } });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: { message: string } }).error.message).toBe(
      `ask 0-1 is no longer pending: it expired at ${pending.expires_at}, so the answer is stale`,
    );
  });
});

describe('pages', () => {
  it('follow next_cursor through every run and every ask, once each, and end with null', async () => {
    const ids = [await start('approve', { what: 'p1' }), await start('approve', { what: 'p2' }), await start('approve', { what: 'p3' })];
    // Other changes show within a second: the three runs' rows, once their asks are pending.
    await eventually(async () => {
      expect((await asks('prompt=approve')).asks.length).toBe(3);
      expect((await runs('prompt=approve&status=suspended')).runs.length).toBe(3);
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Asks = await asks(`prompt=approve&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.asks.map((ask) => ask.run_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const runIds: string[] = [];
    cursor = null;
    do {
      const page: Runs = await runs(`prompt=approve&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.runs.length).toBe(1);
      runIds.push(page.runs[0]!.run_id);
      cursor = page.next_cursor;
    } while (cursor);
    expect(runIds.slice(0, 3)).toEqual([...ids].reverse());
    expect(new Set(runIds).size).toBe(runIds.length);
  });
});

describe('bad query input', () => {
  const refusal = async (path: string) => {
    const response = await call('GET', path);
    expect(response.status).toBe(400);
    return ((await response.json()) as { error: { message: string; field: string } }).error;
  };

  it('refuses unknown and repeated parameters, naming them', async () => {
    expect(await refusal('/asks?state=pending')).toEqual({
      message: 'unknown query parameter `state`; this route takes `status`, `prompt`, `limit`, `cursor`',
      field: 'state',
    });
    expect((await refusal('/runs?order=asc')).field).toBe('order');
    expect((await refusal('/asks?status=pending&status=answered')).field).toBe('status');
    expect((await refusal('/runs?__proto__=x')).field).toBe('__proto__');
  });

  it('refuses unknown values of status and limit', async () => {
    expect(await refusal('/asks?status=open')).toEqual({
      message: '`status` must be one of pending, answered, expired, cancelled, not "open"',
      field: 'status',
    });
    expect((await refusal('/runs?status=pending')).field).toBe('status');
    for (const limit of ['0', '201', '-1', '1.5', 'ten', '', '1e2', '99999']) expect((await refusal(`/runs?limit=${limit}`)).field).toBe('limit');
    expect((await refusal('/asks?prompt=')).field).toBe('prompt');
  });

  it("refuses cursors that are not this list's own", async () => {
    const forged = (parts: unknown) => btoa(JSON.stringify(parts)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
    const runsCursor = forged(['runs', '2026-01-01T00:00:00.000Z', 'f'.repeat(64)]);
    for (const cursor of [
      'x',
      '!!!',
      'a'.repeat(3000),
      forged({}),
      forged(['runs', 1, 2]),
      forged(['runs', 'a']),
      forged(['asks:answered', 'a', 'b', 'c']),
      runsCursor,
    ]) {
      expect((await refusal(`/asks?cursor=${encodeURIComponent(cursor)}`)).field).toBe('cursor');
    }
    expect((await refusal(`/runs?cursor=${forged(['asks:pending', 'a', 'b', 'c'])}`)).field).toBe('cursor');
    // A well-formed cursor of the list reads the rows after it.
    expect((await runs(`cursor=${runsCursor}`)).runs).toEqual([]);
  });

  it('refuses the lists without the API token, and with an ask token', async () => {
    expect((await call('GET', '/asks', { token: null })).status).toBe(401);
    expect((await call('GET', '/runs', { token: 'a'.repeat(64) })).status).toBe(401);
  });
});

describe('the index', () => {
  it('serves every list query from an index that fits it (no scan, no sort)', async () => {
    const plans = async (sql: string, params: (string | number)[]) =>
      (
        await testEnv.RUNVIL_DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .bind(...params)
          .all<{ detail: string }>()
      ).results
        .map((row) => row.detail)
        .join('; ');
    const { runsPageSql, asksPageSql } = await import('../../src/worker/outbox/run-index.ts');
    const after = { created_at: '2026-01-01', run_id: 'f' };
    for (const prompt of [null, 'approve']) {
      for (const status of [null, 'completed'] as const) {
        const { sql, params } = runsPageSql({ prompt, status, limit: 51, after });
        const plan = await plans(sql, params);
        expect(plan).toMatch(/USING (COVERING )?INDEX runs_by/);
        expect(plan).not.toMatch(/TEMP B-TREE|SCAN runs(?! USING)/);
      }
    }
    for (const prompt of [null, 'approve']) {
      for (const status of ['pending', 'answered'] as const) {
        const { sql, params } = asksPageSql({ prompt, status, limit: 51, after: { asked_at: '2026', run_id: 'a', ask_id: '0-1' } });
        const plan = await plans(sql, params);
        expect(plan).toMatch(/USING (COVERING )?INDEX asks_by/);
        expect(plan).not.toMatch(/TEMP B-TREE/);
      }
    }
  });
});
