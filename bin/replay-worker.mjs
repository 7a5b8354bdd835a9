// A replay thread of `runvil deploy-check` (src/cli/replay-pool.ts).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/replay-worker.ts');
