// The thread `runvil run` and `runvil test` run in, under the entry watchdog (src/cli/supervisor.ts).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/command-worker.ts');
