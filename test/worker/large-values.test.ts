/**
 * Values past the Durable Object's 2 MB per key and value: a run that writes a 3 MB file
 * (so a 3 MB journal entry too) stores them in chunks, completes, and replays after an
 * eviction to the same result.
 */
import { describe, expect, it } from 'vitest';
import { call, drive, json, settled } from './app/client.ts';
import { dropObjects } from './app/test-worker.ts';

const BIG = `---
name: big
description: Writes a 3 MB file, then asks.
runvil: 0
uses: [user-input]
---
# Big

## Write
\`\`\`lua
store.write('big.txt', string.rep('0123456789', 300000))
local answer = tools.call('user-input/ask', { question = 'Go on?' })
return answer .. ':' .. #store.read('big.txt')
\`\`\`
`;

describe('a run with a 3 MB file', () => {
  it('keeps it in chunks, serves it, and replays over it after an eviction', async () => {
    await json(await call('PUT', '/prompts/big', { body: BIG }), 201);
    const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/big/runs', { body: {} }), 202);
    await settled(run_id);
    const file = await (await call('GET', `/runs/${run_id}/files/big.txt`)).text();
    expect(file.length).toBe(3_000_000);
    await dropObjects();
    const done = await drive(run_id, ['yes']);
    expect(done).toMatchObject({ status: 'completed', result: 'yes:3000000' });
  });
});
