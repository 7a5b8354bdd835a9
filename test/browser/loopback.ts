/**
 * What the browser tests' run reaches on loopback instead of the internet: a model server
 * that speaks the Chat Completions wire format (the real `openai` provider talks to it, as
 * it would to any OpenAI-compatible server), and a page for web/fetch. Its replies follow
 * the conversation it is sent, so a retried round gets the same reply.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The text web/fetch reads: markup an attacker would plant, as plain text. */
export const PAGE_TEXT = 'Release notes <script>window.__pwned = "page"; alert("page")</script> <img src=x onerror="window.__pwned = \'page-img\'; alert(2)">';

/** The model's final reply, with markup of its own. */
export const MODEL_SUMMARY = 'The page plans a release. <script>window.__pwned = "model"</script><img src=x onerror="alert(3)">';

/** The loopback server: its origin and how to stop it. */
export interface Loopback {
  base: string;
  close(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content?: string | null;
}

/** Starts the loopback server on a free port of 127.0.0.1. */
export async function startLoopback(): Promise<Loopback> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'GET' && request.url === '/page.txt') {
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(PAGE_TEXT);
        return;
      }
      if (request.method === 'POST' && request.url === '/v1/chat/completions') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: ChatMessage[] };
        const last = body.messages[body.messages.length - 1];
        const usage = { prompt_tokens: 40 * body.messages.length, completion_tokens: 12 };
        // First round: fetch the page the user message names; after the tool's output: sum up.
        const message =
          last?.role === 'tool'
            ? { role: 'assistant', content: MODEL_SUMMARY }
            : {
                role: 'assistant',
                content: null,
                tool_calls: [
                  {
                    id: 'call_fetch_1',
                    type: 'function',
                    function: { name: 'web_fetch', arguments: JSON.stringify({ url: /(http:\/\/\S+)/.exec(String(last?.content))?.[1] ?? '' }) },
                  },
                ],
              };
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: 'loopback', object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop' }], usage }));
        return;
      }
      response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
