/**
 * The real server process (src/main.ts) over raw sockets, where a client can misbehave below
 * HTTP's surface: headers or a body that never finish are cut with a 408 once their timeout
 * passes (short ones here, through the environment), while an answer that takes longer than
 * that is never cut; what Node's parser refuses (headers too large, a broken request line) is
 * answered in the native error shape. The process keeps its data in PGlite whichever database
 * the suite runs on, so the tests run once, in the PGlite project.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKind } from './support/app.ts';
import { say, sseEvents } from './support/chat.ts';
import { startServerProcess } from './support/process.ts';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1500;

type RawAnswer = { status: number; headers: Record<string, string>; body: string };

/**
 * Writes `chunks` to a fresh connection (the last one left unfinished, if the caller wants) and
 * reads whatever comes back until the server closes the connection.
 */
function rawExchange(port: number, chunks: (string | Buffer)[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', (error) => {
      // A reset after the answer arrived still leaves the answer to read.
      if (received.length === 0) reject(error);
    });
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => {
          const i = line.indexOf(':');
          return [line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim()];
        }),
      );
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body: rest.join('\r\n\r\n') });
    });
    socket.on('connect', () => {
      for (const chunk of chunks) socket.write(chunk);
    });
  });
}

function expectNativeError(answer: RawAnswer, status: number, code: string) {
  expect(answer.status, JSON.stringify(answer)).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers.connection).toBe('close');
  const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message).toEqual(expect.any(String));
}

describe.runIf(databaseKind === 'pglite')('the server process, below HTTP', () => {
  let server: Awaited<ReturnType<typeof startServerProcess>>;
  let dataDir = '';

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-server-'));
    server = await startServerProcess(dataDir, {
      GATEHOUSE_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      GATEHOUSE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    });
  }, 60_000);
  afterAll(async () => {
    const child: ChildProcess | undefined = server?.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers a body that never finishes with a 408 in the native error shape, and closes', async () => {
    const answer = await rawExchange(server.port, [
      'POST /v1/auth/signin HTTP/1.1\r\nHost: gatehouse\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100\r\n\r\n{"email": "slow',
    ]);
    expectNativeError(answer, 408, 'request_timeout');
  });

  it('answers headers that never finish with a 408 in the native error shape, and closes', async () => {
    const answer = await rawExchange(server.port, ['GET /healthz HTTP/1.1\r\nHost: gatehouse\r\nX-Slow: ']);
    expectNativeError(answer, 408, 'request_timeout');
  });

  it('answers headers too large with a 431 in the native error shape', async () => {
    const answer = await rawExchange(server.port, [
      `GET /healthz HTTP/1.1\r\nHost: gatehouse\r\nX-Big: ${'x'.repeat(100_000)}\r\n\r\n`,
    ]);
    expectNativeError(answer, 431, 'request_header_fields_too_large');
  });

  it('answers a request line that is not HTTP with a 400 in the native error shape', async () => {
    const answer = await rawExchange(server.port, ['this is not http\r\n\r\n']);
    expectNativeError(answer, 400, 'invalid_request');
  });

  it('never cuts an answer that takes longer than the request timeout, streamed or not', async () => {
    const json = { 'content-type': 'application/json' };
    const signup = await fetch(`${server.url}/v1/auth/signup`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: `slow-${randomUUID()}@example.test`, password: `pw-${randomUUID()}` }),
    });
    expect(signup.status, await signup.clone().text()).toBe(201);
    const key = ((await signup.json()) as { apiKey: { key: string } }).apiKey.key;
    const headers = { ...json, authorization: `Bearer ${key}` };
    const created = await fetch(`${server.url}/v1/gates`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'slow', model: 'mock/echo', taskType: 'chat' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const gate = (await created.json()) as { id: string };
    const slow = `[mock:delay=${REQUEST_TIMEOUT_MS * 2}] take your time`;

    const [plain, streamed] = (await Promise.all(
      [false, true].map((stream) =>
        fetch(`${server.url}/v3/chat`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ gateId: gate.id, data: { messages: say(slow), stream } }),
        }),
      ),
    )) as [Response, Response];
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as { content: string }).content).toBe('Echo: take your time');
    expect(streamed.status).toBe(200);
    const events = await sseEvents(streamed);
    const deltas = events.slice(0, -1) as { delta?: { content?: string } }[];
    expect(deltas.map((e) => e.delta?.content ?? '').join('')).toBe('Echo: take your time');
    expect(events.at(-1)).toBe('[DONE]');
  });
});
