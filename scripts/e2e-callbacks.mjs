/**
 * The end-to-end check's HTTP tool service run (scripts/e2e.mjs): a run suspended on a call
 * to a tool service that answered 202 waits across a restart of the server; bad callbacks
 * change nothing, and the service's signed result completes it.
 */
import { check, sleep, step } from './e2e-client.mjs';

const DEPLOY = `---
name: e2e-deploy
description: Deploys through an HTTP tool service.
runvil: 0
uses: [acme/deploy]
args:
  tool: { type: string, default: start }
---
# E2E deploy

## Go
\`\`\`lua
local ok, out = pcall(tools.call, 'deploy/' .. args.tool, { service = 'api' })
return (ok and 'ok: ' or 'failed: ') .. tostring(out)
\`\`\`
`;

/** Starts a run that calls deploy/start; answers it once it is suspended on the call. */
export async function startDeployRun({ api, untilSettled, service, base }) {
  await api('PUT', '/prompts/e2e-deploy', { body: DEPLOY, expect: 201 });
  const { run_id: runId } = await api('POST', '/prompts/e2e-deploy/runs', { body: {}, expect: 202 });
  const view = await untilSettled(runId);
  const call = service.calls.find((got) => got.body.run_id === runId);
  check(call !== undefined, `the service got a signed call for run ${runId}: ${JSON.stringify(service.calls)}`);
  check(
    call.webhookId === call.body.call_id && call.body.type === 'tool.call' && call.body.tool === 'deploy/start' && call.body.arguments.service === 'api',
    `the call's headers and body: ${JSON.stringify(call)}`,
  );
  check(
    call.body.callback_url === `${base}/runs/${runId}/tool-results/${call.body.call_id}` && /^[0-9a-f]{64}$/.test(call.body.callback_token),
    `the callback: ${JSON.stringify(call.body)}`,
  );
  const pending = view.pending[0];
  check(
    view.status === 'suspended' &&
      view.pending.length === 1 &&
      pending.kind === 'tool' &&
      pending.call_id === call.body.call_id &&
      pending.tool === 'deploy/start' &&
      pending.deadline === call.body.deadline,
    `suspended with the call pending: ${JSON.stringify(view)}`,
  );
  step(`run ${runId} is suspended on tool call ${call.body.call_id} (the service answered 202)`);
  return { runId, view, call };
}

/** After the restart: the run waits as before; bad callbacks change nothing; the result completes it. */
export async function finishDeployRun({ api, untilSettled, service, base, token }, { runId, view, call }) {
  const { call_id: callId, callback_url: url, callback_token: callToken } = call.body;
  const after = await api('GET', `/runs/${runId}`);
  check(JSON.stringify(after) === JSON.stringify(view), `the waiting run is as it was before the restart: ${JSON.stringify(after)}`);
  const post = (body, bearer, path = new URL(url).pathname) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const refusals = [
    [await post({ output: 'x' }, 'f'.repeat(64)), 401, 'a wrong token'],
    [await post({ output: 'x' }, token.slice(1)), 401, 'a near miss of the API token'],
    [await post({ output: 'x' }, callToken, `/runs/${runId}/tool-results/tc_${'0'.repeat(32)}`), 401, "the call's token on another call id"],
    [await post({ output: 'x' }, token, `/runs/${runId}/tool-results/tc_${'0'.repeat(32)}`), 404, 'an unknown call id'],
    [await post('{"output": ', callToken), 400, 'a body that is not JSON'],
    [await post({ result: 'x' }, callToken), 400, 'a body with an unknown key'],
  ];
  for (const [response, status, what] of refusals)
    check(response.status === status, `${what}: expected ${status}, got ${response.status}: ${await response.text()}`);
  check(service.calls.filter((got) => got.body.run_id === runId).length === 1, 'the call was sent once, across the restart');
  const accepted = await service.deliver(url, callToken, { output: 'live at v42' });
  check(
    accepted.status === 200 && JSON.stringify(accepted.body) === '{"accepted":true}',
    `the result is accepted, with nothing about the run: ${JSON.stringify(accepted)}`,
  );
  const done = await untilSettled(runId);
  check(done.status === 'completed' && done.result === 'ok: live at v42', `completed with the result: ${JSON.stringify(done)}`);
  check((await service.deliver(url, callToken, { output: 'live at v42' })).status === 200, 'the same result again gets 200');
  const other = await service.deliver(url, callToken, { output: 'live at v43' });
  check(other.status === 409, `a different result gets 409: ${JSON.stringify(other)}`);
  step(`run ${runId} waited on its tool call across the restart and completed with the result; the same result again 200, another 409, bad callbacks refused`);

  const { run_id: quickId } = await api('POST', '/prompts/e2e-deploy/runs', { body: { args: { tool: 'quick' } }, expect: 202 });
  let quick = await untilSettled(quickId);
  check(quick.status === 'suspended' && quick.pending[0]?.kind === 'tool', `the quick call waits: ${JSON.stringify(quick)}`);
  for (let i = 0; i < 100 && quick.status !== 'completed'; i++) {
    await sleep(100);
    quick = await api('GET', `/runs/${quickId}`);
  }
  check(
    quick.status === 'completed' && quick.result === 'failed: tool call failure: deploy/quick: no result within 2 s',
    `the deadline's failure: ${JSON.stringify(quick)}`,
  );
  step(`run ${quickId}: no result within the tool's 2 s timeout, the call failed with its message`);
}
