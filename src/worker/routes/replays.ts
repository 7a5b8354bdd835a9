/**
 * `GET /runs/:id/test.yaml` (an ended run as a prompt test file), `GET /runs/:id/journal`
 * (what a replay of a run that is not running needs) and `POST /runs/:id/fork`
 * (a new run from the first N journal entries of a run, with answers replaced and, if
 * given, a new source): DESIGN.md "A run becomes a test; a run forks".
 */
import { Hono } from 'hono';
import { forkPrefix } from '../../host/fork.ts';
import { argsFromData } from '../../prompt/run-args.ts';
import type { Json } from '../../json/json.ts';
import { publicView } from '../waits/ask-view.ts';
import { checkScope, requireScope } from '../http/auth.ts';
import { checkJsonContentType, onlyKeys, parseJsonObject, readText } from '../http/body.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { parseDeployed } from '../deployment/prompt-library.ts';
import { runTimeoutSeconds } from '../run-object/run-alarm.ts';
import { refused } from './refused.ts';
import { runObject } from '../run-object/run-ids.ts';
import { waitSeconds } from '../http/wait-param.ts';

/** The routes that make a run a test and fork it. */
export const replayRoutes = new Hono<{ Bindings: Env }>();

replayRoutes.get('/runs/:id/test.yaml', requireScope('runs:read'), async (c) => {
  const id = c.req.param('id');
  const outcome = await runObject(c.env, id).testFile();
  if (!outcome.ok) throw refused(outcome, id);
  return c.body(outcome.text, 200, {
    'content-type': 'application/yaml; charset=utf-8',
    'content-disposition': `attachment; filename="${id}.test.yaml"`,
  });
});

// What a replay of the run needs (runvil deploy-check replays every suspended run with the build about to be deployed).
replayRoutes.get('/runs/:id/journal', requireScope('runs:read'), async (c) => {
  const id = c.req.param('id');
  const from = await runObject(c.env, id).forkSource();
  if (!from.ok) {
    if (from.reason === 'running')
      throw new ApiError(409, `run ${id} is running; its journal still grows: read it once the run has suspended or ended`, { reason: 'running' });
    throw refused(from, id);
  }
  return c.json({
    run_id: from.run_id,
    prompt: from.prompt,
    status: from.status,
    source: from.source,
    args: from.args,
    ...(from.untrusted_args ? { untrusted_args: from.untrusted_args } : {}),
    seed: from.seed,
    journal: from.journal,
    packs: from.packs,
    build: from.build,
  });
});

// A fork starts a run of the original's prompt, and replays (so shows) what the original did: both scopes.
replayRoutes.post('/runs/:id/fork', requireScope('runs:read'), async (c) => {
  const id = c.req.param('id');
  const original = runObject(c.env, id);
  const wait = waitSeconds(c.req.query('wait'));
  checkJsonContentType(c.req.raw);
  const body = parseJsonObject(await readText(c.req.raw));
  onlyKeys(body, ['at', 'answers', 'source']);
  const at = body.at;
  if (typeof at !== 'number' || !Number.isSafeInteger(at)) {
    throw new ApiError(400, "`at` must be a whole number: how many of the run's journal entries the fork starts with", { field: 'at' });
  }
  const answers = answersOf(body.answers);
  if (body.source !== undefined && typeof body.source !== 'string')
    throw new ApiError(400, "`source` must be a string: the prompt's Markdown text", { field: 'source' });

  const from = await original.forkSource();
  if (!from.ok) throw refused(from, id);
  checkScope(c.get('principal'), `runs:start:${from.prompt}`);
  const prefix = forkPrefix(from.journal, at, answers);
  if (!prefix.ok) throw new ApiError(400, prefix.message, { field: prefix.field });
  const source = body.source ?? from.source;
  // A new source must parse, keep the prompt's name and take the run's args.
  const prompt = parseDeployed(from.prompt, source);
  const args = argsFromData(prompt.frontmatter.args, from.args);
  if (!args.ok) throw new ApiError(400, `the run's args do not fit the new source: ${args.message}`, { field: 'source' });

  const forkId = c.env.RUNS.newUniqueId();
  const outcome = await c.env.RUNS.get(forkId).fork(
    {
      prompt: from.prompt,
      source,
      args: args.args,
      // What came from outside stays untrusted in the fork, whatever its source.
      ...(from.untrusted_args ? { untrusted_args: from.untrusted_args.filter((name) => Object.hasOwn(args.args, name)) } : {}),
      seed: from.seed,
      timeout_seconds: runTimeoutSeconds(c.env.RUNVIL_RUN_TIMEOUT_SECONDS),
      journal: prefix.journal,
      first_replaced: prefix.firstReplaced,
      forked_from: { run_id: id, at },
      packs: from.packs,
    },
    wait * 1000,
  );
  if (!outcome.ok) throw refused(outcome, id);
  const view = outcome.view;
  const status = wait === 0 || view.status === 'running' ? 202 : 200;
  if (wait === 0) return c.json({ run_id: view.run_id, status: view.status, forked_from: view.forked_from ?? null }, status);
  return c.json(await publicView(c.env, view), status);
});

/** `answers`: absent, or an object of ask id to answer (a text, or an object for an ask with a form). */
function answersOf(value: Json | undefined): Map<string, Json> {
  const answers = new Map<string, Json>();
  if (value === undefined) return answers;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError(400, '`answers` must be a JSON object of ask id to answer text, such as {"0-3": "no"}', { field: 'answers' });
  }
  for (const askId of Object.keys(value)) {
    const answer = value[askId];
    // A text, or for an ask with a form the object that fills it (forkPrefix checks which the ask takes).
    const isObject = answer !== null && typeof answer === 'object' && !Array.isArray(answer);
    if (typeof answer !== 'string' && !isObject)
      throw new ApiError(
        400,
        `\`answers\` gives the ask ${JSON.stringify(askId)} a ${answer === null ? 'null' : Array.isArray(answer) ? 'list' : typeof answer}; an answer is a string, or an object for an ask with a form`,
        { field: 'answers' },
      );
    answers.set(askId, answer!);
  }
  return answers;
}
