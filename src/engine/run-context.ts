/**
 * The state one run shares across its section entries.
 */
import type { Prompt, SectionBody } from '../prompt/types.ts';
import type { Json } from '../json/json.ts';
import type { StopSwitch, RunLimits } from './budget.ts';
import type { EventLog } from './events.ts';
import type { EffectRunner } from './journal.ts';
import type { RunSeed } from './run-seed.ts';
import type { VarState } from './var-state.ts';
import type { LuaPlatform } from './lua/vm.ts';
import type { RunMemory } from './lua/run-memory.ts';
import type { RunCatalog } from './catalog.ts';
import type { Scheduler } from './scheduler.ts';
import type { TaskBoard } from './tasks.ts';
import type { ChainTaint } from './taint.ts';
import type { EntryTimeLimit } from './entry-clock.ts';
import type { EntryArgs } from './untrusted-args.ts';

/** A section as an entry runs it: its name and body. The H1 pass uses the title as its name. */
export interface EntrySection extends SectionBody {
  name: string;
}

/** Token usage summed over a run's model rounds. */
export interface RunUsage {
  rounds: number;
  input_tokens: number;
  output_tokens: number;
}

/** Everything a run's entries share. */
export interface RunContext {
  runId: string;
  prompt: Prompt;
  platform: LuaPlatform;
  /** What the run's VMs are tagged with (RunOptions.owner). */
  vmOwner: object | undefined;
  args: { [name: string]: Json };
  /** The args as entries read them: the untrusted ones held back, wrapped (untrusted-args.ts). */
  entryArgs: EntryArgs;
  seed: RunSeed;
  vars: VarState;
  /** The Lua memory the run's VMs hold together, against its budget (lua/run-memory.ts). */
  memory: RunMemory;
  events: EventLog;
  effects: EffectRunner;
  /** Runs the run's chains (the walk, tasks, arms) one at a time. */
  scheduler: Scheduler;
  /** The run's tasks and fanout arms. */
  tasks: TaskBoard;
  /** The chains that have seen untrusted text (taint.ts). */
  taint: ChainTaint;
  stop: StopSwitch;
  limits: RunLimits;
  /** Section entries made so far (walked, called). */
  entryCount: number;
  /** VMs created so far; each gets its own math.random seed. */
  vmCount: number;
  /** Final replies of model steps, by section name. */
  replies: { [section: string]: string };
  /** The main chain's last model step's reply: the run result when the walk ends without a value. */
  lastReply: string;
  /** The run's model rounds and the tokens their providers reported. */
  usage: RunUsage;
  /** The role entries use when they pick none (models.default). */
  defaultRole: string | null;
  /** The run's Packs and tools (data only). */
  catalog: RunCatalog;
  /** The host's wall-clock limit per section entry, when it has one (RunOptions.entryTimeLimit). */
  entryTimeLimit?: EntryTimeLimit;
}
