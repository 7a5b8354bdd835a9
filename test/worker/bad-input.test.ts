/**
 * Bad input gets a 4xx with a JSON error saying what is wrong, and changes no stored state:
 * a prompt that does not parse (400 with the error and its line), a body over 1 MiB (413),
 * args that do not fit the prompt's `args:` (400 naming the field), an unknown run or ask
 * (404).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, json, testEnv } from './app/client.ts';
import { GREET } from './app/prompts.ts';

/** Every key of the test KV namespace. */
async function kvKeys(): Promise<string[]> {
  return (await testEnv.RUNVIL_KV.list({})).keys.map((key) => key.name).sort();
}

beforeAll(async () => {
  await call('PUT', '/prompts/greet', { body: GREET });
});

describe('PUT /prompts/:name with a prompt that does not parse', () => {
  it('answers 400 with the parse error and its line, storing nothing', async () => {
    const before = await kvKeys();
    const broken = GREET.replace('name: greet', 'name: broken').replace('runvil: 0', 'runvil: 7');
    const response = await call('PUT', '/prompts/broken', { body: broken });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { message: string; errors: { kind: string; line: number }[] } };
    expect(error.message).toMatch(/^the prompt does not parse: line 4: invalid frontmatter: /);
    expect(error.errors[0]).toMatchObject({ kind: 'Frontmatter', line: 4 });
    expect(await kvKeys()).toEqual(before);
  });

  it("answers 400 when the frontmatter name is not the URL's", async () => {
    const response = await call('PUT', '/prompts/other', { body: GREET });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      'the prompt\'s frontmatter names it "greet", but it is deployed as "other"; the two must match',
    );
    expect(await testEnv.RUNVIL_KV.get('prompts/other')).toBeNull();
  });

  it('answers 400 for a Markdown body with no title', async () => {
    const response = await call('PUT', '/prompts/untitled', { body: '---\nname: untitled\ndescription: x\nruntime: 0\n---\nno title\n' });
    expect(response.status).toBe(400);
  });
});

describe('a body over 1 MiB', () => {
  it('is refused with 413 by every route that reads one, storing nothing', async () => {
    const before = await kvKeys();
    const huge = GREET + '\n<!-- ' + 'x'.repeat(1024 * 1024) + ' -->\n';
    const put = await call('PUT', '/prompts/greet', { body: huge });
    expect(put.status).toBe(413);
    expect(((await put.json()) as { error: { message: string } }).error.message).toBe(
      'the request body is larger than 1048576 bytes (1 MiB), the most this API accepts',
    );
    expect(await testEnv.RUNVIL_KV.get('prompts/greet')).toBe(GREET);
    const run = await call('POST', '/prompts/greet/runs', { body: JSON.stringify({ args: { name: 'x'.repeat(1024 * 1024) } }) });
    expect(run.status).toBe(413);
    expect(await kvKeys()).toEqual(before);
  });
});

describe('args that do not fit the prompt', () => {
  const refused = async (body: unknown, field: string, message: string | RegExp) => {
    const before = await kvKeys();
    const response = await call('POST', '/prompts/greet/runs', { body });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { message: string; field: string } };
    expect(error.field).toBe(field);
    expect(error.message).toMatch(message);
    expect(await kvKeys()).toEqual(before);
  };

  it('answer 400 naming the field of the wrong type', () => refused({ args: { times: 'many' } }, 'times', 'args.times: times takes an integer, got "many"'));
  it('answer 400 naming an undeclared field', () =>
    refused({ args: { colour: 'red' } }, 'colour', 'unknown arg `colour`: the prompt declares `name`, `times`'));
  it('answer 400 when args is not an object', () => refused({ args: [1] }, 'args', /^`args` must be a JSON object/));
  it('answer 400 for a field the body does not take', () => refused({ arguments: {} }, 'arguments', /unknown field `arguments`/));
  it('answer 400 for a body that is not JSON', async () => {
    const response = await call('POST', '/prompts/greet/runs', { body: '{not json' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('the request body is not valid JSON');
  });
  it('answer 400 for a ?wait= out of range', async () => {
    expect((await call('POST', '/prompts/greet/runs?wait=600', { body: {} })).status).toBe(400);
  });
});

describe('unknown runs, asks and prompts', () => {
  it('answer 404 and change nothing', async () => {
    const before = await kvKeys();
    expect((await call('GET', `/runs/${'e'.repeat(64)}`)).status).toBe(404);
    expect((await call('GET', '/runs/not-a-run-id')).status).toBe(404);
    expect((await call('POST', `/runs/${'e'.repeat(64)}/asks/0-1`, { body: { answer: 'x' } })).status).toBe(404);
    expect((await call('POST', '/prompts/nope/runs', { body: {} })).status).toBe(404);
    expect((await call('GET', '/nowhere')).status).toBe(404);
    expect(await kvKeys()).toEqual(before);
  });

  it('answer 404 for an unknown ask of a real run', async () => {
    const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/greet/runs?wait=5', { body: {} }), 200);
    const response = await call('POST', `/runs/${run_id}/asks/0-9`, { body: { answer: 'x' } });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { message: `run ${run_id} has no ask "0-9"` } });
  });
});
