import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { JSON_BODY_LIMITS, jsonTextDeepPath, jsonTextShape } from '@gatehouse/rules/jsonLimits';
import type { Context, MiddlewareHandler } from 'hono';
import type { Leaving } from '../dataplane/pipeline.ts';
import { DomainError, HTTP_STATUS, RateLimitedError, ValidationError } from '../domain/errors.ts';

export function errorBody(
  code: string,
  message: string,
  details?: Record<string, unknown>,
  requestId?: string,
) {
  return { error: { code, message, ...(details && { details }), ...(requestId && { requestId }) } };
}

/** OpenAI's error `type` for each status, on the routes that answer in OpenAI's shape. */
export const OPENAI_ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
};

/**
 * A client that closed its connection while its body was being read: nothing went wrong here,
 * and nobody is left to answer (Node rejects the read with "aborted", ECONNRESET).
 */
export function isClientGone(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return (e?.code === 'ECONNRESET' && e.message === 'aborted') || e?.code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/** Status for a request whose client left (nginx's 499): only access logs ever see it. */
export const CLIENT_GONE_STATUS = 499;

/** The native error body for any thrown value; only the unexpected ones become a masked 500. */
export function errorResponse(c: Context, error: unknown) {
  if (error instanceof DomainError) {
    return c.json(
      errorBody(error.code, error.message, error.details, error.requestId),
      HTTP_STATUS[error.code],
    );
  }
  if (isClientGone(error)) return c.body(null, CLIENT_GONE_STATUS as 400);
  console.error('Unexpected error on', c.req.method, c.req.path, error);
  return c.json(errorBody('internal_error', 'Something went wrong on our side'), 500);
}

export const REQUEST_ID_HEADER = 'x-gatehouse-request-id';

/** The paths whose answers name their request: /v1 and /v3, as app.use('/v1/*') matches them. */
const namesRequest = (path: string) =>
  path.startsWith('/v1') || path.startsWith('/v3') ? path.length === 3 || path[3] === '/' : false;

/**
 * What an answer says besides its body, one middleware for every route (a data-plane request
 * takes one step for it, not two):
 * - whichever error shape its route answers in, a refusal for too many requests or attempts says
 *   when to come back, in Retry-After (whole seconds, at least 1); a request that left a log
 *   entry, its id, in x-gatehouse-request-id (as answers do);
 * - every /v1 and /v3 answer names its request in x-gatehouse-request-id: the id of its log entry
 *   where it left one (set by the route or above), else an id of its own, so a client can always
 *   quote one. A stream the route wrote itself already carries its entry's.
 */
export const answerHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  if (c.error instanceof RateLimitedError) c.header('retry-after', String(c.error.retryAfterSeconds));
  if (c.error instanceof DomainError && c.error.requestId) c.header(REQUEST_ID_HEADER, c.error.requestId);
  if (!namesRequest(c.req.path)) return;
  const headers = c.res.headers;
  if (headers.has(REQUEST_ID_HEADER) || headers.has('x-hono-already-sent')) return;
  try {
    headers.set(REQUEST_ID_HEADER, randomUUID());
  } catch {
    // A response whose headers are immutable (one passed through from fetch): copied.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(REQUEST_ID_HEADER, randomUUID());
  }
};

/** What @hono/node-server hands a route besides the web Request: the node request and response. */
type NodeBindings = { incoming?: IncomingMessage; outgoing?: ServerResponse };

/** The 413 of every body limit, the middleware's and the chat routes' alike. */
export const tooLarge = (maxBytes: number) =>
  new DomainError('payload_too_large', `Request body exceeds ${maxBytes} bytes`);

/**
 * The 413 of a body past `maxBytes`, the answer closing its connection: the rest of the body is
 * never read. Both body readers refuse with it, at once when Content-Length says so.
 */
function refusedTooLarge(c: Context, maxBytes: number): DomainError {
  c.header('connection', 'close');
  return tooLarge(maxBytes);
}
const saysTooLarge = (c: Context, maxBytes: number) => Number(c.req.header('content-length')) > maxBytes;

/**
 * The body's chunks as they arrive, refused with a 413 once they pass `maxBytes` (at once when
 * Content-Length says so). Under the node server they are read straight from the socket's stream:
 * building the web Request's body stream costs the hot path more than the rest of the read.
 */
export async function* bodyChunks(c: Context, maxBytes: number): AsyncGenerator<Buffer> {
  if (saysTooLarge(c, maxBytes)) throw refusedTooLarge(c, maxBytes);
  const incoming = (c.env as NodeBindings | undefined)?.incoming;
  // A body refused part way is left unread rather than destroyed, which would close the
  // connection before the refusal is answered. Node's web streams are async iterable, though the
  // DOM types do not say so.
  const source = (incoming?.iterator({ destroyOnReturn: false }) ??
    c.req.raw.body) as AsyncIterable<Uint8Array> | null;
  if (!source) return;
  let size = 0;
  for await (const chunk of source) {
    size += chunk.length;
    if (size > maxBytes) throw refusedTooLarge(c, maxBytes);
    yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
  }
}

/**
 * The Node request's body, refused as bodyChunks refuses it, read with the stream's 'data' events:
 * an async iterator costs each body a generator, an end-of-stream watcher and a promise a chunk.
 * Past `maxBytes` the stream is paused and the rest left unread, as there.
 */
function incomingChunks(c: Context, incoming: IncomingMessage, maxBytes: number): Promise<Buffer[]> {
  if (saysTooLarge(c, maxBytes)) return Promise.reject(refusedTooLarge(c, maxBytes));
  const chunks: Buffer[] = [];
  if (incoming.readableEnded) return Promise.resolve(chunks);
  return new Promise((resolve, reject) => {
    let size = 0;
    const settle = (error: unknown) => {
      incoming.off('data', onData).off('end', onEnd).off('error', settle).off('close', onClose);
      if (error === null) resolve(chunks);
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      incoming.pause();
      settle(refusedTooLarge(c, maxBytes));
    };
    const onEnd = () => settle(null);
    // Closed before its end: the client went away, before the read or part way through it. As the
    // iterator failed: with the stream's own error, else a premature close, both of which
    // isClientGone knows (a quiet 499, not an unexpected 500).
    const onClose = () =>
      settle(
        incoming.errored ??
          Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }),
      );
    incoming.on('data', onData).on('end', onEnd).on('error', settle).on('close', onClose);
    if (incoming.destroyed) onClose();
    // A stream paused before (none is today) would not flow for a 'data' listener alone.
    else if (incoming.readableFlowing === false) incoming.resume();
  });
}

/** The body as text, at most `maxBytes` long (bodyChunks). */
async function readText(c: Context, maxBytes: number): Promise<string> {
  const incoming = (c.env as NodeBindings | undefined)?.incoming;
  let chunks: Buffer[] = [];
  if (incoming) chunks = await incomingChunks(c, incoming, maxBytes);
  else for await (const chunk of bodyChunks(c, maxBytes)) chunks.push(chunk);
  return chunks.length === 1
    ? (chunks[0] as Buffer).toString('utf8')
    : Buffer.concat(chunks).toString('utf8');
}

/** The Node server's response under @hono/node-server, where a route may write to it itself. */
export const nodeResponse = (c: Context): ServerResponse | undefined =>
  (c.env as NodeBindings | undefined)?.outgoing;

/**
 * The client's leaving, heard from the Node response: it closed before its answer was complete.
 * Not an AbortController (see Leaving): the attempts make their own, and listen here.
 */
class ResponseLeaving implements Leaving {
  aborted = false;
  reason: unknown = undefined;
  #listeners: (() => void)[] = [];

  constructor(outgoing: ServerResponse) {
    const gone = () => {
      if (!outgoing.writableFinished) this.#leave();
    };
    if (outgoing.closed || outgoing.destroyed) gone();
    else outgoing.once('close', gone);
  }

  #leave() {
    this.aborted = true;
    this.reason = new Error('the client went away');
    const listeners = this.#listeners;
    this.#listeners = [];
    // One listener's failure neither skips the others nor escapes into the response's 'close'.
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        console.error('client leaving: a listener failed', error);
      }
    }
  }

  // As an AbortSignal's: a listener added once it has aborted is never called.
  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.#listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners.indexOf(listener);
    if (at >= 0) this.#listeners.splice(at, 1);
  }
}

/**
 * Aborts when the client goes away before its answer is complete, so the provider call it was
 * waiting for is cancelled too. Take it first thing in a route: a client that left before is
 * seen as gone at once.
 */
export function clientSignal(c: Context): Leaving {
  const outgoing = nodeResponse(c);
  return outgoing ? new ResponseLeaving(outgoing) : c.req.raw.signal;
}

/**
 * The request body as JSON, or a 400 that says what is wrong with it. With `maxBytes` the route
 * enforces its own size limit while reading (the chat routes; the others sit behind bodyLimit).
 */
export async function readJson(
  c: Context,
  maxBytes?: number,
  opts: { optional?: boolean } = {},
): Promise<unknown> {
  const text = maxBytes === undefined ? await c.req.text() : await readText(c, maxBytes);
  if (text.trim() === '') {
    if (opts.optional) return {};
    throw new ValidationError([{ path: '', message: 'request body is required' }]);
  }
  // Counted on the text first: JSON.parse's time grows with the members it builds.
  const { maxMembers, maxDepth } = JSON_BODY_LIMITS;
  const shape = jsonTextShape(text, { members: maxMembers, depth: maxDepth });
  if (shape.members > maxMembers) {
    throw new ValidationError([
      {
        path: '',
        message: `request body must have at most ${maxMembers} JSON members (object keys and array items, at every level, together)`,
      },
    ]);
  }
  if (shape.depth > maxDepth) {
    throw new ValidationError([
      {
        path: jsonTextDeepPath(text, maxDepth),
        message: `nests objects and arrays more than ${maxDepth} deep (the whole body may nest at most ${maxDepth})`,
      },
    ]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ValidationError([{ path: '', message: 'request body is not valid JSON' }]);
  }
  c.set(BODY_BYTES, Buffer.byteLength(text) + shape.growth);
  return parsed;
}

const BODY_BYTES = 'gatehouse.bodyBytes';

/**
 * At most how many bytes the body readJson read takes written back as JSON (jsonTextShape's
 * `growth` on its text's bytes): what a drop-in route's reservation bounds a body as sent by.
 */
export const bodyBytesOf = (c: Context): number | undefined => c.get(BODY_BYTES);

/** What Node's HTTP parser refuses before any route runs, as status, code and message. */
function clientErrorAnswer(code: unknown): [number, string, string] {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'request_timeout', "The request did not arrive in full within the server's time limit"];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'request_header_fields_too_large', 'The request headers are too large'];
    default:
      return [400, 'invalid_request', 'The request is not valid HTTP'];
  }
}

/**
 * Answers a connection Node's server refused (its 'clientError'): a request that timed out, or
 * that its parser cannot read. Node's own answer has no body; this one is the native error
 * shape, then the connection closes. Nothing is written once an answer has begun.
 */
export function answerClientError(error: { code?: unknown }, socket: Duplex): void {
  const answering = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, code, message] = clientErrorAnswer(error.code);
  const body = JSON.stringify(errorBody(code, message));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}
