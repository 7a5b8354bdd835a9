/**
 * One execution of a run in the run object's memory: the Engine over the run's journal
 * (a replay first, when there is one), with every new journal entry committed, with the
 * file changes it made, before Lua sees its answer, and every new event appended to the
 * stream. It also tells whether the run is suspended: every effect in flight is an
 * operator ask.
 */
import type { JournalEntry } from '../engine/journal.ts';
import type { RunOutcome } from '../engine/run.ts';
import { runOnHost, type HostConfig } from '../host/host.ts';
import type { ModelDirectory } from '../host/harness.ts';
import type { Operator } from '../host/operator.ts';
import type { Pack } from '../host/pack.ts';
import { parsePrompt } from '../prompt/parse.ts';
import { AskBroker } from './ask-broker.ts';
import { DurableRunStore } from './durable-store.ts';
import { isolatePlatform } from './lua-platform.ts';
import type { RunState } from './run-state.ts';

/** What a live run is built with. */
export interface LiveRunOptions {
  state: RunState;
  host: (operator: Operator) => HostConfig;
  /** Called after each new journal entry commits (its index counts from 1), before Lua sees its answer. */
  journaled: (index: number, entry: JournalEntry) => void | Promise<void>;
  /** Called whenever the run may have become suspended or running again. */
  changed: () => void;
}

/** A run executing in memory. */
export class LiveRun {
  readonly broker: AskBroker;
  readonly outcome: Promise<RunOutcome>;
  private readonly controller = new AbortController();
  private inflight = 0;

  constructor(private readonly options: LiveRunOptions) {
    this.broker = new AskBroker(options.state, options.changed);
    this.outcome = this.run();
  }

  /** True when every effect in flight is an operator ask. */
  get suspended(): boolean {
    const waiting = this.broker.waitingCount;
    return waiting > 0 && this.inflight <= waiting;
  }

  /** Stops the run at its next effect or instruction check; it ends as Cancelled with `reason`. */
  cancel(reason: string): void {
    this.controller.abort(reason);
  }

  private async run(): Promise<RunOutcome> {
    const { state } = this.options;
    const meta = state.meta()!;
    const parsed = parsePrompt(state.source(), `${meta.prompt}.md`);
    if (!parsed.ok) throw new Error(`the run's prompt no longer parses: ${parsed.errors[0]?.message}`);
    const store = new DurableRunStore(state);
    const platform = await isolatePlatform();
    return runOnHost(platform, this.counted(this.options.host(this.broker)), {
      prompt: parsed.prompt,
      args: state.args(),
      seed: meta.seed,
      runId: meta.run_id,
      store,
      journal: state.journal(),
      signal: this.controller.signal,
      onJournal: async (entry) => {
        const index = state.commitJournal(entry, store.changesFor(entry));
        // Durable before Lua sees the answer: a crash after this point repeats no effect.
        await state.durable();
        await this.options.journaled(index, entry);
      },
      onEvent: (event) => {
        const { seq, ...fields } = event;
        state.appendEvent(fields, seq);
      },
    });
  }

  /** The Host with its tool calls and model rounds counted while in flight. */
  private counted(host: HostConfig): HostConfig {
    const track = async <T>(work: () => Promise<T>): Promise<T> => {
      this.inflight++;
      this.options.changed();
      try {
        return await work();
      } finally {
        this.inflight--;
        this.options.changed();
      }
    };
    const packs = host.packs.map(
      (pack): Pack => ({
        manifest: pack.manifest,
        call: (tool, args, context) => track(() => pack.call(tool, args, context)),
        ...(pack.unavailableReason ? { unavailableReason: (services) => pack.unavailableReason!(services) } : {}),
      }),
    );
    const models: ModelDirectory = {
      provider(config, role) {
        const provider = host.models.provider(config, role);
        return typeof provider === 'string' ? provider : { round: (request, signal) => track(() => provider.round(request, signal)) };
      },
    };
    return { ...host, packs, models };
  }
}
