/**
 * A local stand-in for OpenAI's chat-completions API, speaking its wire format, for tests that
 * need a model other than the built-in mock to answer. Point OPENAI_BASE_URL at `url`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type UpstreamRequest = { model: string; messages: unknown[]; response_format?: unknown } & Record<
  string,
  unknown
>;

export type UpstreamUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

export type FakeOpenAI = {
  url: string;
  /** The bodies received, oldest first. */
  received: UpstreamRequest[];
  /** What the next answers say (default "fake answer"), and the usage they report (null: none). */
  reply(content: (request: UpstreamRequest) => string, usage?: UpstreamUsage | null): void;
  close(): Promise<void>;
};

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const received: UpstreamRequest[] = [];
  let content: (request: UpstreamRequest) => string = () => 'fake answer';
  let usage: UpstreamUsage | null = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const body = JSON.parse(raw) as UpstreamRequest;
      received.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-fake-${received.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [
            { index: 0, message: { role: 'assistant', content: content(body) }, finish_reason: 'stop' },
          ],
          ...(usage && { usage }),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received,
    reply: (fn, reported = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }) => {
      content = fn;
      usage = reported;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
