/**
 * Judging a prompt test: does what came back meet every expectation, and if not, the lines
 * that say what was expected and what came back.
 */
import type { Expectation } from './test-file.ts';

/** An event as a test judges it: its type, and the chain it happened in. */
interface JudgedEvent {
  type: string;
  task?: string;
}

/** What a test's run came to, as the test judges it. */
export type TestOutcome =
  { status: 'completed'; result: string; events: JudgedEvent[] } | { status: 'failed'; error: { kind: string; message: string }; events: JudgedEvent[] };

/** The lines describing each unmet expectation and what came back; empty when the test passes. */
export function judge(expect: Expectation, outcome: TestOutcome): string[] {
  const unmet: string[] = [];
  const result = outcome.status === 'completed' ? outcome.result : undefined;
  if (expect.result !== undefined && result !== expect.result) unmet.push(`expected result ${quote(expect.result)}`);
  if (expect.result_contains !== undefined && !result?.includes(expect.result_contains)) {
    unmet.push(`expected a result containing ${quote(expect.result_contains)}`);
  }
  if (expect.result_matches !== undefined && (result === undefined || !new RegExp(expect.result_matches).test(result))) {
    unmet.push(`expected a result matching /${expect.result_matches}/`);
  }
  if (expect.error && !errorMeets(expect.error, outcome)) unmet.push(`expected ${describeExpectedError(expect.error)}`);
  const types = outcome.events.map((event) => event.type);
  const eventsUnmet = expect.events !== undefined && !isSubsequence(expect.events, types);
  if (eventsUnmet) unmet.push(`expected events in this order: ${expect.events!.join(', ')}`);
  // A task's events are judged apart: they interleave with the other chains' in any order.
  const typesOf = (task: string) => outcome.events.filter((event) => event.task === task).map((event) => event.type);
  const tasksUnmet = [...(expect.task_events ?? [])].filter(([task, wanted]) => !isSubsequence(wanted, typesOf(task)));
  for (const [task, wanted] of tasksUnmet) unmet.push(`expected events of task ${task} in this order: ${wanted.join(', ')}`);
  if (unmet.length === 0) return [];
  const got =
    outcome.status === 'completed'
      ? `got a completed run with result ${quote(outcome.result)}`
      : `got a failed run with error[${outcome.error.kind}]: ${quote(outcome.error.message)}`;
  return [
    ...unmet,
    got,
    ...(expect.events !== undefined ? [`got events: ${types.join(', ') || '(none)'}`] : []),
    ...tasksUnmet.map(([task]) => `got events of task ${task}: ${typesOf(task).join(', ') || '(none)'}`),
  ];
}

function errorMeets(expected: NonNullable<Expectation['error']>, outcome: TestOutcome): boolean {
  if (outcome.status !== 'failed') return false;
  const { kind, message } = outcome.error;
  return (
    (expected.kind === undefined || expected.kind === kind) &&
    (expected.message === undefined || expected.message === message) &&
    (expected.contains === undefined || message.includes(expected.contains))
  );
}

function describeExpectedError(expected: NonNullable<Expectation['error']>): string {
  const parts = [`error[${expected.kind ?? 'any kind'}]`];
  if (expected.message !== undefined) parts.push(`with message ${quote(expected.message)}`);
  if (expected.contains !== undefined) parts.push(`with a message containing ${quote(expected.contains)}`);
  return parts.join(' ');
}

/** True when `wanted` occurs in `seen` in order, other items allowed in between. */
export function isSubsequence(wanted: readonly string[], seen: readonly string[]): boolean {
  let at = 0;
  for (const item of seen) if (at < wanted.length && item === wanted[at]) at++;
  return at === wanted.length;
}

// JSON quoting shows trailing spaces, newlines and control characters that plain text hides.
function quote(text: string): string {
  return JSON.stringify(text);
}
