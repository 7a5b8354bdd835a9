/**
 * Bodies read with a bound (src/host/remote/bounded-body.ts), against a real server on loopback that
 * streams as fast as its reader takes: one that would send 100 MiB is cut off near the bound,
 * its reader never holding more than that, and a body under the bound reads whole; answers
 * counted against one budget (a whole tool-list read) fail at the one that passes it.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedFetch, boundedText, byteBudget, countingFetch } from '../../src/host/remote/bounded-body.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const CHUNK = Buffer.alloc(64 * KiB, 'x');

let server: Server;
let origin = '';
/** Bytes the server handed its socket for the last response, once the response ended or was cut. */
let written: Promise<number> = Promise.resolve(0);

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const total = Number(url.searchParams.get('bytes'));
    const declare = url.searchParams.get('declare') === '1';
    response.writeHead(200, { 'content-type': 'text/plain', ...(declare ? { 'content-length': String(total) } : {}) });
    let sent = 0;
    written = new Promise((resolve) => {
      const done = () => resolve(sent);
      response.once('close', done);
      // Written as the reader takes it (write() answers false while the socket is full), as a hostile server streams.
      const pump = () => {
        while (sent < total) {
          const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, total - sent));
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('boundedText', () => {
  it('reads a body under the bound whole', async () => {
    expect((await boundedText(await fetch(`${origin}/?bytes=${200 * KiB}`), MiB))?.length).toBe(200 * KiB);
  });

  it('answers null for 100 MiB streamed, having read little more than the bound', async () => {
    expect(await boundedText(await fetch(`${origin}/?bytes=${100 * MiB}`), MiB)).toBeNull();
    // The socket's buffers hold a few MiB at most: the server never got to write the rest.
    expect(await written).toBeLessThan(32 * MiB);
  });

  it('answers null for a Content-Length past the bound, before reading any of it', async () => {
    expect(await boundedText(await fetch(`${origin}/?bytes=${100 * MiB}&declare=1`), MiB)).toBeNull();
    expect(await written).toBeLessThan(32 * MiB);
  });
});

describe('boundedFetch', () => {
  it('hands a body under the bound through whole', async () => {
    let passed = false;
    const response = await boundedFetch(MiB, () => (passed = true))(`${origin}/?bytes=${200 * KiB}`);
    expect((await response.text()).length).toBe(200 * KiB);
    expect(passed).toBe(false);
  });

  it('fails the reader of 100 MiB streamed, and says so, having read little more than the bound', async () => {
    let passed = false;
    const response = await boundedFetch(MiB, () => (passed = true))(`${origin}/?bytes=${100 * MiB}`);
    await expect(response.text()).rejects.toThrow(/larger than 1048576 bytes/);
    expect(passed).toBe(true);
    expect(await written).toBeLessThan(32 * MiB);
  });

  it('refuses a Content-Length past the bound before reading the body', async () => {
    let passed = false;
    await expect(boundedFetch(MiB, () => (passed = true))(`${origin}/?bytes=${100 * MiB}&declare=1`)).rejects.toThrow(/larger than/);
    expect(passed).toBe(true);
  });
});

describe('countingFetch with one budget for several answers', () => {
  it('reads answers whole while they fit together, and fails the one that passes the budget', async () => {
    let passed = 0;
    const budget = byteBudget(MiB, () => passed++);
    const fetchCounted = countingFetch(() => budget);
    expect((await (await fetchCounted(`${origin}/?bytes=${600 * KiB}`)).text()).length).toBe(600 * KiB);
    expect(passed).toBe(0);
    const second = await fetchCounted(`${origin}/?bytes=${600 * KiB}`);
    await expect(second.text()).rejects.toThrow(/larger than 1048576 bytes/);
    expect(passed).toBe(1);
    expect(budget.room()).toBeLessThan(0);
  });

  it('refuses an answer whose Content-Length passes the room the earlier answers left', async () => {
    let passed = 0;
    const budget = byteBudget(MiB, () => passed++);
    const fetchCounted = countingFetch(() => budget);
    await (await fetchCounted(`${origin}/?bytes=${600 * KiB}&declare=1`)).text();
    await expect(fetchCounted(`${origin}/?bytes=${600 * KiB}&declare=1`)).rejects.toThrow(/larger than/);
    expect(passed).toBe(1);
  });
});
