/**
 * A local HTTP server standing in for an upstream provider. It records every request exactly as
 * it arrived (method, path, headers, parsed JSON body) and answers from a queue of scripted
 * replies: JSON, Server-Sent Events written frame by frame (each frame split across two writes, so
 * the client's parser has to reassemble them), or a failure: no answer at all, a socket destroyed
 * before the answer, halfway through a body, or in the middle of a stream.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, expect } from 'vitest';

export type RecordedRequest = {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: http.IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are read by tests as plain JSON
  body: any;
  /** The body's bytes as they arrived (multipart uploads). */
  raw: Buffer;
};

export type Reply =
  | {
      type: 'json';
      status?: number;
      body: unknown;
      headers?: Record<string, string>;
      delayMs?: number;
      /** Answers once this settles (after delayMs). */
      until?: Promise<unknown>;
    }
  | { type: 'text'; status?: number; contentType: string; text: string }
  /** A binary body (speech audio). */
  | { type: 'bytes'; status?: number; contentType: string; data: Buffer }
  | {
      type: 'sse';
      /** Raw SSE frames, each ending in its blank line. */
      frames: string[];
      status?: number;
      /** After the frames: end the response, kill the socket, or keep the stream open and silent. */
      ending?: 'end' | 'destroy' | 'hang';
      /** After the first `after` frames, the stream goes quiet until `until` settles. */
      pause?: { after: number; until: Promise<unknown> };
    }
  /** Accepts the request and never answers. */
  | { type: 'hang' }
  /** Destroys the socket before any byte of an answer. */
  | { type: 'reset' }
  /** Sends the headers and half the JSON body, then destroys the socket. */
  | { type: 'truncated'; body: unknown };

export type Responder = Reply | ((request: RecordedRequest) => Reply);

/** Checks a request the way the real provider does; returns the rejection, or null to go on. */
export type Gatekeeper = (request: RecordedRequest) => Reply | null;

export type Upstream = {
  /** http://127.0.0.1:PORT, without a trailing slash. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** The most recent request. */
  last(): RecordedRequest;
  /** Queues the answers to the next requests, in order. */
  reply(...responders: Responder[]): void;
  /** Replies still queued: a test that leaves some has asked for fewer calls than it scripted. */
  pending(): number;
  reset(): void;
  close(): Promise<void>;
};

const UNSCRIPTED: Reply = {
  type: 'json',
  // 418: not retryable, so a test that forgot to script an answer fails loudly instead of falling back.
  status: 418,
  body: { error: { message: 'emulator: no reply scripted for this request' } },
};

async function readBody(req: http.IncomingMessage): Promise<{ body: unknown; raw: Buffer }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const text = raw.toString('utf8');
  if (!text) return { body: null, raw };
  try {
    return { body: JSON.parse(text), raw };
  } catch {
    return { body: text, raw };
  }
}

async function answer(res: http.ServerResponse, reply: Reply): Promise<void> {
  switch (reply.type) {
    case 'json': {
      if (reply.delayMs) await sleep(reply.delayMs);
      if (reply.until) await reply.until;
      const text = JSON.stringify(reply.body);
      res.writeHead(reply.status ?? 200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        ...reply.headers,
      });
      res.end(text);
      return;
    }
    case 'text':
      res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType });
      res.end(reply.text);
      return;
    case 'bytes':
      res.writeHead(reply.status ?? 200, {
        'content-type': reply.contentType,
        'content-length': reply.data.length,
      });
      res.end(reply.data);
      return;
    case 'truncated': {
      const text = JSON.stringify(reply.body);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.write(text.slice(0, Math.floor(text.length / 2)));
      await sleep(20);
      res.socket?.destroy();
      return;
    }
    case 'sse': {
      res.writeHead(reply.status ?? 200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      res.flushHeaders();
      for (const [i, frame] of reply.frames.entries()) {
        if (i === reply.pause?.after) await reply.pause.until;
        const half = Math.floor(frame.length / 2);
        res.write(frame.slice(0, half));
        await sleep(1);
        res.write(frame.slice(half));
        await sleep(1);
      }
      if (reply.ending === 'destroy') res.socket?.destroy();
      else if (reply.ending !== 'hang') res.end();
      return;
    }
    case 'reset':
      res.socket?.destroy();
      return;
    case 'hang':
      return;
  }
}

export async function startUpstream(gatekeeper: Gatekeeper = () => null): Promise<Upstream> {
  const requests: RecordedRequest[] = [];
  const queue: Responder[] = [];
  const server = http.createServer(async (req, res) => {
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      ...(await readBody(req)),
    };
    requests.push(request);
    const rejected = gatekeeper(request);
    const responder = rejected ?? queue.shift() ?? UNSCRIPTED;
    try {
      await answer(res, typeof responder === 'function' ? responder(request) : responder);
    } catch {
      res.socket?.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    last: () => {
      const request = requests.at(-1);
      if (!request) throw new Error('the emulator has received no request');
      return request;
    },
    reply: (...responders) => {
      queue.push(...responders);
    },
    pending: () => queue.length,
    reset: () => {
      requests.length = 0;
      queue.length = 0;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One SSE frame: an optional event name and a JSON (or literal) data line. */
export function sseFrame(data: unknown, event?: string, lineEnd = '\n'): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}${lineEnd}` : ''}data: ${text}${lineEnd}${lineEnd}`;
}

/**
 * Registers the checks of a test file (or describe block) on its stand-in: after each test every
 * scripted reply was used, and the queue is empty for the next; after all, the server closes.
 * `upstream` is read when the hooks run, so it may be started in a beforeAll.
 */
export function expectRepliesUsed(upstream: () => Upstream) {
  afterEach(() => {
    const unused = upstream().pending();
    upstream().reset();
    expect(unused, 'scripted replies left unused').toBe(0);
  });
  afterAll(() => upstream().close());
}
