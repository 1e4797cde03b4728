import type { ChatHooks, ChatOutcome, StreamStart } from '../dataplane/chat.ts';
import type { StreamDelta } from '../providers/types.ts';

const encoder = new TextEncoder();

/** Response headers that tell what the gateway did besides answering. */
export function outcomeHeaders(
  o: Pick<ChatOutcome, 'id' | 'modelUsed' | 'ignoredOverrides'> & Partial<ChatOutcome>,
) {
  return {
    'x-gatehouse-request-id': o.id,
    'x-gatehouse-model-used': o.modelUsed,
    ...(o.costUsd !== undefined && { 'x-gatehouse-cost-usd': String(o.costUsd) }),
    ...(o.ignoredOverrides.length > 0 && { 'x-gatehouse-ignored-overrides': o.ignoredOverrides.join(',') }),
    ...(o.spendingWarning && { 'x-gatehouse-spending-warning': 'spending limit reached' }),
    ...(o.action && { 'x-gatehouse-action': o.action }),
    ...(o.sessionStatus && { 'x-gatehouse-session-status': o.sessionStatus }),
  };
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

/**
 * Runs a streamed chat and answers with Server-Sent Events once its first byte is decided. Until
 * then nothing is sent, so a model that fails early can still hand over to a fallback, and a
 * request that fails outright gets an ordinary error response from `onError`.
 */
export async function streamChat(
  run: (hooks: ChatHooks) => Promise<ChatOutcome>,
  format: SseFormat,
  clientSignal: AbortSignal,
): Promise<Response> {
  const abort = new AbortController();
  clientSignal.addEventListener('abort', () => abort.abort(clientSignal.reason), { once: true });
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      closed = true;
      abort.abort(new Error('client went away'));
    },
  });
  const send = (event: unknown) => {
    if (closed) return;
    const data = typeof event === 'string' ? event : JSON.stringify(event);
    const name = format.eventName ? `event: ${format.eventName(event)}\n` : '';
    controller.enqueue(encoder.encode(`${name}data: ${data}\n\n`));
  };
  const done = () => {
    if (format.doneMarker !== false) send('[DONE]');
  };
  const finish = () => {
    if (closed) return;
    closed = true;
    controller.close();
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
      if (start) for (const event of format.delta(start, delta)) send(event);
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
      for (const event of format.end(streamStart, o)) send(event);
      done();
      finish();
    },
    (error) => {
      send(format.error(error));
      done();
      finish();
    },
  );
  return new Response(body, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...outcomeHeaders({
        id: streamStart.id,
        modelUsed: streamStart.model,
        ignoredOverrides: streamStart.ignoredOverrides,
        action: streamStart.action ?? null,
      }),
    },
  });
}
