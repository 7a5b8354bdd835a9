/**
 * An MCP server of the 2026-07-28 protocol whose tools answer with tasks (the tasks
 * extension, `io.modelcontextprotocol/tasks`), for tests, built with the SDK's v2 server
 * package (`@modelcontextprotocol/server`, createMcpHandler) and the extension's own guards
 * (`@modelcontextprotocol/ext-tasks`): a call from a client that declares the extension gets a
 * task, which `tasks/get` reports, `tasks/update` answers and `tasks/cancel` ends. Its tasks
 * live in this process (a restart forgets them). Listens on 127.0.0.1 on the port PORT names;
 * `/mcp` is the endpoint (`/s/<slot>/mcp` another, so that test files running at the same time
 * keep apart: a slot's log is its own). Prints `listening on port N` to stderr once it listens.
 *
 * Its tool, `job`, takes what the task does (all optional):
 *   polls     how many `tasks/get` find it working before it completes (default 2)
 *   interval  the pollIntervalMs it suggests (a number; absent: none)
 *   ask       true: the first poll finds it input_required, asking a name (a form); the answer
 *             (`tasks/update`) lets it go on, and its result greets the name (or says
 *             declined / cancelled)
 *   forever   true: it never ends
 *   attack    `huge-id` (a 100,000-character task id), `other-id` (tasks/get names another
 *             task), `garbage` (tasks/get answers no task), `huge-result` (a 3 MiB result),
 *             `failed` (the task fails), `bad-task` (the call's task answer is malformed)
 * and answers `job done after N polls` (or the greeting).
 *
 * `GET /s/<slot>/log` (or `/log`) answers what the slot's clients did: `{ calls, polls: {taskId:
 * n}, updates: [{taskId, inputResponses}], cancels: [taskId] }`; `DELETE` clears it.
 */
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';

const JOB_SCHEMA = {
  type: 'object',
  properties: {
    polls: { type: 'integer' },
    interval: { type: 'number' },
    ask: { type: 'boolean' },
    forever: { type: 'boolean' },
    attack: { type: 'string' },
  },
};
const validator = new CfWorkerJsonSchemaValidator();
const TASK_ID = fromJsonSchema({ type: 'object', properties: { taskId: { type: 'string' } }, required: ['taskId'] }, validator);
const UPDATE = fromJsonSchema(
  { type: 'object', properties: { taskId: { type: 'string' }, inputResponses: { type: 'object' } }, required: ['taskId'] },
  validator,
);

/** Each task by id: its slot, what it was asked to do, how many polls it has had, its answer. */
const tasks = new Map();
/** Each slot's log. */
const logs = new Map();
let made = 0;

const logOf = (slot) => {
  if (!logs.has(slot)) logs.set(slot, { calls: 0, polls: Object.create(null), updates: [], cancels: [] });
  return logs.get(slot);
};

function taskView(id, task, status) {
  const now = new Date().toISOString();
  return {
    taskId: id,
    status,
    createdAt: task.createdAt,
    lastUpdatedAt: now,
    ttlMs: null,
    ...(typeof task.args.interval === 'number' ? { pollIntervalMs: task.args.interval } : {}),
  };
}

function detailed(id, task) {
  const { args } = task;
  if (task.cancelled) return taskView(id, task, 'cancelled');
  if (args.ask && task.answer === undefined) {
    return {
      ...taskView(id, task, 'input_required'),
      inputRequests: {
        who: {
          method: 'elicitation/create',
          params: {
            message: 'Who is the report for?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] },
          },
        },
      },
    };
  }
  if (args.forever || task.polls <= (args.polls ?? 2)) return taskView(id, task, 'working');
  if (args.attack === 'failed') return { ...taskView(id, task, 'failed'), error: { code: -32000, message: 'the printer caught fire' } };
  let text = `job done after ${task.polls - 1} polls`;
  if (args.ask) text = task.answer.action === 'accept' ? `report for ${task.answer.content?.name}` : task.answer.action;
  if (args.attack === 'huge-result') text = 'x'.repeat(3 * 1024 * 1024);
  return { ...taskView(id, task, 'completed'), result: { content: [{ type: 'text', text }] } };
}

function mcpServer(slot) {
  const server = new McpServer({ name: 'tasks-test', version: '1.0.0' }, { capabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } } });
  server.registerTool('job', { description: 'Does a job that takes a while.', inputSchema: fromJsonSchema(JOB_SCHEMA) }, async (args, ctx) => {
    logOf(slot).calls++;
    // Only a client that declares the extension may be answered with a task (2026-07-28: its capabilities come with each request).
    if (!Object.hasOwn(server.server.getClientCapabilities()?.extensions ?? {}, TASKS_EXTENSION_ID_V2))
      return { content: [{ type: 'text', text: 'no tasks: done at once' }] };
    const id = args.attack === 'huge-id' ? 'T'.repeat(100_000) : `task-${++made}`;
    const task = { slot, args, polls: 0, createdAt: new Date().toISOString() };
    tasks.set(id, task);
    if (args.attack === 'bad-task') return { resultType: 'task', taskId: id };
    return { resultType: 'task', ...taskView(id, task, 'working') };
  });
  server.server.setRequestHandler('tasks/get', { params: TASK_ID }, async ({ taskId }) => {
    const task = tasks.get(taskId);
    if (!task) throw new Error(`Unknown task: ${taskId.slice(0, 40)}`);
    task.polls++;
    const log = logOf(task.slot);
    log.polls[taskId.slice(0, 40)] = task.polls;
    if (task.args.attack === 'garbage') return { resultType: 'complete', hello: 'world' };
    if (task.args.attack === 'other-id') return { resultType: 'complete', ...detailed(taskId, task), taskId: 'someone-else' };
    return { resultType: 'complete', ...detailed(taskId, task) };
  });
  server.server.setRequestHandler('tasks/update', { params: UPDATE }, async ({ taskId }, ctx) => {
    const task = tasks.get(taskId);
    if (!task) throw new Error(`Unknown task: ${taskId.slice(0, 40)}`);
    const inputResponses = ctx.mcpReq.inputResponses ?? {};
    logOf(task.slot).updates.push({ taskId, inputResponses });
    if (inputResponses.who) task.answer = inputResponses.who;
    return {};
  });
  server.server.setRequestHandler('tasks/cancel', { params: TASK_ID }, async ({ taskId }) => {
    const task = tasks.get(taskId);
    if (!task) throw new Error(`Unknown task: ${taskId.slice(0, 40)}`);
    task.cancelled = true;
    logOf(task.slot).cancels.push(taskId.slice(0, 40));
    return { resultType: 'complete', ...taskView(taskId, task, 'cancelled') };
  });
  return server;
}

const handlers = new Map();
function handlerOf(slot) {
  if (!handlers.has(slot))
    handlers.set(
      slot,
      createMcpHandler(() => mcpServer(slot)),
    );
  return handlers.get(slot);
}

const http = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const route = /^(?:\/s\/([a-z0-9-]+))?\/(mcp|log)$/.exec(url.pathname);
  if (!route) return void res.writeHead(404).end();
  const slot = route[1] ?? 'default';
  if (route[2] === 'log') {
    const log = logOf(slot);
    if (req.method === 'DELETE') logs.delete(slot);
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(log));
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
  const response = await handlerOf(slot).fetch(new Request(url, { method: req.method, headers, body }));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) Readable.fromWeb(response.body).pipe(res);
  else res.end();
});
http.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.error(`listening on port ${http.address().port}`));
