/**
 * `GET /prompts`, `GET|PUT /prompts/:name`, `POST /prompts/:name/runs` (`?stream=1`: streamed-run.ts).
 */
import { Hono } from 'hono';
import { publicView } from '../waits/ask-view.ts';
import { checkJsonContentType, onlyKeys, parseJsonObject, readText } from '../http/body.ts';
import type { Env } from '../env.ts';
import { ApiError } from '../http/http-error.ts';
import { checkPromptCompiles, packWarnings } from '../deployment/prompt-checks.ts';
import { checkPromptName, findPrompt, listPrompts, parseDeployed, savePrompt } from '../deployment/prompt-library.ts';
import { checkDedupeKey, dedupedRunId, MAX_IDEMPOTENCY_KEY_CHARS } from '../run-object/run-ids.ts';
import { startRun } from '../run-object/start-run.ts';
import { waitSeconds } from '../http/wait-param.ts';
import type { Json } from '../../json/json.ts';
import { requireScope } from '../http/auth.ts';
import { streamedRun, wantsStream } from './streamed-run.ts';

/** The prompt routes. */
export const promptRoutes = new Hono<{ Bindings: Env }>();

promptRoutes.get('/prompts', requireScope('runs:read'), async (c) => c.json({ prompts: await listPrompts(c.env.RUNVIL_KV) }));

promptRoutes.get('/prompts/:name', requireScope('runs:read'), async (c) => {
  const prompt = await findPrompt(c.env.RUNVIL_KV, c.req.param('name'));
  if (!prompt) throw new ApiError(404, `no prompt named ${JSON.stringify(c.req.param('name'))} is deployed`);
  return c.json(prompt);
});

promptRoutes.put('/prompts/:name', requireScope('prompts:write'), async (c) => {
  const name = c.req.param('name');
  checkPromptName(name);
  const source = await readText(c.req.raw);
  // A prompt whose Lua does not compile is refused before anything is stored.
  await checkPromptCompiles(parseDeployed(name, source), source);
  const { prompt, replaced } = await savePrompt(c.env.RUNVIL_KV, name, source);
  const warnings = packWarnings(prompt);
  return c.json({ name, description: prompt.frontmatter.description, origin: 'uploaded', ...(warnings.length > 0 ? { warnings } : {}) }, replaced ? 200 : 201);
});

/** Starting a run of prompt P takes runs:start:P. */
const startsRuns = requireScope((c) => `runs:start:${c.req.param('name')}`);

promptRoutes.post('/prompts/:name/runs', startsRuns, async (c) => {
  const name = c.req.param('name');
  const wait = waitSeconds(c.req.query('wait'));
  const stream = wantsStream(c);
  const key = c.req.header('idempotency-key');
  if (key !== undefined) checkDedupeKey(key, 'Idempotency-Key', MAX_IDEMPOTENCY_KEY_CHARS);
  checkJsonContentType(c.req.raw);
  const body = parseJsonObject(await readText(c.req.raw));
  onlyKeys(body, ['args', 'seed']);
  const args = body.args ?? {};
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    throw new ApiError(400, "`args` must be a JSON object of the prompt's args", { field: 'args' });
  if (body.seed !== undefined && typeof body.seed !== 'string') throw new ApiError(400, '`seed` must be a string', { field: 'seed' });
  const started = await startRun(c.env, {
    prompt: name,
    args: args as { [name: string]: Json },
    ...(body.seed !== undefined ? { seed: body.seed } : {}),
    // The same key for the same prompt names the same run object, which starts a run once.
    ...(key !== undefined ? { id: dedupedRunId(c.env, 'start', name, key) } : {}),
    waitMs: wait * 1000,
  });
  if (stream) return streamedRun(c, started.view.run_id);
  const duplicate = key !== undefined ? { duplicate: !started.created } : {};
  const status = !started.created ? 200 : wait === 0 || started.view.status === 'running' ? 202 : 200;
  if (wait === 0) return c.json({ run_id: started.view.run_id, status: started.view.status, ...duplicate }, status);
  return c.json({ ...(await publicView(c.env, started.view)), ...duplicate }, status);
});
