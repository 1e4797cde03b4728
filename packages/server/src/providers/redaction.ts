/**
 * A provider's credentials kept out of what it answers: some providers (and the proxies in front
 * of them) echo the request's headers in their errors, a model may be made to repeat a key, and
 * what a provider answers reaches clients and the log. A key can only be echoed by the provider
 * it was sent to, so that provider's credentials are the secrets to look for.
 *
 * A whole answer, and each stream event, is redacted as text (redactorFor, applied in http.ts).
 * A streamed answer is also redacted across its deltas (streamRedactor): a secret split across
 * two deltas (`"sk-SECRET"`, then `"KEY-abc"`) is in neither, so each text holds back the tail
 * that could begin a secret until the next delta shows whether it does. withRedaction puts that
 * around every adapter (the registry does), so no adapter has its own.
 */
import {
  type CallOptions,
  type ChatCompletion,
  type ProviderAdapter,
  ProviderError,
  type StreamDelta,
} from './types.ts';

export const REDACTED = '[REDACTED]';

/** Request headers that carry a provider credential. */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-goog-api-key', 'api-key'];

/** The values worth looking for: shorter ones are not keys, and removing them would garble text. */
export function secretsOf(values: (string | undefined)[]): string[] {
  return values.filter((v): v is string => v !== undefined && v.length >= 8);
}

/** The credentials a request's headers carry. */
function secretsIn(headers: Record<string, string>): string[] {
  return secretsOf(CREDENTIAL_HEADERS.map((name) => headers[name]?.replace(/^Bearer\s+/i, '')));
}

/** Every whole occurrence of `secrets` in a text replaced by [REDACTED]. */
export function redactor(secrets: string[]): (text: string) => string {
  if (secrets.length === 0) return (text) => text;
  return (text) => {
    for (const secret of secrets) if (text.includes(secret)) text = text.replaceAll(secret, REDACTED);
    return text;
  };
}

/** Removes the credentials of `headers` from a provider's text. */
export function redactorFor(headers: Record<string, string>): (text: string) => string {
  return redactor(secretsIn(headers));
}

/**
 * One text stream's redaction: `push` answers what may go out now, holding back the longest tail
 * that begins some secret (usually nothing: only a tail like "sk-pr" is held); `flush` the tail,
 * at the end. No secret is ever in what went out, joined: one that starts in a delta is held
 * until it is complete (and replaced) or shown not to be a secret.
 */
function textRedactor(secrets: string[]) {
  const redact = redactor(secrets);
  const longest = Math.max(...secrets.map((s) => s.length));
  const firsts = new Set(secrets.map((s) => s.charAt(0)));
  let held = '';
  return {
    push(text: string): string {
      const all = redact(held + text);
      let keep = 0;
      for (let k = Math.min(longest - 1, all.length); k > 0 && keep === 0; k--) {
        if (!firsts.has(all.charAt(all.length - k))) continue;
        const tail = all.slice(all.length - k);
        if (secrets.some((s) => s.startsWith(tail))) keep = k;
      }
      held = all.slice(all.length - keep);
      return all.slice(0, all.length - keep);
    },
    flush(): string {
      const rest = held;
      held = '';
      return rest;
    },
    holding: () => held !== '',
  };
}

type TextRedactor = ReturnType<typeof textRedactor>;

/**
 * A stream of deltas redacted across their boundaries: the answer's text, its reasoning and each
 * tool call's arguments are separate texts (a secret cannot span two of them). A delta of another
 * kind releases what the others held first, so the deltas keep their order: a provider finishes
 * one block (text, reasoning, a call) before it starts the next.
 */
function streamRedactor(secrets: string[]) {
  const channels = new Map<string, TextRedactor>();
  const channel = (key: string) => {
    let c = channels.get(key);
    if (!c) {
      c = textRedactor(secrets);
      channels.set(key, c);
    }
    return c;
  };
  /** What the channels other than `except` hold, as deltas. */
  const release = (except: Set<string>): StreamDelta[] => {
    const out: StreamDelta[] = [];
    for (const [key, c] of channels) {
      if (except.has(key) || !c.holding()) continue;
      out.push(deltaOf(key, c.flush()));
    }
    return out;
  };
  return {
    push(delta: StreamDelta): StreamDelta[] {
      const texts = new Set<string>();
      if (delta.content !== undefined) texts.add('content');
      if (delta.thinking !== undefined) texts.add('thinking');
      for (const t of delta.toolCalls ?? []) if (t.arguments !== undefined) texts.add(`tool:${t.index}`);
      const out = release(texts);
      /** What of `text` may go out; an empty text stays empty, one wholly held is left out. */
      const pass = (key: string, text: string | undefined) =>
        text === undefined || text === '' ? text : channel(key).push(text) || undefined;
      const { content, thinking, toolCalls, ...rest } = delta;
      const next: StreamDelta = { ...rest };
      const c = pass('content', content);
      if (c !== undefined) next.content = c;
      const r = pass('thinking', thinking);
      if (r !== undefined) next.thinking = r;
      if (toolCalls) {
        const calls = toolCalls
          .map(({ arguments: args, ...call }) => {
            const a = pass(`tool:${call.index}`, args);
            return a === undefined ? call : { ...call, arguments: a };
          })
          .filter((call) => Object.keys(call).length > 1);
        if (calls.length > 0) next.toolCalls = calls;
      }
      if (Object.keys(next).length > 0) out.push(next);
      return out;
    },
    /** The end of the stream: whatever is still held. */
    flush: (): StreamDelta[] => release(new Set()),
  };
}

function deltaOf(key: string, text: string): StreamDelta {
  if (key === 'content') return { content: text };
  if (key === 'thinking') return { thinking: text };
  return { toolCalls: [{ index: Number(key.slice('tool:'.length)), arguments: text }] };
}

/**
 * `value` with every string redacted; the same object where nothing changed (an answer whose
 * wire text the log keeps stays that object).
 */
function redactDeep<T>(value: T, redact: (text: string) => string): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) {
    const items = value.map((v) => redactDeep(v, redact));
    return (items.some((v, i) => v !== value[i]) ? items : value) as T;
  }
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let changed = false;
    const entries = Object.entries(value).map(([k, v]) => {
      const r = redactDeep(v, redact);
      if (r !== v) changed = true;
      return [k, r] as const;
    });
    return (changed ? Object.fromEntries(entries) : value) as T;
  }
  return value;
}

/**
 * `adapter` whose streamed answers are redacted across deltas, in what reaches the client (the
 * deltas) and in what is logged (the answer the adapter assembled from the stream, where a split
 * secret is whole again, and the error a stream fails with). A plain answer is redacted whole
 * by http.ts already.
 */
export function withRedaction(adapter: ProviderAdapter, secrets: string[]): ProviderAdapter {
  if (secrets.length === 0) return adapter;
  const redact = redactor(secrets);
  /** One call of `send`, its deltas redacted across their boundaries, its answer and error whole. */
  async function redacted(
    options: CallOptions,
    send: (options: CallOptions) => Promise<ChatCompletion>,
  ): Promise<ChatCompletion> {
    const onDelta = options.onDelta;
    if (!onDelta) return send(options);
    const stream = streamRedactor(secrets);
    let completion: ChatCompletion;
    try {
      completion = await send({
        ...options,
        onDelta: (delta) => {
          for (const d of stream.push(delta)) onDelta(d);
        },
      });
    } catch (error) {
      if (error instanceof ProviderError) {
        error.message = redact(error.message);
        Object.assign(error, { providerResponse: redactDeep(error.providerResponse, redact) });
      }
      throw error;
    }
    for (const d of stream.flush()) onDelta(d);
    // What the client was sent, and what the log keeps; the request is the client's own.
    const { content, toolCalls, thinking, providerResponse } = completion;
    return {
      ...completion,
      content: content === null ? null : redact(content),
      toolCalls: redactDeep(toolCalls, redact),
      ...(thinking && { thinking: redactDeep(thinking, redact) }),
      providerResponse: redactDeep(providerResponse, redact),
    };
  }
  const { forward, forwards } = adapter;
  return {
    chat: (model, params, options) => redacted(options, (o) => adapter.chat(model, params, o)),
    ...(forwards && { forwards }),
    ...(forward && {
      forward: (model, params, options) => redacted(options, (o) => forward.call(adapter, model, params, o)),
    }),
  };
}
