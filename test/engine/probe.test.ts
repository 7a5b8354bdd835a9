import { it } from 'vitest';
import { lua, newPlatform, run } from './helpers.ts';
it('probe', async () => {
  const p = await newPlatform();
  for (const code of [`local s = ('x'):rep(5e6) return select('#', s:byte(1, -1))`]) {
    const o = await run(p, lua(code));
    console.log(o.status, o.status === 'failed' ? o.error : o.result);
  }
});
