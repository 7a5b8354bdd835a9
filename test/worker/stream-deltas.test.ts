/**
 * A model step's text as it arrives on a run's event stream (`model_delta`), in workerd: the
 * model streams through the real openai provider and its parser (app/stream-model.ts), the
 * deltas go on GET /runs/:id/events and never into the stored events or the journal, a
 * client that reconnects mid-step gets the step's text so far as one delta and then the rest,
 * a cancel closes the model's stream, and a replay makes no deltas.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, getRun, json, settled, until } from './app/client.ts';
import { echoPieces, end, nextTurn, resetStreamModel, send, streamModel, untilTrue } from './app/stream-model.ts';
import { dropObjects } from './app/test-worker.ts';
import { readSse, STREAMER, TWINS, type SseMessage } from './stream-support.ts';

beforeAll(async () => {
  await call('PUT', '/prompts/streamer', { body: STREAMER });
  await call('PUT', '/prompts/twins', { body: TWINS });
});

beforeEach(() => resetStreamModel());

const start = async (prompt: string, args: object = {}) =>
  (await json<{ run_id: string }>(await call('POST', `/prompts/${prompt}/runs`, { body: { args } }), 202)).run_id;

const deltasOf = (messages: SseMessage[]) => messages.filter((message) => message.data.type === 'model_delta');
const textOf = (messages: SseMessage[]) =>
  deltasOf(messages)
    .map((message) => message.data.text as string)
    .join('');

describe('model_delta on the event stream', () => {
  it('sends each piece in order before the step ends, and the pieces make the journaled reply', async () => {
    streamModel.gated = true;
    const runId = await start('streamer', { topic: 'tides' });
    const reader = readSse(await call('GET', `/runs/${runId}/events`));
    const turn = await nextTurn();
    const pieces = ['Tides ', 'rise ', 'and ', 'fall.'];
    const seen: SseMessage[] = [];
    for (const piece of pieces) {
      await send(turn, piece);
      // Each piece arrives while the step is still in flight: the model has not ended its reply.
      const message = await reader.next((m) => m.data.type === 'model_delta');
      seen.push(message);
      expect(message.data.text).toBe(piece);
      expect(message.id).toBeUndefined();
    }
    end(turn);
    const rest = await reader.rest();
    const all = [...reader.before, ...seen, ...rest];
    const started = all.find((m) => m.data.type === 'model_turn_started')!;
    const completed = all.find((m) => m.data.type === 'model_turn_completed')!;
    expect(seen.every((m) => m.data.step === started.data.seq && m.data.task === '0')).toBe(true);
    // Every delta comes after its step's model_turn_started and before its model_turn_completed.
    expect(all.indexOf(started)).toBeLessThan(all.indexOf(seen[0]!));
    expect(all.indexOf(seen.at(-1)!)).toBeLessThan(all.indexOf(completed));
    expect(textOf(all)).toBe('Tides rise and fall.');
    expect(completed.data.content).toBe('Tides rise and fall.');
    const view = await getRun(runId);
    expect(view.result).toBe('Tides rise and fall.');
    // Never stored: the stream read again has the events alone.
    const again = await readSse(await call('GET', `/runs/${runId}/events`)).rest();
    expect(deltasOf(again)).toEqual([]);
    expect(again.map((m) => m.data.seq)).toEqual(all.filter((m) => m.id !== undefined).map((m) => m.data.seq));
  });

  it('gives a client that reconnects mid-step the text so far as one delta, then the rest: nothing lost, nothing repeated', async () => {
    streamModel.gated = true;
    const runId = await start('streamer', { topic: 'reconnects' });
    const first = readSse(await call('GET', `/runs/${runId}/events`));
    const turn = await nextTurn();
    await send(turn, 'One ', 'two ');
    await first.next((m) => m.data.type === 'model_delta' && m.data.text === 'two ');
    const lastId = first.lastId();
    await first.cancel();
    // Said while no one listens.
    await send(turn, 'three ');
    const second = readSse(await call('GET', `/runs/${runId}/events`, { headers: { 'last-event-id': lastId! } }));
    const catchUp = await second.next((m) => m.data.type === 'model_delta');
    expect(catchUp.data).toMatchObject({ type: 'model_delta', task: '0', text: 'One two three ' });
    await send(turn, 'four.');
    end(turn);
    const rest = await second.rest();
    // Nothing the client had read before comes again, and after the catch-up only the rest.
    expect(second.before.filter((m) => m.id !== undefined)).toEqual([]);
    expect(textOf([catchUp, ...rest])).toBe('One two three four.');
    expect((await getRun(runId)).result).toBe('One two three four.');
  });

  it('sends no delta of a step that has ended to a client that reconnects after it: the completed reply is in the events', async () => {
    const runId = await start('streamer', { topic: 'after', ask: true });
    await until(runId, (view) => view.status === 'suspended');
    const messages = await readSse(await call('GET', `/runs/${runId}/events`, { headers: { 'last-event-id': '1' } })).until(
      (m) => m.data.type === 'run_suspended',
    );
    expect(deltasOf(messages)).toEqual([]);
    expect(messages.find((m) => m.data.type === 'model_turn_completed')!.data.content).toBe(echoPieces('Write about after').join(''));
  });

  it("names each task's step and task in its deltas", async () => {
    streamModel.gated = true;
    const runId = await start('twins');
    const reader = readSse(await call('GET', `/runs/${runId}/events`));
    const turns = [await nextTurn(), await nextTurn()];
    const topic = (turn: (typeof turns)[number]) => turn.body.messages.at(-1)!.content!;
    // Both steps are in flight at once, their pieces interleaved.
    for (const word of ['a ', 'b ', 'c']) for (const turn of turns) await send(turn, `${topic(turn)}:${word}`);
    for (const turn of turns) end(turn);
    const messages = [...(await reader.rest())];
    expect((await settled(runId)).status).toBe('completed');
    for (const task of ['0.0', '0.1']) {
      const started = messages.find((m) => m.data.type === 'model_turn_started' && m.data.task === task)!;
      const completed = messages.find((m) => m.data.type === 'model_turn_completed' && m.data.task === task)!;
      const own = deltasOf(messages).filter((m) => m.data.task === task);
      expect(own).toHaveLength(3);
      expect(own.every((m) => m.data.step === started.data.seq)).toBe(true);
      expect(own.map((m) => m.data.text).join('')).toBe(completed.data.content);
    }
  });

  it("closes the model's stream when the run is cancelled during the step", async () => {
    streamModel.gated = true;
    const runId = await start('streamer', { topic: 'cancels' });
    const turn = await nextTurn();
    await send(turn, 'Half ');
    await json(await call('POST', `/runs/${runId}/cancel`, { body: {} }), 200);
    await untilTrue(() => turn.wasClosed);
    expect(turn.wasClosed).toBe(true);
    expect((await getRun(runId)).status).toBe('cancelled');
  });

  it('makes no deltas in a replay: the round is answered from the journal', async () => {
    const runId = await start('streamer', { topic: 'replays', ask: true });
    const view = await until(runId, (v) => v.status === 'suspended');
    expect(streamModel.rounds).toBe(1);
    await dropObjects();
    const ask = view.pending[0]!;
    await json(await call('POST', `/runs/${runId}/asks/${ask.ask_id}`, { body: { answer: 'yes' }, token: ask.token }), 200);
    const messages = await readSse(await call('GET', `/runs/${runId}/events`)).rest();
    expect(deltasOf(messages)).toEqual([]);
    expect(streamModel.rounds).toBe(1);
    expect((await getRun(runId)).result).toBe(`${echoPieces('Write about replays').join('')} / yes`);
  });

  it('repeats a round cut by a restart, and says so: the step starts over with a restart delta', async () => {
    streamModel.gated = true;
    const runId = await start('streamer', { topic: 'restarts' });
    const first = readSse(await call('GET', `/runs/${runId}/events`));
    const lost = await nextTurn();
    await send(lost, 'Lost ');
    await first.next((m) => m.data.type === 'model_delta');
    const lastId = first.lastId();
    await first.cancel();
    await dropObjects();
    const second = readSse(await call('GET', `/runs/${runId}/events`, { headers: { 'last-event-id': lastId! } }));
    const again = await nextTurn();
    await send(again, 'Kept ', 'text.');
    end(again);
    const messages = await second.rest();
    const deltas = deltasOf(messages);
    expect(deltas[0]!.data).toMatchObject({ text: '', restart: true });
    expect(textOf(deltas)).toBe('Kept text.');
    expect((await getRun(runId)).result).toBe('Kept text.');
  });
});
