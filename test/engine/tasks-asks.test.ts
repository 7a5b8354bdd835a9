import { beforeAll, describe, expect, it } from 'vitest';
import type { LuaPlatform } from '../../src/engine/lua/vm.ts';
import type { RunEvent } from '../../src/engine/events.ts';
import { fixtureHost } from '../../src/fixture/fixture-host.ts';
import { runOnHost } from '../../src/host/host.ts';
import type { AskContext, Operator, OperatorAnswer } from '../../src/host/operator.ts';
import type { RunStore } from '../../src/host/run-store.ts';
import { newPlatform, prompt, resultOf } from './helpers.ts';

/** The main chain starts a task that asks the operator and a task that works on its own. */
const askAndWork = prompt(
  `# Ask and work

## Main

\`\`\`lua
local asker = tasks.spawn('## Ask')
local worker = tasks.spawn('## Work')
local done = tasks.await(worker)
return done .. '|' .. tasks.await(asker)
\`\`\`

## Ask

\`\`\`lua
return input.ask()
\`\`\`

## Work

\`\`\`lua
store.write('w.txt', 'w1')
store.append('w.txt', '2')
store.append('w.txt', '3')
return store.read('w.txt')
\`\`\`
`,
  'uses: [user-input]\n',
);

/** An operator whose answers wait until the test lets them go. */
class GatedOperator implements Operator {
  readonly asked: AskContext[] = [];
  private open: () => void = () => {};
  private readonly gate = new Promise<void>((resolve) => {
    this.open = resolve;
  });

  constructor(private readonly answer: string | null) {}

  async ask(context: AskContext): Promise<OperatorAnswer> {
    this.asked.push(context);
    await this.gate;
    if (this.answer === null) await new Promise(() => {});
    return { ok: true, text: this.answer! };
  }

  release(): void {
    this.open();
  }
}

/** A store that refuses every operation: the resumed run must not redo a journaled store effect. */
const refusingStore: RunStore = {
  read: async () => {
    throw new Error('a journaled store.read ran again');
  },
  write: async () => {
    throw new Error('a journaled store.write ran again');
  },
  append: async () => {
    throw new Error('a journaled store.append ran again');
  },
  list: async () => {
    throw new Error('a journaled store.list ran again');
  },
  delete: async () => {
    throw new Error('a journaled store.delete ran again');
  },
};

let platform: LuaPlatform;
beforeAll(async () => {
  platform = await newPlatform();
});

describe('a task waiting on an operator ask', () => {
  it('does not hold up another task, which finishes while the ask is pending', async () => {
    const operator = new GatedOperator('blue');
    const events: RunEvent[] = [];
    const outcome = await runOnHost(
      platform,
      { ...fixtureHost({}, [], []), operator },
      {
        prompt: askAndWork,
        onEvent: (event) => {
          events.push(event);
          // The ask answers only once the other task has finished.
          if (event.type === 'task_completed' && event.task === '0.1') operator.release();
        },
      },
    );
    expect(resultOf(outcome)).toBe('w123|blue');
    expect(operator.asked.map((ask) => ask.effect)).toEqual([{ chain: '0.0', seq: 1 }]);
    const ends = events.filter((event) => event.type === 'task_completed').map((event) => event.task);
    expect(ends).toEqual(['0.1', '0.0']);
  });

  it('suspends with the ask in flight and resumes by replay, redoing none of the other task’s effects', async () => {
    const waiting = new GatedOperator(null);
    const controller = new AbortController();
    const suspended = await runOnHost(
      platform,
      { ...fixtureHost({}, [], []), operator: waiting },
      {
        prompt: askAndWork,
        signal: controller.signal,
        // Every live chain now waits on the ask (the main chain on the tasks): the run object
        // would keep the journal and leave memory here.
        onEvent: (event) => {
          if (event.type === 'task_completed' && event.task === '0.1') queueMicrotask(() => controller.abort('suspended'));
        },
      },
    );
    expect(suspended.status).toBe('failed');
    const journal = suspended.journal;
    expect(journal.filter((entry) => entry.chain === '0.1').map((entry) => entry.request.op)).toEqual([
      'store.write',
      'store.append',
      'store.append',
      'store.read',
    ]);
    expect(journal.some((entry) => entry.chain === '0.0')).toBe(false);

    const answering = new GatedOperator('green');
    answering.release();
    const resumed = await runOnHost(
      platform,
      { ...fixtureHost({}, [], []), operator: answering },
      {
        prompt: askAndWork,
        journal,
        store: refusingStore,
      },
    );
    expect(resultOf(resumed)).toBe('w123|green');
    // The same ask, under the same effect key: a run object finds its stored ask by it.
    expect(answering.asked.map((ask) => ask.effect)).toEqual([{ chain: '0.0', seq: 1 }]);
  });
});
