/**
 * The chat routes read their body straight from the socket (http/errors.ts incomingChunks), so
 * what reaches them there is tested over a real socket: a body sent in chunks with no length is
 * read whole; one that passes the limit part way is refused with a 413 in the route's own error
 * shape and the connection closed, its rest never read; a client that leaves part way through its
 * body leaves the server answering the next.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { useSocketServer, useTestApp } from './support/app.ts';
import { createGate, signUpUser } from './support/factories.ts';

const LIMIT = 4096;
const app = useTestApp({ GATEHOUSE_MAX_CHAT_BODY_BYTES: String(LIMIT) });
const server = useSocketServer(app);

/** Sends a chunked POST, one HTTP chunk per part; answers everything the server wrote until it closed or `waitMs` passed. */
async function chunkedPost(path: string, headers: Record<string, string>, parts: string[], waitMs = 10_000) {
  const { port } = new URL(server.base());
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: 127.0.0.1:${port}`,
    'content-type: application/json',
    'transfer-encoding: chunked',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ].join('\r\n');
  socket.write(`${head}\r\n\r\n`);
  let received = '';
  let closed = false;
  socket.on('data', (d) => {
    received += d.toString('utf8');
  });
  const ended = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  for (const part of parts) {
    if (socket.destroyed) break;
    socket.write(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
    // Each its own packet, as a client streaming its body sends it.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (!socket.destroyed) socket.write('0\r\n\r\n');
  await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, waitMs))]);
  socket.destroy();
  return { received, closed };
}

describe('a chat body read from the socket', () => {
  it('is read whole when it comes in chunks with no length', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo' });
    const body = JSON.stringify({
      model: 'mock/echo',
      messages: [{ role: 'user', content: 'one two three' }],
    });
    const parts = [body.slice(0, 10), body.slice(10, 40), body.slice(40)];
    const { received } = await chunkedPost(
      '/v1/chat/completions',
      { authorization: `Bearer ${user.key}`, 'x-gatehouse-gate-id': gate.id, connection: 'close' },
      parts,
    );
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toContain('"object":"chat.completion"');
    expect(received).toContain('one two three');
  });

  it.each([
    ['/v1/chat/completions', /"type":"invalid_request_error"/],
    ['/v3/chat', /"code":"payload_too_large"/],
  ])(
    '%s: refuses one that passes the limit part way with a 413 in its shape, and closes the connection',
    async (path, shape) => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user, { model: 'mock/echo' });
      // Eight parts of 1 kB: the fifth passes the 4 kB limit; what follows is never read.
      const parts = Array.from({ length: 8 }, () => 'x'.repeat(1024));
      const { received, closed } = await chunkedPost(
        path,
        { authorization: `Bearer ${user.key}`, 'x-gatehouse-gate-id': gate.id },
        parts,
      );
      expect(received).toMatch(/^HTTP\/1\.1 413 /);
      expect(received).toMatch(/\r\nconnection: close\r\n/i);
      expect(received).toMatch(shape);
      expect(closed).toBe(true);
    },
  );

  it('answers the next request after a client left part way through its body', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/echo' });
    const { port } = new URL(server.base());
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${user.key}\r\nx-gatehouse-gate-id: ${gate.id}\r\ncontent-length: 1000\r\n\r\n{"model":`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    const res = await fetch(`${server.base()}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${user.key}`,
        'content-type': 'application/json',
        'x-gatehouse-gate-id': gate.id,
      },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'still here' }] }),
    });
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain('still here');
  });
});
