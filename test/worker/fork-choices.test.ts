/**
 * A fork's answers to an ask with choices (POST /runs/:id/fork), in workerd: only one of
 * the ask's choices reaches Lua, as the live route (POST /runs/:id/asks/:ask_id) takes only
 * those. Any other answer is refused with 400 naming the ask, its question and its choices,
 * matched exactly as the live route matches.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, drive, json, settled } from './app/client.ts';

const CHOOSY = `---
name: choosy
description: Asks with choices, then asks freely.
runvil: 0
uses: [user-input]
---
# Choosy

## Ask

\`\`\`lua
local picked = tools.call('user-input/ask', { question = 'Which café?', choices = { 'Yes', 'No', 'Café ☕', '日本' } })
local note = tools.call('user-input/ask', { question = 'Any note?' })
return picked .. '|' .. note
\`\`\`
`;

const fork = (runId: string, body: object | string) => call('POST', `/runs/${runId}/fork`, { body });
const refusal = async (response: Response): Promise<{ status: number; message: string }> => {
  const body = (await response.json()) as { error: { message: string } };
  return { status: response.status, message: body.error.message };
};

let runId: string;

beforeAll(async () => {
  await json(await call('PUT', '/prompts/choosy', { body: CHOOSY }), 201);
  const started = await json<{ run_id: string }>(await call('POST', '/prompts/choosy/runs', { body: { args: {} } }), 202);
  const done = await drive(started.run_id, ['Yes', 'first']);
  expect(done.result).toBe('Yes|first');
  runId = started.run_id;
});

describe("a fork's answer to an ask with choices", () => {
  it('is taken when it is one of them, and the fork goes on with it', async () => {
    // At 1 the journal holds the first ask only: the second is answered live.
    const started = await json<{ run_id: string }>(await fork(runId, { at: 1, answers: { '0-1': 'Café ☕' } }), 202);
    const done = await drive(started.run_id, ['second']);
    expect(done.result).toBe('Café ☕|second');
  });

  it('is refused with 400 outside them, naming the ask, its question and every choice', async () => {
    expect(await refusal(await fork(runId, { at: 2, answers: { '0-1': 'Maybe' } }))).toEqual({
      status: 400,
      message: '`answers`: the answer "Maybe" is not one of the choices of the ask 0-1 ("Which café?"): "Yes", "No", "Café ☕", "日本"',
    });
  });

  it('matches exactly: another case, whitespace around it, or another Unicode normal form is refused', async () => {
    for (const answer of ['yes', 'NO', ' Yes', 'Yes ', 'Yes\n', '\u00a0No', 'Café ☕'.normalize('NFD'), 'café ☕', '日本 ']) {
      const { status, message } = await refusal(await fork(runId, { at: 2, answers: { '0-1': answer } }));
      expect({ answer, status, message }).toEqual({
        answer,
        status: 400,
        message: `\`answers\`: the answer ${JSON.stringify(answer)} is not one of the choices of the ask 0-1 ("Which café?"): "Yes", "No", "Café ☕", "日本"`,
      });
    }
  });

  it('is refused when it is not a string (or an object, which only an ask with a form takes)', async () => {
    for (const [answer, kind] of [
      [5, 'a number'],
      [true, 'a boolean'],
      [null, 'a null'],
      [['Yes'], 'a list'],
    ] as const) {
      expect(await refusal(await fork(runId, { at: 2, answers: { '0-1': answer } }))).toEqual({
        status: 400,
        message: `\`answers\` gives the ask "0-1" ${kind}; an answer is a string, or an object for an ask with a form`,
      });
    }
    expect(await refusal(await fork(runId, { at: 2, answers: { '0-1': { choice: 'Yes' } } }))).toEqual({
      status: 400,
      message: '`answers`: the answer {"choice":"Yes"} is not one of the choices of the ask 0-1 ("Which café?"): "Yes", "No", "Café ☕", "日本"',
    });
  });

  it('is refused for an ask id the journal does not hold, or one after `at`, naming the asks it holds', async () => {
    for (const askId of ['0-9', '0-1.1', '0-01', ' 0-1', '__proto__']) {
      expect(await refusal(await fork(runId, { at: 2, answers: { [askId]: 'Yes' } }))).toEqual({
        status: 400,
        message: `\`answers\` names the ask ${JSON.stringify(askId)}, which the first 2 journal entries do not hold (they hold the asks 0-1, 0-2); an ask after them is answered live`,
      });
    }
    expect((await refusal(await fork(runId, { at: 0, answers: { '0-1': 'Yes' } }))).status).toBe(400);
  });

  it('leaves a free-text ask free, beside one with choices', async () => {
    const started = await json<{ run_id: string }>(await fork(runId, { at: 2, answers: { '0-1': 'No', '0-2': ' anything at all ' } }), 202);
    expect((await settled(started.run_id)).result).toBe('No| anything at all ');
  });
});
