/**
 * The HTTP boundary, tried with input of every wrong shape: malformed percent-encoding in any
 * route parameter is a 400 that says so; bodies that are not JSON objects, too deep, or sent
 * as another content type get a 4xx naming what is wrong; and an unexpected failure is a
 * generic 500 whose body carries no exception text.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/worker/app.ts';
import { INTERNAL_ERROR_MESSAGE } from '../../src/worker/http/http-error.ts';
import { call, json, testEnv, until } from './app/client.ts';
import { DESK, GREET } from './app/prompts.ts';

const RUN = 'd'.repeat(64);
const message = async (response: Response) => ((await response.json()) as { error: { message: string } }).error.message;

beforeAll(async () => {
  for (const [name, body] of [
    ['greet', GREET],
    ['desk', DESK],
  ] as const)
    expect([200, 201]).toContain((await call('PUT', `/prompts/${name}`, { body })).status);
});

describe('a path whose percent-encoding does not decode', () => {
  const paths: [string, string][] = [
    ['GET', `/runs/${RUN}/files/%E0%A4%A`],
    ['GET', `/runs/${RUN}/files/a/%zz/b.txt`],
    ['GET', `/runs/${RUN}/files/%`],
    ['GET', `/runs/${RUN}/files/%C0%AF`],
    ['GET', `/runs/${RUN}/files/%FF`],
    ['GET', '/runs/%E0%A4%A/files/x'],
    ['GET', '/runs/%E0%A4%A'],
    ['GET', '/runs/%E0%A4%A/events'],
    ['POST', '/runs/%E0%A4%A/asks/0-1'],
    ['POST', `/runs/${RUN}/asks/%zz`],
    ['POST', '/runs/%/cancel'],
    ['GET', '/prompts/%zz'],
    ['PUT', '/prompts/%zz'],
    ['POST', '/prompts/%zz/runs'],
    ['POST', '/hooks/%'],
    ['POST', '/hooks/%E0%A4%A'],
    ['GET', '/no/such/%zz'],
  ];
  for (const [method, path] of paths) {
    it(`${method} ${path} answers 400 saying so, with or without a token`, async () => {
      for (const token of [undefined, null]) {
        const response = await call(method, path, { token, ...(method === 'GET' ? {} : { body: '{}' }) });
        expect(response.status).toBe(400);
        expect(await message(response)).toMatch(/^the path segment ".*" is not valid percent-encoding/);
      }
    });
  }

  it('leaves a well-encoded file path as it is: %2F and %25 stay part of the name', async () => {
    expect((await call('GET', `/runs/${RUN}/files/a%2Fb%25c.txt`)).status).toBe(404);
    const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/greet/runs', { body: {} }), 202);
    await until(run_id, (v) => v.status === 'completed');
    expect(await (await call('GET', `/runs/${run_id}/files/greeting%2Etxt`)).text()).toBe('hello world');
  });
});

describe('a body of the wrong shape', () => {
  let runId: string;
  beforeAll(async () => {
    ({ run_id: runId } = await json<{ run_id: string }>(await call('POST', '/prompts/desk/runs', { body: { seed: 'shape' } }), 202));
    await until(runId, (v) => v.status === 'suspended');
  });
  const routes = () => [`/prompts/greet/runs`, `/runs/${runId}/asks/0-3`, `/runs/${runId}/cancel`];

  it('is refused with 400 when it is JSON but not an object', async () => {
    for (const path of routes()) {
      for (const [body, shape] of [
        ['[]', 'an array'],
        ['[1,2]', 'an array'],
        ['7', 'a number'],
        ['"text"', 'a string'],
        ['null', 'null'],
        ['true', 'a boolean'],
      ]) {
        const response = await call('POST', path, { body });
        expect(response.status, `${path} ${body}`).toBe(400);
        expect(await message(response)).toBe(`the request body must be a JSON object, not ${shape}`);
      }
    }
  });

  it("is refused with 400 when it is not JSON at all, without the parser's own message", async () => {
    for (const path of routes()) {
      for (const body of ['{', '{"a":}', "{'a':1}", '\u0000', '{"answer":"x"} trailing']) {
        const response = await call('POST', path, { body });
        expect(response.status).toBe(400);
        expect(await message(response)).toBe('the request body is not valid JSON');
      }
    }
  });

  it('is refused with 400 when it nests 100,000 levels deep (or just past 64), never a stack overflow', async () => {
    for (const path of routes()) {
      for (const body of [
        '['.repeat(100_000) + ']'.repeat(100_000),
        `{"args":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
        `{"answer":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`,
        `{"args":{"name":${'['.repeat(64)}${']'.repeat(64)}}}`,
      ]) {
        const response = await call('POST', path, { body });
        const text = await response.text();
        expect(response.status, text.slice(0, 200)).toBe(400);
        expect(text).not.toMatch(/stack|Maximum/);
      }
    }
  });

  it('is refused with 400 naming the field when a string field holds a number, an array or an object', async () => {
    for (const value of [7, ['Ada'], { text: 'Ada' }, null, true]) {
      const answer = await call('POST', `/runs/${runId}/asks/0-3`, { body: { answer: value } });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: { field: string } }).error.field).toBe('answer');
      const seed = await call('POST', '/prompts/greet/runs', { body: { seed: value } });
      expect(seed.status).toBe(400);
      const reason = await call('POST', `/runs/${runId}/cancel`, { body: { reason: value } });
      if (value !== null) expect(reason.status).toBe(400);
    }
    expect((await call('GET', `/runs/${runId}`)).status).toBe(200);
  });

  it('is refused with 400 naming a very long unknown field, shortened', async () => {
    const response = await call('POST', '/prompts/greet/runs', { body: { ['k'.repeat(100_000)]: 1 } });
    expect(response.status).toBe(400);
    expect((await message(response)).length).toBeLessThan(300);
  });

  it('is refused with 415 when sent as a content type that is no JSON', async () => {
    for (const path of [...routes(), '/hooks/greet']) {
      for (const type of ['multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream', 'text/html', 'image/png']) {
        const response = await call('POST', path, { body: '{}', headers: { 'content-type': type }, ...(path.startsWith('/hooks') ? { token: null } : {}) });
        // A webhook's signature is checked first: unsigned, it is refused before its content type is read.
        expect(response.status, `${path} ${type}`).toBe(path.startsWith('/hooks') ? 401 : 415);
        if (!path.startsWith('/hooks')) expect(await message(response)).toMatch(/^the request body must be JSON \(Content-Type: application\/json\), not "/);
      }
    }
    expect((await call('POST', '/prompts/greet/runs', { body: '{}', headers: { 'content-type': 'application/json; charset=utf-8' } })).status).toBe(202);
    expect((await call('GET', `/runs/${runId}`)).status).toBe(200);
  });
});

describe('an unexpected failure inside a route', () => {
  const app = createApp();
  const throwers: [string, () => never][] = [
    [
      'type-error',
      () => {
        throw new TypeError('text.charCodeAt is not a function');
      },
    ],
    [
      'range-error',
      () => {
        throw new RangeError('Maximum call stack size exceeded');
      },
    ],
    [
      'string',
      () => {
        throw 'secret internal detail';
      },
    ],
    [
      'object',
      () => {
        throw { message: 'at RunObject.answer (run-object.ts:99)' };
      },
    ],
  ];
  for (const [name, thrower] of throwers) app.get(`/boom/${name}`, thrower);
  app.get('/boom/overflow', () => {
    const recurse = (n: number): number => recurse(n + 1) + 1;
    return new Response(String(recurse(0)));
  });

  for (const name of [...throwers.map(([n]) => n), 'overflow']) {
    it(`answers a generic 500 for a ${name}, with no exception text`, async () => {
      const response = await app.fetch(new Request(`https://runvil.test/boom/${name}`), testEnv);
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ error: { message: INTERNAL_ERROR_MESSAGE, kind: 'internal' } });
    });
  }
});
