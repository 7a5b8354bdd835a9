/**
 * The prompt routes in workerd: bundled and uploaded prompts, validation on upload, and a
 * pure-Lua run started through the API to its result, with its record and files in KV.
 */
import { describe, expect, it } from 'vitest';
import { call, json, kvRecord, settled, testEnv } from './app/client.ts';
import { GREET } from './app/prompts.ts';

describe('GET /prompts', () => {
  it('lists the prompts bundled from prompts/ at build time', async () => {
    const { prompts } = await json<{ prompts: { name: string; origin: string }[] }>(await call('GET', '/prompts'), 200);
    expect(prompts).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'hello', origin: 'bundled' }), expect.objectContaining({ name: 'intake', origin: 'bundled' })]),
    );
  });
});

describe('PUT /prompts/:name', () => {
  it('stores a prompt that parses in KV under prompts/{name}, and lists it', async () => {
    expect(await json(await call('PUT', '/prompts/greet', { body: GREET }), 201)).toEqual({
      name: 'greet',
      description: 'Greets in pure Lua.',
      origin: 'uploaded',
    });
    expect(await testEnv.RUNVIL_KV.get('prompts/greet')).toBe(GREET);
    const { prompts } = await json<{ prompts: { name: string }[] }>(await call('GET', '/prompts'), 200);
    expect(prompts.map((p) => p.name)).toContain('greet');
    expect(await json(await call('PUT', '/prompts/greet', { body: GREET }), 200)).toMatchObject({ name: 'greet' });
  });
});

describe('POST /prompts/:name/runs', () => {
  it('starts a pure-Lua run that completes with its result, record and files', async () => {
    await call('PUT', '/prompts/greet', { body: GREET });
    const started = await json<{ run_id: string; status: string }>(
      await call('POST', '/prompts/greet/runs', { body: { args: { name: 'Ada', times: 2 } } }),
      202,
    );
    expect(started.run_id).toMatch(/^[0-9a-f]{64}$/);
    const view = await settled(started.run_id);
    expect(view).toMatchObject({ status: 'completed', result: 'hello Ada x2', error: null, pending: [] });
    expect(await (await call('GET', `/runs/${started.run_id}/files/greeting.txt`)).text()).toBe('hello Ada');
    expect(await json(await call('GET', `/runs/${started.run_id}/files/`), 200)).toEqual({ files: ['greeting.txt'] });
    const record = await kvRecord(started.run_id);
    expect(record).toMatchObject({
      run_id: started.run_id,
      status: 'completed',
      result: 'hello Ada x2',
      files: ['greeting.txt'],
      args: { name: 'Ada', times: 2 },
    });
    expect(record.events.map((e: { type: string }) => e.type)).toEqual(['run_started', 'section_entered', 'run_completed']);
    expect(await testEnv.RUNVIL_KV.get(`runs/${started.run_id}/files/greeting.txt`)).toBe('hello Ada');
  });

  it('with ?wait= answers the finished run itself', async () => {
    const view = await json(await call('POST', '/prompts/hello/runs?wait=10', { body: { args: { name: 'Bo' } } }), 200);
    expect(view).toMatchObject({ status: 'completed', result: 'Hello, Bo! Your name has 2 letters (visit 1).' });
  });
});
