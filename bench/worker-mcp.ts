/**
 * The Worker benchmark's `mcp` part (bench/worker.ts): what calling a prompt over /mcp costs
 * beside the REST API, on the local server, in the same run.
 *  - A call: `tools/call` of `hello` on 2026-07-28 (one stateless POST to /mcp, answered with
 *    the run's result) beside `POST /prompts/hello/runs?wait=30` with the same arg (answered
 *    with the completed run), each timed from the request to its answer.
 *  - An answer: a prompt that asks once (bench-mcp-ask), driven to its ask untimed; then the
 *    retry of the call carrying the `requestState` and the answer in `inputResponses`
 *    (answered with the run's result) beside `POST /runs/:id/asks/:ask_id?wait=30` (answered
 *    with the completed run).
 * Both sides are sent as plain HTTP requests from this process, as any client sends them
 * (no SDK on the timed path: the figure is the server's). Interleaved: each round times a
 * batch of each, the batch first in turn alternating; a row is the median of the rounds'
 * ratios. Goal: the MCP call at most 1.2x the REST start.
 */
import { median, now } from './worker-client.ts';
import type { LocalServer } from '../scripts/local-server.mjs';

/** The prompt of the answer rows: one ask, then the answer as the result. */
export const BENCH_MCP_ASK = `---
name: bench-mcp-ask
description: Asks once and returns the answer.
runvil: 0
uses: [user-input]
---
# Bench MCP ask

## Ask
\`\`\`lua
return tools.call('user-input/ask', { question = 'Colour?' })
\`\`\`
`;

const PROTOCOL = '2026-07-28';

/** What a 2026-07-28 request carries in `_meta`: the protocol version, the client and its capabilities. */
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': PROTOCOL,
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

type Message = { id?: number; result?: any; error?: { code: number; message: string } };

/** The benchmark's side of /mcp and the REST API on `server`. */
function clients(server: LocalServer, token: string) {
  let id = 0;
  const rest = async (path: string, body: unknown): Promise<any> => {
    const response = await fetch(`${server.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
    const text = await response.text();
    if (response.status !== 200 && response.status !== 202) throw new Error(`POST ${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
  /** One JSON-RPC request to /mcp; its result (an answer on an event stream is read to the message with its id). */
  const mcp = async (method: string, params: Record<string, unknown>): Promise<any> => {
    const request = { jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: ENVELOPE } };
    const response = await fetch(`${server.base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': PROTOCOL,
        'mcp-method': method,
        ...(method === 'tools/call' ? { 'mcp-name': String(params.name) } : {}),
      },
      body: JSON.stringify(request),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`POST /mcp ${method}: ${response.status} ${text}`);
    const messages: Message[] = response.headers.get('content-type')?.includes('text/event-stream')
      ? text
          .split('\n')
          .filter((line) => line.startsWith('data: ') && line.length > 6)
          .map((line) => JSON.parse(line.slice(6)))
      : [JSON.parse(text)];
    const answer = messages.find((message) => message.id === request.id);
    if (!answer || answer.error) throw new Error(`POST /mcp ${method}: ${text}`);
    return answer.result;
  };
  return { rest, mcp };
}

/** Times `op` in us. */
async function timed(op: () => Promise<void>): Promise<number> {
  const t0 = now();
  await op();
  return now() - t0;
}

/** Interleaved rounds of a batch of each side; the median of each side and of the rounds' ratios. */
async function interleaved(batch: number, rounds: number, sides: { rest: () => Promise<number>; mcp: () => Promise<number> }) {
  const run = async (which: 'rest' | 'mcp') => {
    const times: number[] = [];
    for (let i = 0; i < batch; i++) times.push(await sides[which]());
    return times;
  };
  // Untimed warm-up of both.
  await run('rest');
  await run('mcp');
  const all = { rest: [] as number[], mcp: [] as number[] };
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const times = { rest: [] as number[], mcp: [] as number[] };
    for (const which of r % 2 === 0 ? (['rest', 'mcp'] as const) : (['mcp', 'rest'] as const)) times[which] = await run(which);
    all.rest.push(...times.rest);
    all.mcp.push(...times.mcp);
    ratios.push(median(times.mcp) / median(times.rest));
  }
  return { restUs: median(all.rest), mcpUs: median(all.mcp), ratio: median(ratios), low: Math.min(...ratios), high: Math.max(...ratios) };
}

/** A prompt called over MCP beside the same prompt started over REST with ?wait, and an ask answered over MCP beside one answered over REST. */
export async function mcpCalls(server: LocalServer, token: string, scale: number): Promise<Record<string, number>> {
  const { rest, mcp } = clients(server, token);
  const put = await fetch(`${server.base}/prompts/bench-mcp-ask`, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: BENCH_MCP_ASK });
  if (put.status !== 201) throw new Error(`PUT /prompts/bench-mcp-ask: ${put.status} ${await put.text()}`);
  const batch = Math.max(5, Math.round(20 * scale));
  const rounds = Math.max(4, Math.round(12 * scale));
  const textOf = (result: any): string => result?.content?.find((block: any) => block.type === 'text')?.text ?? '';

  const call = await interleaved(batch, rounds, {
    rest: () =>
      timed(async () => {
        const view = await rest('/prompts/hello/runs?wait=30', { args: { name: 'Ada' } });
        if (view.status !== 'completed') throw new Error(`hello over REST: ${JSON.stringify(view)}`);
      }),
    mcp: () =>
      timed(async () => {
        const result = await mcp('tools/call', { name: 'hello', arguments: { name: 'Ada' } });
        if (result.isError || !textOf(result).startsWith('Hello, Ada!')) throw new Error(`hello over MCP: ${JSON.stringify(result)}`);
      }),
  });

  const answer = await interleaved(batch, rounds, {
    rest: async () => {
      const waiting = await rest('/prompts/bench-mcp-ask/runs?wait=30', { args: {} });
      if (waiting.status !== 'suspended') throw new Error(`bench-mcp-ask did not suspend: ${JSON.stringify(waiting)}`);
      const ask = waiting.pending[0].ask_id;
      return timed(async () => {
        const done = await rest(`/runs/${waiting.run_id}/asks/${ask}?wait=30`, { answer: 'blue' });
        if (done.status !== 'completed' || done.result !== 'blue') throw new Error(`answer over REST: ${JSON.stringify(done)}`);
      });
    },
    mcp: async () => {
      const asked = await mcp('tools/call', { name: 'bench-mcp-ask', arguments: {} });
      const [key, question] = Object.entries(asked.inputRequests ?? {})[0] ?? [];
      if (asked.resultType !== 'input_required' || !key) throw new Error(`bench-mcp-ask over MCP did not ask: ${JSON.stringify(asked)}`);
      const [field] = Object.keys((question as any).params.requestedSchema.properties);
      const inputResponses = { [key]: { action: 'accept', content: { [field!]: 'blue' } } };
      return timed(async () => {
        const done = await mcp('tools/call', { name: 'bench-mcp-ask', arguments: {}, inputResponses, requestState: asked.requestState });
        if (textOf(done) !== 'blue') throw new Error(`answer over MCP: ${JSON.stringify(done)}`);
      });
    },
  });

  const row = (what: string, restWhat: string, mcpWhat: string, m: typeof call, goal: string) =>
    console.log(
      `${what}, median us: ${restWhat} ${m.restUs.toFixed(0)} | ${mcpWhat} ${m.mcpUs.toFixed(0)} | ratio ${m.ratio.toFixed(2)}x (median of ${rounds} interleaved rounds of ${batch}; range ${m.low.toFixed(2)}-${m.high.toFixed(2)})${goal}`,
    );
  row(
    'hello completed',
    'POST /prompts/hello/runs?wait=30',
    'MCP tools/call (2026-07-28)',
    call,
    `; goal <= 1.2x: ${call.ratio <= 1.2 ? 'within goal' : 'OVER GOAL'}`,
  );
  row('ask answered to the run completed', 'POST /runs/:id/asks/:ask_id?wait=30', 'MCP retry with requestState', answer, '');
  return {
    mcp_call_rest_us: Math.round(call.restUs),
    mcp_call_mcp_us: Math.round(call.mcpUs),
    mcp_call_ratio: +call.ratio.toFixed(2),
    mcp_answer_rest_us: Math.round(answer.restUs),
    mcp_answer_mcp_us: Math.round(answer.mcpUs),
    mcp_answer_ratio: +answer.ratio.toFixed(2),
  };
}
