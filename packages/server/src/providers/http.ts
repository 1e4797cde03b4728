import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, request, errors as undiciErrors } from 'undici';
import { ProviderError } from './types.ts';
import { rememberWireText } from './wireText.ts';

// One keep-alive pool for every upstream: connection reuse is most of a gateway's overhead.
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });

export type JsonResponse = { status: number; body: unknown };

function networkError(error: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted) {
    const reason = signal.reason as { name?: string } | undefined;
    return reason?.name === 'TimeoutError'
      ? new ProviderError('timeout', 'The provider did not answer in time')
      : new ProviderError('network', 'The request was cancelled');
  }
  if (error instanceof ProviderError) return error;
  const message =
    error instanceof undiciErrors.UndiciError || error instanceof Error ? error.message : String(error);
  return new ProviderError('network', `Could not reach the provider: ${message}`);
}

/** FastAPI-style validation details (Mistral's 422s): `[{loc: ['body', 'x'], msg}]`. */
function detailText(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (!Array.isArray(detail)) return undefined;
  const lines = detail
    .map((d: { loc?: unknown[]; msg?: unknown }) =>
      typeof d?.msg === 'string' ? `${Array.isArray(d.loc) ? `${d.loc.join('.')}: ` : ''}${d.msg}` : '',
    )
    .filter(Boolean);
  return lines.length > 0 ? lines.join('; ') : undefined;
}

function messageText(message: unknown): string | undefined {
  if (typeof message === 'string') return message;
  if (message && typeof message === 'object') {
    return detailText((message as { detail?: unknown }).detail) ?? JSON.stringify(message).slice(0, 500);
  }
  return undefined;
}

/** The message a provider put in its error body, in any of the common shapes. */
export function providerErrorMessage(body: unknown, fallback: string): string {
  if (typeof body === 'string' && body.trim()) return body.slice(0, 500);
  const b = body as
    | { error?: { message?: unknown } | string; message?: unknown; detail?: unknown }
    | Array<{ error?: { message?: unknown } }>
    | null;
  if (Array.isArray(b)) return messageText(b[0]?.error?.message) ?? fallback;
  if (b && typeof b === 'object') {
    if (typeof b.error === 'string') return b.error;
    return messageText(b.error?.message) ?? messageText(b.message) ?? detailText(b.detail) ?? fallback;
  }
  return fallback;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function send(url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal) {
  const wire = JSON.stringify(body);
  rememberWireText(body, wire);
  try {
    return await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', ...headers },
      body: wire,
      signal,
    });
  } catch (error) {
    throw networkError(error, signal);
  }
}

/** Throws a ProviderError with the provider's status and message when the answer is not 2xx. */
async function failIfNotOk(
  res: Awaited<ReturnType<typeof request>>,
  signal: AbortSignal,
  isContentPolicy: (body: unknown) => boolean,
) {
  if (res.statusCode >= 200 && res.statusCode < 300) return;
  let text = '';
  try {
    text = await res.body.text();
  } catch (error) {
    throw networkError(error, signal);
  }
  const body = parseJson(text);
  const message = providerErrorMessage(body, `HTTP ${res.statusCode}`);
  if (isContentPolicy(body)) throw new ProviderError('content_policy', message, res.statusCode, body);
  throw new ProviderError('http', `Provider answered ${res.statusCode}: ${message}`, res.statusCode, body);
}

export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
  isContentPolicy: (body: unknown) => boolean = () => false,
): Promise<unknown> {
  const res = await send(url, headers, body, signal);
  await failIfNotOk(res, signal, isContentPolicy);
  let text: string;
  try {
    text = await res.body.text();
  } catch (error) {
    throw networkError(error, signal);
  }
  const parsed = parseJson(text);
  if (typeof parsed !== 'object' || parsed === null) {
    throw new ProviderError('invalid_response', 'The provider answered with something other than JSON');
  }
  rememberWireText(parsed, text);
  return parsed;
}

/**
 * Posts and reads the answer as Server-Sent Events, handing each event to `onEvent` as it
 * arrives. Errors before the first event leave the caller free to try another model.
 */
export async function postSse(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
  onEvent: (event: EventSourceMessage) => void,
  isContentPolicy: (body: unknown) => boolean = () => false,
): Promise<void> {
  const res = await send(url, { accept: 'text/event-stream', ...headers }, body, signal);
  await failIfNotOk(res, signal, isContentPolicy);
  let failure: unknown = null;
  const parser = createParser({
    onEvent: (event) => {
      if (failure) return;
      try {
        onEvent(event);
      } catch (error) {
        failure =
          error instanceof ProviderError
            ? error
            : new ProviderError(
                'invalid_response',
                `The provider sent a stream event that could not be read: ${(error as Error).message}`,
                null,
                event.data.slice(0, 2000),
              );
      }
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      if (failure) throw failure;
    }
  } catch (error) {
    res.body.destroy();
    throw networkError(error, signal);
  }
}
