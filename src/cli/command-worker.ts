/**
 * The thread a supervised command runs in (supervisor.ts): the command line's `main` with an
 * io that relays output to the supervisor, and the entry clock shared with it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { sharedNow } from './entry-watch.ts';
import type { CliIo } from './io.ts';
import { main } from './main.ts';
import { watchEntries } from './platform.ts';
import type { WorkerMessage, WorkerSetup } from './supervisor.ts';

const setup = workerData as WorkerSetup;
const post = (message: WorkerMessage) => parentPort!.postMessage(message);

let section = '';
watchEntries({
  now: sharedNow,
  observe(since, spentMs, name) {
    if (name !== section) post({ type: 'section', name: (section = name) });
    setup.watch[1] = spentMs;
    setup.watch[0] = since ?? 0;
  },
});

const io: CliIo = {
  out: (text) => post({ type: 'out', text }),
  err: (text) => post({ type: 'err', text }),
  stdin: process.stdin,
  stdinIsTerminal: setup.stdinIsTerminal,
  env: process.env,
  ...(setup.relayEvents ? { event: (event) => post({ type: 'event', event }) } : {}),
};

const status = await main(setup.argv, io);
post({ type: 'done', status });
