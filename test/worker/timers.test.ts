/**
 * A run keeps going after the request that started or resumed it has been answered, even
 * when its effects wait on timers (a fetch's timeout, a retry's backoff).
 */
import { describe, expect, it } from 'vitest';
import { call, getRun, json, settled } from './app/client.ts';

const SLOW = `---
name: slow
description: Calls a tool that waits on a timer, three times.
runvil: 0
uses: [acme/counter]
---
# Slow

## Tick
\`\`\`lua
local out = {}
for i = 1, 3 do out[i] = tools.call('counter/tick', { label = 'slow' .. i, wait_ms = 30 }) end
return table.concat(out, ',')
\`\`\`
`;

describe('a run whose tools wait on timers', () => {
  it('completes in the background after its start was answered', async () => {
    await json(await call('PUT', '/prompts/slow', { body: SLOW }), 201);
    const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/slow/runs', { body: {} }), 202);
    const done = await settled(run_id);
    expect(done).toMatchObject({ status: 'completed', result: 'tick-slow1,tick-slow2,tick-slow3' });
  });

  it('completes with no request to its object while it runs', async () => {
    const { run_id } = await json<{ run_id: string }>(await call('POST', '/prompts/slow/runs', { body: {} }), 202);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await getRun(run_id)).toMatchObject({ status: 'completed', result: 'tick-slow1,tick-slow2,tick-slow3' });
  });
});
