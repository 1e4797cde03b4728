/**
 * A plain node:http server speaking OpenAI's chat-completions format: the fastest upstream we
 * can have, so the benchmark measures the gateway and not the provider.
 *
 * - A request with `"stream":true` is answered as server-sent events: `chunks=N` anywhere in its
 *   body (20 by default) content chunks, each written on its own turn of the event loop so they
 *   leave as separate packets (as a provider's tokens do), then the usage chunk when
 *   `stream_options.include_usage` asks for it, then `[DONE]`.
 * - A request for the model `gpt-4.1-nano` whose body holds `[fail]` is answered 500 (the soak's
 *   failing primary, which its gate's fallback then answers).
 */
import http from 'node:http';

const usage = { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 };
const answer = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop', logprobs: null },
  ],
  usage,
});
const failure = JSON.stringify({
  error: { message: 'The server had an error while processing your request.', type: 'server_error' },
});
export const FAILING_MODEL = 'gpt-4.1-nano';

const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices, ...extra })}\n\n`;
const firstFrame = frame([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
const contentFrame = frame([{ index: 0, delta: { content: 'tok ' }, finish_reason: null }]);
const lastFrame = frame([{ index: 0, delta: {}, finish_reason: 'stop' }]);
const usageFrame = frame([], { usage });

function stream(res: http.ServerResponse, chunks: number, withUsage: boolean) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(firstFrame);
  let sent = 0;
  const next = () => {
    if (res.destroyed) return;
    if (sent < chunks) {
      sent++;
      res.write(contentFrame);
      setImmediate(next);
      return;
    }
    res.end(`${lastFrame}${withUsage ? usageFrame : ''}data: [DONE]\n\n`);
  };
  setImmediate(next);
}

export function startUpstream(port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const body = parts.length === 1 ? (parts[0] as Buffer).toString() : Buffer.concat(parts).toString();
      if (body.includes('[fail]') && body.includes(`"model":"${FAILING_MODEL}"`)) {
        res.writeHead(500, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(failure),
        });
        res.end(failure);
        return;
      }
      if (/"stream":\s*true/.test(body)) {
        const chunks = Number(/chunks=(\d+)/.exec(body)?.[1] ?? 20);
        stream(res, chunks, /"include_usage":\s*true/.test(body));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      resolve({ port: address.port, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { port } = await startUpstream(Number(process.env.PORT ?? 0));
  console.log(`upstream listening on ${port}`);
}
