import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, type FormData, type request, errors as undiciErrors } from 'undici';
import { redactorFor } from './redaction.ts';
import { ProviderError } from './types.ts';
import { rememberWireText } from './wireText.ts';

// One keep-alive pool for every upstream: connection reuse is most of a gateway's overhead.
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });

/** What went wrong on the network, in words that name no address (clients and the log see them). */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection closed',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CLOSED: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: 'TLS certificate rejected',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate rejected',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate rejected',
};

/** Failures of the connection itself: the request never reached the provider, so nothing was billed. */
const UNREACHED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

function networkError(error: unknown, signal: AbortSignal, url?: string): ProviderError {
  if (signal.aborted) {
    const reason = signal.reason as { name?: string } | undefined;
    return reason?.name === 'TimeoutError'
      ? new ProviderError('timeout', 'The provider did not answer in time')
      : new ProviderError('network', 'The request was cancelled');
  }
  if (error instanceof ProviderError) return error;
  // The system's message names the provider's address: the operator's log keeps it, nobody else.
  const cause = (error as { cause?: unknown } | null)?.cause;
  const code = [error, cause]
    .map((e) => (e as { code?: unknown } | null)?.code)
    .find((c) => typeof c === 'string');
  const detail =
    error instanceof undiciErrors.UndiciError || error instanceof Error ? error.message : String(error);
  console.error(`provider: ${url ?? 'request'} failed: ${detail}${code ? ` (${code})` : ''}`);
  const reason = NETWORK_REASONS[code as string] ?? 'network error';
  const failure = new ProviderError('network', `Could not reach the provider (${reason})`);
  failure.unreached = UNREACHED.has(code as string);
  return failure;
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
  return sendRaw(url, { 'content-type': 'application/json', ...headers }, wire, signal);
}

/**
 * Each upstream URL's origin and path, parsed once: undici's request(url) parses its URL (a new
 * URL) and copies its options again on every call; the agent's own request takes them as they
 * are. URLs come from the providers' configuration and the models' names; bounded all the same.
 */
const targets = new Map<string, { origin: string; path: string }>();
function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= 1000) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/** Posts a body as it is: JSON text, or a FormData undici writes as multipart with its boundary. */
async function sendRaw(
  url: string,
  headers: Record<string, string>,
  body: string | FormData,
  signal: AbortSignal,
) {
  try {
    return await agent.request({ ...targetOf(url), method: 'POST', headers, body, signal });
  } catch (error) {
    throw networkError(error, signal, url);
  }
}

/** Throws a ProviderError with the provider's status and message when the answer is not 2xx. */
async function failIfNotOk(
  res: Awaited<ReturnType<typeof request>>,
  signal: AbortSignal,
  isContentPolicy: (body: unknown) => boolean,
  redact: (text: string) => string,
) {
  if (res.statusCode >= 200 && res.statusCode < 300) return;
  let text = '';
  try {
    text = redact(await res.body.text());
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
  return jsonAnswer(res, signal, isContentPolicy, redactorFor(headers));
}

async function jsonAnswer(
  res: Awaited<ReturnType<typeof request>>,
  signal: AbortSignal,
  isContentPolicy: (body: unknown) => boolean,
  redact: (text: string) => string,
): Promise<unknown> {
  await failIfNotOk(res, signal, isContentPolicy, redact);
  let text: string;
  try {
    text = redact(await res.body.text());
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
 * Posts a multipart form (file uploads: transcription) and reads a JSON answer, with postJson's
 * redaction and error mapping. Undici writes the form's boundary and content type.
 */
export async function postMultipart(
  url: string,
  headers: Record<string, string>,
  form: FormData,
  signal: AbortSignal,
): Promise<unknown> {
  const res = await sendRaw(url, headers, form, signal);
  return jsonAnswer(res, signal, () => false, redactorFor(headers));
}

/** Posts JSON and reads a binary answer (speech audio): its bytes and content type. */
export async function postJsonForBytes(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
): Promise<{ data: Buffer; contentType: string | null }> {
  const res = await send(url, headers, body, signal);
  await failIfNotOk(res, signal, () => false, redactorFor(headers));
  try {
    const data = Buffer.from(await res.body.arrayBuffer());
    const type = res.headers['content-type'];
    return { data, contentType: typeof type === 'string' ? type : null };
  } catch (error) {
    throw networkError(error, signal);
  }
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
  const redact = redactorFor(headers);
  await failIfNotOk(res, signal, isContentPolicy, redact);
  let failure: unknown = null;
  const parser = createParser({
    onEvent: (event) => {
      if (failure) return;
      try {
        event.data = redact(event.data);
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

/**
 * `url` with a drop-in request's query parameters (Forward.query) added, after any the
 * provider's base URL already has, each encoded.
 */
export function withQuery(url: string, query: Record<string, string>): string {
  const names = Object.keys(query);
  if (names.length === 0) return url;
  const target = new URL(url);
  for (const name of names) target.searchParams.append(name, query[name] as string);
  return target.toString();
}
