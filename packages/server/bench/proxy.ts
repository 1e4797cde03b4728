/**
 * The least a Node.js gateway can do: a node:http server that forwards each request to the
 * upstream through undici (the same client and pool settings as the gateway) and returns the
 * answer (a stream of server-sent events as it comes, anything else read whole). No
 * authentication, validation, routing, cost or logging. The benchmark measures it beside the
 * gateway, so the gateway's figures can be read against what Node itself costs on the machine at
 * hand.
 */
import http from 'node:http';
import { pipeline } from 'node:stream';
import { Agent, request } from 'undici';

const upstream = process.env.UPSTREAM_URL as string;
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const answer = await request(upstream, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      });
      if (String(answer.headers['content-type']).startsWith('text/event-stream')) {
        res.writeHead(answer.statusCode, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
        });
        pipeline(answer.body, res, () => {});
        return;
      }
      const body = await answer.body.text();
      res.writeHead(answer.statusCode, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    } catch (error) {
      res.writeHead(502).end(String(error));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`proxy listening on ${(server.address() as { port: number }).port}`);
});
