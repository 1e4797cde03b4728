/**
 * A plain node:http server speaking OpenAI's chat-completions format: the fastest upstream we
 * can have, so the benchmark measures the gateway and not the provider.
 */
import http from 'node:http';

const answer = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop', logprobs: null },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
});

export function startUpstream(port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
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
