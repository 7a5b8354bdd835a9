/**
 * What the run object shows of its run: the view every route answers with (status, result,
 * pending asks and tool calls in the order they began) and an ask as the object shows it,
 * both read from the run's durable state alone, so a view is the same in any object.
 */
import { chainOfAsk } from '../waits/ask-broker.ts';
import { pendingCall } from '../waits/call-broker.ts';
import type { RunMeta, RunState } from './run-state.ts';
import type { AskInfo, AskRecord, ObjectView, PendingToolCall } from './run-view.ts';

/** The run's view now, or null for an object that holds no run. */
export function objectViewOf(state: RunState): ObjectView | null {
  const meta = state.meta();
  if (!meta) return null;
  const progress = state.progress();
  return {
    run_id: meta.run_id,
    prompt: meta.prompt,
    status: progress.status,
    result: progress.status === 'completed' ? state.result() : null,
    error: progress.error,
    pending: [
      ...state
        .asks()
        .filter((ask) => ask.state === 'pending')
        .map((ask) => ({ at: ask.asked_at, entry: askInfo(meta, ask) as AskInfo | PendingToolCall })),
      ...state
        .calls()
        .filter((record) => record.state === 'waiting')
        .map((record) => ({ at: record.called_at, entry: pendingCall(record) })),
    ]
      .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
      .map(({ entry }) => entry),
    created_at: meta.created_at,
    ended_at: progress.ended_at,
    ...(meta.forked_from ? { forked_from: meta.forked_from } : {}),
    build: state.build(),
  };
}

/** An ask as the run object shows it (the Worker adds its token and answer URL). */
export function askInfo(meta: RunMeta, ask: AskRecord): AskInfo {
  return {
    kind: 'ask',
    ask_id: ask.ask_id,
    run_id: meta.run_id,
    prompt: meta.prompt,
    task: chainOfAsk(ask.ask_id),
    question: ask.question,
    choices: ask.choices ?? null,
    form: ask.form ?? null,
    ...(ask.refusals ? { refusals: ask.refusals } : {}),
    asked_at: ask.asked_at,
    expires_at: ask.expires_at ?? null,
  };
}
