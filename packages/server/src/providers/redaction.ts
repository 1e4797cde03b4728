/**
 * A provider's credentials kept out of what it answers: some providers (and the proxies in front
 * of them) echo the request's headers in their errors, a model may be made to repeat a key, and
 * what a provider answers reaches clients and the log. A key can only be echoed by the provider
 * it was sent to, so that provider's credentials are the secrets to look for.
 *
 * A whole answer, and each stream event, is redacted as text (redactorFor, applied in http.ts).
 * A streamed answer is also redacted across its deltas (streamRedactor): a secret split across
 * two deltas (`"sk-SECRET"`, then `"KEY-abc"`) is in neither, so each text holds back the tail
 * that could begin a secret until the next delta shows whether it does; a forwarded stream, the
 * provider's own events, is redacted across its events the same way (rawStreamRedactor), each
 * event's texts found where its wire format keeps them. withRedaction puts that around every
 * adapter (the registry does), so no adapter has its own.
 */
import {
  type CallOptions,
  type ChatCompletion,
  type ProviderAdapter,
  ProviderError,
  type StreamDelta,
  type WireApi,
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
    held: () => held,
  };
}

type TextRedactor = ReturnType<typeof textRedactor>;

/**
 * A stream of deltas redacted across their boundaries: the answer's text, its reasoning and each
 * tool call's arguments are separate texts (a secret cannot span two of them). A delta of another
 * kind releases what the others held first, so the deltas keep their order: a provider finishes
 * one block (text, reasoning, a call) before it starts the next.
 */
function streamRedactor(secrets: string[], api?: WireApi) {
  /** A forwarded stream's events, in the wire format `api`. */
  const events = api && rawStreamRedactor(secrets, api);
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
      if (delta.raw && events) return events.push(delta.raw).map((raw) => ({ raw }));
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
    flush: (): StreamDelta[] => [...(events?.flush() ?? []).map((raw) => ({ raw })), ...release(new Set())],
  };
}

function deltaOf(key: string, text: string): StreamDelta {
  if (key === 'content') return { content: text };
  if (key === 'thinking') return { thinking: text };
  return { toolCalls: [{ index: Number(key.slice('tool:'.length)), arguments: text }] };
}

/**
 * A forwarded stream (a drop-in route's, in the client's own wire format) reaches the client as
 * the provider's events, each as it came. Their texts are redacted across events as the gateway's
 * deltas are: an event's text is one piece of a channel's text (a block's, an item's, a call's),
 * and each channel is run through textRedactor. But what is held back is the whole event, not a
 * tail of its text: an event goes out as it came once the texts after it show that no secret
 * begins in it, and is rewritten only where a secret was found. A stream without a secret thus
 * reaches the client byte for byte, the same events in the same order (Responses' events are
 * numbered, `sequence_number`: no event is added or left out), only some of them a few events late.
 */

type RawEvent = NonNullable<StreamDelta['raw']>;
type Path = (string | number)[];

/** The value at `path` in parsed JSON, or undefined. */
function valueAt(value: unknown, path: Path): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

/** A piece of a channel's text in an event (`path`); a channel's texts end with its `scope`. */
type TextAt = { path: Path; text: string; channel: string; scope: string };
/**
 * What redaction reads of an event: the texts it carries, and the scopes whose texts it ends
 * (a block's, an item's, a choice's; 'all' at the answer's end). An event that carries no text
 * and ends nothing (a ping, a signature, an annotation) leaves every channel open: a secret may
 * be split around it.
 */
type Located = { texts: TextAt[]; ends: string[] | 'all' };
const NOTHING: Located = { texts: [], ends: [] };

/** Anthropic's deltas that carry text, by delta type: the field it is in. */
const ANTHROPIC_TEXTS: Record<string, string> = {
  text_delta: 'text',
  thinking_delta: 'thinking',
  input_json_delta: 'partial_json',
};
/** OpenAI chat's delta fields that carry text (reasoning_content: DeepSeek's; reasoning: OpenRouter's). */
const CHAT_TEXTS = ['content', 'reasoning_content', 'reasoning', 'refusal'];
/** The events that end a Responses stream. */
const RESPONSES_ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/** Where each drop-in wire format keeps a streamed answer's texts, and where they end. */
const WIRE_TEXTS: Record<WireApi, (event: unknown) => Located> = {
  'anthropic-messages': (event) => {
    const type = valueAt(event, ['type']);
    const scope = String(valueAt(event, ['index']));
    if (type === 'content_block_delta') {
      const field = ANTHROPIC_TEXTS[String(valueAt(event, ['delta', 'type']))];
      const path = ['delta', field ?? ''];
      const text = valueAt(event, path);
      if (field === undefined || typeof text !== 'string') return NOTHING;
      return { texts: [{ path, text, channel: `${scope}:${field}`, scope }], ends: [] };
    }
    if (type === 'content_block_stop') return { texts: [], ends: [scope] };
    return type === 'message_delta' || type === 'message_stop' ? { texts: [], ends: 'all' } : NOTHING;
  },
  // Every `*.delta` event but audio's carries its text in `delta`: output text, refusals, reasoning
  // (text and summaries), function and custom tool calls' input, and those yet to come.
  'openai-responses': (event) => {
    const type = String(valueAt(event, ['type']));
    const item = valueAt(event, ['output_index']);
    const scope = String(item);
    const text = valueAt(event, ['delta']);
    if (type.endsWith('.delta') && type !== 'response.audio.delta' && typeof text === 'string') {
      const part = valueAt(event, ['content_index']) ?? valueAt(event, ['summary_index']) ?? '';
      return { texts: [{ path: ['delta'], text, channel: `${type}:${scope}:${part}`, scope }], ends: [] };
    }
    if (RESPONSES_ENDS.has(type)) return { texts: [], ends: 'all' };
    if (type.endsWith('.done')) return { texts: [], ends: item === undefined ? 'all' : [scope] };
    return NOTHING;
  },
  'openai-chat': (event) => {
    const choices = valueAt(event, ['choices']);
    // A chunk without choices (the usage chunk) comes after the answer.
    if (!Array.isArray(choices) || choices.length === 0) return { texts: [], ends: 'all' };
    const texts: TextAt[] = [];
    const ends: string[] = [];
    choices.forEach((choice: unknown, n) => {
      const scope = String(valueAt(choice, ['index']) ?? n);
      const at = (path: Path, channel: string) => {
        const text = valueAt(event, path);
        if (typeof text === 'string') texts.push({ path, text, channel: `${scope}:${channel}`, scope });
      };
      for (const field of CHAT_TEXTS) at(['choices', n, 'delta', field], field);
      const calls = valueAt(choice, ['delta', 'tool_calls']);
      if (Array.isArray(calls)) {
        calls.forEach((call: unknown, k) => {
          const index = valueAt(call, ['index']) ?? k;
          at(['choices', n, 'delta', 'tool_calls', k, 'function', 'arguments'], `tool:${index}`);
        });
      }
      if (valueAt(choice, ['finish_reason'])) ends.push(scope);
    });
    return { texts, ends };
  },
};

/** A piece of a channel's text: as it came, and what it goes out as once that is decided. */
type Piece = { came: string; out?: string; share?: string };

/**
 * One text of a forwarded stream, in pieces. A piece is decided as it came once what the
 * redactor let out covers it; once a secret is completed (the redactor's output no longer the
 * text that came), the pieces still open carry what the redactor let out instead: the first what
 * it let out before, each other what it let out at its push, the last also what it held at the end.
 */
function rawChannel(secrets: string[]) {
  const text = textRedactor(secrets);
  /** The pieces not yet decided, in order; their text as it came; what the redactor let out of it. */
  const open: Piece[] = [];
  let came = '';
  let passed = '';
  let redacted = false;
  /** Decides the open pieces but the last `keep`, on their share; none kept, the channel starts over. */
  const decide = (keep: number) => {
    while (open.length > keep) {
      const piece = open.shift() as Piece;
      piece.out = piece.share ?? '';
    }
    if (keep === 0) {
      came = passed = '';
      redacted = false;
    }
  };
  return {
    push(piece: Piece) {
      const before = passed;
      const out = text.push(piece.came);
      open.push(piece);
      if (!redacted) {
        came += piece.came;
        passed += out;
        if (passed + text.held() === came) {
          // Nothing replaced: each piece the redactor let out whole goes as it came.
          while (open[0] && open[0].came.length <= passed.length) {
            const done = open.shift() as Piece;
            done.out = done.came;
            came = came.slice(done.came.length);
            passed = passed.slice(done.came.length);
          }
          return;
        }
        redacted = true;
        for (const [i, p] of open.entries()) p.share = i === 0 ? before : '';
      }
      piece.share = out;
      decide(text.held() === '' ? 0 : 1);
    },
    /** The text is complete: what is held goes out. */
    end() {
      const rest = text.flush();
      // Nothing replaced, what was let out and what is held are the pieces as they came.
      if (!redacted) for (const p of open) p.share = p.came;
      else {
        const last = open.at(-1);
        if (last) last.share = (last.share ?? '') + rest;
      }
      decide(0);
    },
    isOpen: () => open.length > 0,
  };
}

/**
 * A forwarded stream's events, redacted across them (see above). The events go out in the order
 * they came: one waits while an earlier one is open. A channel's text ends where the wire says its
 * scope ends, where a text of another channel of its scope begins (a choice's text, then a call),
 * or at the stream's end.
 */
function rawStreamRedactor(secrets: string[], api: WireApi) {
  const locate = WIRE_TEXTS[api];
  const channels = new Map<string, { scope: string; text: ReturnType<typeof rawChannel> }>();
  const queue: { raw: RawEvent; pieces: { at: TextAt; piece: Piece }[] }[] = [];
  const end = (scopes: Set<string> | 'all', except = new Set<string>()) => {
    for (const [key, c] of channels) {
      if (c.text.isOpen() && !except.has(key) && (scopes === 'all' || scopes.has(c.scope))) c.text.end();
    }
  };
  /** The events at the front that are decided, each as it came or rewritten with its texts' new pieces. */
  const ready = (): RawEvent[] => {
    const out: RawEvent[] = [];
    while (queue[0]?.pieces.every(({ piece }) => piece.out !== undefined)) {
      const { raw, pieces } = queue.shift() as (typeof queue)[number];
      if (pieces.every(({ piece }) => piece.out === piece.came)) {
        out.push(raw);
        continue;
      }
      const data = JSON.parse(raw.data) as unknown;
      for (const { at, piece } of pieces) {
        const parent = valueAt(data, at.path.slice(0, -1)) as Record<string | number, unknown>;
        parent[at.path.at(-1) as string | number] = piece.out;
      }
      out.push({ ...raw, data: JSON.stringify(data) });
    }
    return out;
  };
  return {
    push(raw: RawEvent): RawEvent[] {
      let event: unknown;
      try {
        event = JSON.parse(raw.data);
      } catch {
        event = undefined;
      }
      const { texts, ends } = event !== null && typeof event === 'object' ? locate(event) : NOTHING;
      end(new Set(texts.map((t) => t.scope)), new Set(texts.map((t) => t.channel)));
      const pieces = texts.map((at) => ({ at, piece: { came: at.text } as Piece }));
      queue.push({ raw, pieces });
      for (const { at, piece } of pieces) {
        let c = channels.get(at.channel);
        if (!c) {
          c = { scope: at.scope, text: rawChannel(secrets) };
          channels.set(at.channel, c);
        }
        c.text.push(piece);
      }
      end(ends === 'all' ? 'all' : new Set(ends));
      return ready();
    },
    /** The end of the stream: every channel's text is complete. */
    flush(): RawEvent[] {
      end('all');
      return ready();
    },
  };
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
    api?: WireApi,
  ): Promise<ChatCompletion> {
    const onDelta = options.onDelta;
    if (!onDelta) return send(options);
    const stream = streamRedactor(secrets, api);
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
      forward: (model, params, options) =>
        redacted(options, (o) => forward.call(adapter, model, params, o), params.forward.api),
    }),
  };
}
