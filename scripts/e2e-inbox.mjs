/**
 * The inbox and notifications part of the e2e check (scripts/e2e.mjs), against the real
 * local server: a notification receiver of the check's own on loopback, which verifies every
 * signature with the `standardwebhooks` package, and the checks of issue 16's "What it must
 * show": two runs with asks notified (each ask.created signed, with its token and answer
 * URL), GET /asks listing both, one answered with its notified token and gone from the list
 * when the answer returns, the same answer 200, another 409, one outside the choices 400, an
 * ask with a timeout closing as expired (ask.closed), run.completed, and a receiver that
 * fails three times and then gets every event, in order, under the same webhook-ids.
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** The secret the server signs notifications with (RUNVIL_NOTIFY_SECRET). */
export const NOTIFY_SECRET = 'whsec_ZTJlLWluYm94LXNlY3JldC1vZi10aGUtY2hlY2s=';

/** How many requests the flaky endpoint fails before it answers. */
const FLAKY_FAILURES = 3;

/**
 * A notification receiver on 127.0.0.1: `/ok` answers 204; `/flaky` answers 500 to its first
 * FLAKY_FAILURES requests, then 204. Every request is verified; one that does not verify is
 * recorded as a failure of the check.
 */
export async function startReceiver() {
  const webhook = new Webhook(NOTIFY_SECRET);
  const received = [];
  const bad = [];
  let flaky = 0;
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      let event;
      try {
        event = webhook.verify(body, headers);
      } catch (error) {
        bad.push(`${request.url}: ${error.message}`);
        response.writeHead(400).end();
        return;
      }
      const status = request.url === '/flaky' && flaky++ < FLAKY_FAILURES ? 500 : 204;
      received.push({ path: request.url, id: headers['webhook-id'], body, event, status });
      response.writeHead(status).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    bad,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The `notify:` section of the runvil.yaml the server is started with: both endpoints of the receiver, for the check's prompts. */
export function notifyYaml(receiver) {
  return `notify:
  - url: ${receiver.url}/ok
    secret: \${RUNVIL_NOTIFY_SECRET}
    prompts: [e2e-approve, e2e-hurry]
  - url: ${receiver.url}/flaky
    secret: \${RUNVIL_NOTIFY_SECRET}
    events: [ask.created, ask.closed, run.completed]
    prompts: [e2e-approve]
`;
}

const APPROVE = `---
name: e2e-approve
description: Asks for an approval.
runvil: 0
uses: [user-input]
args:
  what: { type: string }
---
# Approve

## Ask
\`\`\`lua
return args.what .. ': ' .. tools.call('user-input/ask', { question = 'Ship ' .. args.what .. '?', choices = { 'ship', 'hold' } })
\`\`\`
`;

const HURRY = `---
name: e2e-hurry
description: Asks with a timeout.
runvil: 0
uses: [user-input]
---
# Hurry

## Ask
\`\`\`lua
local ok, err = pcall(tools.call, 'user-input/ask', { question = 'Quick?', timeout = 2 })
return ok and 'answered' or tostring(err)
\`\`\`
`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `find` until it answers something (or `ms` pass). */
async function until(what, find, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const found = await find();
    if (found) return found;
    if (Date.now() > end) throw new Error(`never: ${what}`);
    await sleep(50);
  }
}

/** The inbox and notifications checks; `t` holds the e2e's api, base, step and check. */
export async function checkInbox(t, receiver) {
  const { api, base, step, check } = t;
  const at = (path) => receiver.received.filter((r) => r.path === path);
  await api('PUT', '/prompts/e2e-approve', { body: APPROVE, expect: 201 });
  await api('PUT', '/prompts/e2e-hurry', { body: HURRY, expect: 201 });

  const runA = (await api('POST', '/prompts/e2e-approve/runs', { body: { args: { what: 'the app' } }, expect: 202 })).run_id;
  const runB = (await api('POST', '/prompts/e2e-approve/runs', { body: { args: { what: 'the api' } }, expect: 202 })).run_id;
  const created = await until('both ask.created notifications', () => {
    const asks = at('/ok').filter((r) => r.event.type === 'ask.created');
    return asks.length >= 2 ? asks : null;
  });
  const notified = new Map(created.map((r) => [r.event.data.run_id, r.event.data]));
  for (const run of [runA, runB]) {
    const ask = notified.get(run);
    check(
      ask && /^[0-9a-f]{64}$/.test(ask.token) && ask.answer_url === `${base}/runs/${run}/asks/0-1`,
      `ask.created of run ${run} carries its token and answer_url: ${JSON.stringify(ask)}`,
    );
    check(
      JSON.stringify(ask.choices) === '["ship","hold"]' && ask.kind === 'ask' && ask.prompt === 'e2e-approve',
      `ask.created is the pending ask: ${JSON.stringify(ask)}`,
    );
  }
  step("both runs' ask.created arrived, signed, each with its token and answer_url");

  // An ask is in the index before its ask.created is sent: no wait here.
  const pending = await api('GET', '/asks?status=pending&prompt=e2e-approve');
  check(
    JSON.stringify(pending.asks.map((a) => a.run_id)) === JSON.stringify([runA, runB]) && pending.next_cursor === null,
    `GET /asks lists both, oldest first: ${JSON.stringify(pending)}`,
  );
  // Other changes (the runs' suspension) show within a second (3 s allowed on a loaded machine).
  await until(
    'both runs suspended in GET /runs',
    async () => {
      const listed = await api('GET', '/runs?prompt=e2e-approve&status=suspended');
      return listed.runs.length === 2 ? true : null;
    },
    3000,
  );
  const runs = await api('GET', '/runs?prompt=e2e-approve');
  check(
    JSON.stringify(runs.runs.map((r) => [r.run_id, r.status, r.pending_count])) ===
      JSON.stringify([
        [runB, 'suspended', 1],
        [runA, 'suspended', 1],
      ]),
    `GET /runs lists both, newest first: ${JSON.stringify(runs)}`,
  );

  // Answered as a chat bridge would: the notified answer_url, the notified token.
  const askA = notified.get(runA);
  const answer = (ask, text, expect = 200) =>
    fetch(ask.answer_url, {
      method: 'POST',
      headers: { authorization: `Bearer ${ask.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ answer: text, answered_by: 'e2e-bridge' }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  const taken = await answer(askA, 'ship');
  check(taken.status === 200 && taken.body.ask.status === 'answered', `the answer with the notified token: ${JSON.stringify(taken)}`);
  const after = await api('GET', '/asks?status=pending&prompt=e2e-approve');
  check(
    JSON.stringify(after.asks.map((a) => a.run_id)) === JSON.stringify([runB]),
    `the answered ask is gone from the pending list as the answer returns: ${JSON.stringify(after)}`,
  );
  check((await answer(askA, 'ship')).status === 200, 'the same answer again: 200');
  check((await answer(askA, 'hold')).status === 409, 'another answer: 409');
  const outside = await answer(notified.get(runB), 'maybe');
  check(
    outside.status === 400 && JSON.stringify(outside.body.error.choices) === '["ship","hold"]' && outside.body.error.field === 'answer',
    `an answer outside the choices: 400 naming them: ${JSON.stringify(outside)}`,
  );
  step('answered run A with its notified token: gone from GET /asks at once; same answer 200, another 409, outside the choices 400');

  const hurry = (await api('POST', '/prompts/e2e-hurry/runs', { body: {}, expect: 202 })).run_id;
  const expired = await until('the timed ask closes as expired', () => at('/ok').find((r) => r.event.type === 'ask.closed' && r.event.data.run_id === hurry));
  check(expired.event.data.reason === 'expired' && expired.event.data.answered_by === null, `ask.closed as expired: ${JSON.stringify(expired.event)}`);
  const hurried = await until('the timed run ends', async () => {
    const view = await api('GET', `/runs/${hurry}`);
    return view.status === 'completed' ? view : null;
  });
  check(hurried.result === "tool call failure: the operator's window closed", `the call failed with the closed window: ${JSON.stringify(hurried.result)}`);
  // Listed as expired within a second (the check allows 3 s on a loaded machine).
  await until(
    'GET /asks?status=expired lists the timed ask',
    async () => {
      const expiredList = await api('GET', '/asks?status=expired&prompt=e2e-hurry');
      return expiredList.asks.length === 1 && expiredList.asks[0].run_id === hurry ? true : null;
    },
    3000,
  );
  step('the ask with a 2 s timeout closed as expired (ask.closed), and the call failed with "the operator\'s window closed"');

  check((await answer(notified.get(runB), 'hold')).status === 200, 'run B answered');
  for (const run of [runA, runB]) {
    const completed = await until(`run.completed of ${run}`, () => at('/ok').find((r) => r.event.type === 'run.completed' && r.event.data.run_id === run));
    check(completed.event.data.status === 'completed' && completed.event.data.prompt === 'e2e-approve', `run.completed: ${JSON.stringify(completed.event)}`);
  }
  step("both runs' run.completed arrived");

  // The flaky endpoint failed its first three requests and then got every event, in order per run.
  const expected = (run) => [`${run}.1 ask.created`, `${run}.2 ask.closed`, `${run}.3 run.completed`];
  await until('every event at the flaky endpoint', () => {
    const delivered = at('/flaky').filter((r) => r.status === 204);
    return delivered.length >= 6 ? true : null;
  });
  const flaky = at('/flaky');
  check(flaky.filter((r) => r.status === 500).length === FLAKY_FAILURES, `the flaky endpoint failed ${FLAKY_FAILURES} requests`);
  for (const run of [runA, runB]) {
    const mine = flaky.filter((r) => r.event.data.run_id === run);
    const firsts = [...new Map(mine.map((r) => [r.id, `${r.id} ${r.event.type}`])).values()];
    check(JSON.stringify(firsts) === JSON.stringify(expected(run)), `run ${run}'s events at the flaky endpoint, in order: ${JSON.stringify(firsts)}`);
    // A failed delivery is followed by the same event again (same webhook-id, same body), never by a later one.
    check(
      mine.every((r, i) => i === 0 || mine[i - 1].status === 204 || (r.id === mine[i - 1].id && r.body === mine[i - 1].body)),
      `run ${run}: each failure redelivered under its webhook-id before the next event: ${mine.map((r) => `${r.id} ${r.status}`).join(', ')}`,
    );
    check(mine.at(-1).status === 204, `run ${run}: the last delivery landed`);
    const deliveries = await api('GET', `/runs/${run}/notifications`);
    for (const id of new Set(mine.map((r) => r.id))) {
      const tries = mine.filter((r) => r.id === id);
      const listed = deliveries.notifications.find((d) => d.url.endsWith('/flaky') && d.webhook_id === id);
      check(
        listed && listed.state === 'delivered' && listed.attempts === tries.length && listed.last_status === 204,
        `GET /runs/:id/notifications of ${id}: ${JSON.stringify(listed)} after ${tries.length} attempts`,
      );
    }
  }
  check(receiver.bad.length === 0, `every notification verified: ${JSON.stringify(receiver.bad)}`);
  step(
    `the flaky endpoint failed ${FLAKY_FAILURES} times, then got every event in order under the same webhook-ids; ${receiver.received.length} notifications, every signature verified`,
  );
}
