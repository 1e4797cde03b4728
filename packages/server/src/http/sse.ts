import type { ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context } from 'hono';
import type { ChatHooks, ChatOutcome, StreamStart } from '../dataplane/chat.ts';
import type { Leaving } from '../dataplane/pipeline.ts';
import type { StreamDelta } from '../providers/types.ts';
import { jsonText } from '../providers/wireText.ts';
import { nodeResponse } from './errors.ts';

const encoder = new TextEncoder();

/** Names what a translation to another family left out of the request (see Forward.dropped). */
export const DROPPED_HEADER = 'x-gatehouse-dropped-fields';

/** Response headers that tell what the gateway did besides answering. */
export function outcomeHeaders(
  o: Pick<ChatOutcome, 'id' | 'modelUsed' | 'ignoredOverrides'> &
    Partial<ChatOutcome> & { dropped?: string[] | undefined },
) {
  const dropped = o.dropped ?? o.completion?.dropped;
  // Set one by one, in this order (an object of conditional spreads is built property by property).
  const headers: Record<string, string> = {
    'x-gatehouse-request-id': o.id,
    'x-gatehouse-model-used': o.modelUsed,
  };
  if (o.costUsd !== undefined) headers['x-gatehouse-cost-usd'] = String(o.costUsd);
  if (o.ignoredOverrides.length > 0) headers['x-gatehouse-ignored-overrides'] = o.ignoredOverrides.join(',');
  if (o.spendingWarning) headers['x-gatehouse-spending-warning'] = 'spending limit reached';
  if (o.action) headers['x-gatehouse-action'] = o.action;
  if (o.sessionStatus) headers['x-gatehouse-session-status'] = o.sessionStatus;
  if (dropped?.length) headers[DROPPED_HEADER] = dropped.join(',');
  // A fallback answered in another shape than the primary gives (embeddings: "dimensions 1536 -> 3072").
  if (o.shapeNote) headers['x-gatehouse-shape-changed'] = o.shapeNote;
  return headers;
}

/**
 * A JSON answer with the gateway's headers. Under the Node server it is written straight to the
 * socket, as streams are: a web Response and its Headers object (built again by the middleware
 * that reads them) cost the data plane's answers more than writing them. Elsewhere (app.request)
 * it is a Response.
 */
export function jsonAnswer(c: Context, text: string, headers: Record<string, string>): Response {
  const outgoing = nodeResponse(c);
  if (outgoing && !outgoing.headersSent) {
    outgoing.writeHead(200, {
      'content-type': 'application/json',
      ...headers,
      'content-length': Buffer.byteLength(text),
    });
    outgoing.end(text);
    return RESPONSE_ALREADY_SENT;
  }
  return new Response(text, { status: 200, headers: { 'content-type': 'application/json', ...headers } });
}

/** A chat's answer: the provider's JSON as it came when forwarded, else `body` in the route's shape. */
export function chatAnswer(c: Context, o: ChatOutcome, body: () => unknown): Response {
  const text = o.completion.forwarded ? jsonText(o.completion.providerResponse) : JSON.stringify(body());
  return jsonAnswer(c, text, outcomeHeaders(o));
}

/** One event of a forwarded stream, written as the provider wrote it (a data line per line). */
function rawFrame(raw: NonNullable<StreamDelta['raw']>): string {
  const name = raw.event ? `event: ${raw.event}\n` : '';
  return `${name}${raw.data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('')}\n`;
}

export type SseFormat = {
  delta(start: StreamStart, delta: StreamDelta): unknown[];
  end(start: StreamStart, outcome: ChatOutcome): unknown[];
  error(error: unknown): unknown;
  /** Names each event (Anthropic's `event:` line); OpenAI's events have none. */
  eventName?(event: unknown): string;
  /** Whether the stream ends in OpenAI's `data: [DONE]` (default true). */
  doneMarker?: boolean;
};

/** Where a stream's events go once its headers are decided. */
type Sink = { write(text: string): void; end(): void };

/**
 * Runs a streamed chat and answers with Server-Sent Events once its first byte is decided. Until
 * then nothing is sent, so a model that fails early can still hand over to a fallback, and a
 * request that fails outright gets an ordinary error response from `onError`.
 *
 * Under the Node server (`outgoing`, its response) the events are written straight to the
 * socket, the headers with the first of them: a web ReadableStream as the Response's body costs
 * each event a promise and sends the headers on their own. Elsewhere (app.request) the answer is
 * a Response with a ReadableStream body.
 */
export async function streamChat(
  run: (hooks: ChatHooks) => Promise<ChatOutcome>,
  format: SseFormat,
  clientSignal: Leaving,
  outgoing?: ServerResponse,
): Promise<Response> {
  const abort = new AbortController();
  /** Nothing more can be written: the Node response's socket is gone, or the stream was cancelled. */
  let closed = false;
  let ended = false;
  const leave = (reason: unknown) => {
    closed = true;
    abort.abort(reason);
  };
  // Under the Node server the client's leaving closed the socket; elsewhere the stream still ends
  // with the run's error event, as a cancelled run's stream did. A client gone already (during
  // the body's read or the gate's lookup) is heard now: a listener added late is never called.
  const clientLeft = () => (outgoing ? leave(clientSignal.reason) : abort.abort(clientSignal.reason));
  if (clientSignal.aborted) clientLeft();
  else clientSignal.addEventListener('abort', clientLeft, { once: true });
  /** The events decided before the headers are written; then where they go. */
  const held: string[] = [];
  let sink: Sink | null = null;
  const write = (text: string) => {
    if (closed) return;
    if (sink) sink.write(text);
    else held.push(text);
  };
  const send = (event: unknown) => {
    const data = typeof event === 'string' ? event : JSON.stringify(event);
    const name = format.eventName ? `event: ${format.eventName(event)}\n` : '';
    write(`${name}data: ${data}\n\n`);
  };
  /** The answer is a forwarded stream: its own events end it, not the format's. */
  let forwarded = false;
  const done = () => {
    if (format.doneMarker !== false) send('[DONE]');
  };
  const finish = () => {
    if (ended) return;
    ended = true;
    if (!closed) sink?.end();
  };

  let start: StreamStart | null = null;
  let resolveStart: (s: StreamStart) => void = () => {};
  const started = new Promise<StreamStart>((resolve) => {
    resolveStart = resolve;
  });
  const outcome = run({
    signal: abort.signal,
    onStreamStart: (s) => {
      start = s;
      resolveStart(s);
    },
    onDelta: (delta) => {
      if (delta.raw) {
        forwarded = true;
        write(rawFrame(delta.raw));
      } else if (start) for (const event of format.delta(start, delta)) send(event);
    },
  });
  // Whichever comes first: the first byte, or the end (an answer with no delta, or a failure).
  const first = await Promise.race([started, outcome.then(() => null)]);
  const streamStart: StreamStart =
    first ??
    start ??
    (await outcome.then((o) => ({ id: o.id, model: o.modelUsed, ignoredOverrides: o.ignoredOverrides })));
  outcome.then(
    (o) => {
      if (!forwarded) for (const event of format.end(streamStart, o)) send(event);
      done();
      finish();
    },
    (error) => {
      send(format.error(error));
      done();
      finish();
    },
  );
  const headers = {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...outcomeHeaders({
      id: streamStart.id,
      modelUsed: streamStart.model,
      ignoredOverrides: streamStart.ignoredOverrides,
      action: streamStart.action ?? null,
      dropped: streamStart.dropped,
    }),
  };
  if (outgoing) {
    sink = { write: (text) => void outgoing.write(text), end: () => outgoing.end() };
    if (!closed) outgoing.writeHead(200, headers);
    if (held.length > 0 && !closed) sink.write(held.join(''));
    if (ended) sink.end();
    return RESPONSE_ALREADY_SENT;
  }
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => {
      if (held.length > 0) controller.enqueue(encoder.encode(held.join('')));
      if (ended) controller.close();
      sink = {
        write: (text) => controller.enqueue(encoder.encode(text)),
        end: () => controller.close(),
      };
    },
    cancel: () => leave(new Error('client went away')),
  });
  return new Response(body, { headers });
}
