/**
 * The gateway's own chat shape, between the endpoints and the provider adapters. It follows
 * OpenAI's chat-completions message format (the lingua franca); each adapter translates it to
 * its provider's wire format and back, and reports the exact JSON it sent and received.
 */

/**
 * Anthropic's prompt-cache mark, as OpenRouter and LiteLLM carry it on OpenAI-shaped parts: the
 * Anthropic adapter sends it, the others leave it out (withoutAnthropicFields).
 */
export type CacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' };

export type TextPart = { type: 'text'; text: string; cache_control?: CacheControl };
export type ImagePart = {
  type: 'image_url';
  image_url: { url: string; detail?: string };
  cache_control?: CacheControl;
};
export type ContentPart = TextPart | ImagePart;

export type ToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** A model's reasoning as Anthropic returns it; sent back as it came (the signature proves it). */
export type ThinkingBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

/** Extended thinking, Anthropic's way; only the Anthropic adapter sends it. */
export type ThinkingConfig =
  | { type: 'enabled'; budget_tokens: number }
  | { type: 'disabled' }
  | { type: 'adaptive' };

/**
 * How hard a model reasons, OpenAI's way (`reasoning_effort`, Responses `reasoning.effort`);
 * dataplane/reasoning.ts turns it into what the answering model takes.
 */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | TextPart[]; name?: string }
  | { role: 'user'; content: string | ContentPart[]; name?: string }
  | {
      role: 'assistant';
      content: string | TextPart[] | null;
      name?: string;
      tool_calls?: ToolCall[];
      /** Anthropic only: the reasoning that came with this turn, which it wants back. */
      thinking?: ThinkingBlock[];
    }
  | {
      role: 'tool';
      /** Images only reach Anthropic; the other adapters send the text. */
      content: string | ContentPart[];
      tool_call_id: string;
      /** Anthropic only: the result is a failure of the tool. */
      is_error?: boolean;
      cache_control?: CacheControl;
    };

export type ToolDefinition = {
  type: 'function';
  cache_control?: CacheControl;
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
};

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: {
        name: string;
        schema: Record<string, unknown>;
        strict?: boolean | null;
        description?: string;
      };
    };

/** The drop-in wire formats a client may speak, which a provider of the same family takes as sent. */
export type WireApi = 'anthropic-messages' | 'openai-chat' | 'openai-responses';

/**
 * A drop-in route's request as the client sent it, for a provider of the same family: the body
 * goes on with only the gate's changes applied, the betas and query with it. A provider of
 * another family gets the translation instead, without what `dropped` lists.
 */
export type Forward = {
  api: WireApi;
  body: Record<string, unknown>;
  /** Beta headers the client sent (`anthropic-beta`, `openai-beta`), by lower-case name. */
  headers: Record<string, string>;
  /**
   * The client's query parameters a provider reads (Claude Code's `?beta=true`), by name: only
   * those of FORWARDED_QUERY, the others are the gateway's business or nobody's.
   */
  query: Record<string, string>;
  /** What a translation to another family leaves out (fields, block and tool types). */
  dropped: string[];
  /**
   * What a block limit kept out of the body as sent: what the reservation cannot bound (hosted
   * tools' fees, a dearer service tier). Named like `dropped`, and sent in its place.
   */
  withheld?: string[];
  /**
   * At most how many bytes `body` takes written as JSON, measured on the client's text as it was
   * read (readJson): the body only loses fields after it. Without it the body is written out to
   * be measured. What an adapter sets as it sends (the model, the output cap, stream options, the
   * gate's response format) is bounded apart (worstCaseCost).
   */
  bodyBytes?: number;
  /**
   * Why the body has no translation (the check that refused it): a gate with no model of the
   * client's family refuses the request with it, and such a model is never tried.
   */
  untranslatable?: Error;
  /** The gate's system prompt, set by the gate merge: it goes before the client's own. */
  system?: string[];
};

/** What a drop-in request carries besides its body, for a provider of its own family (sentOf). */
export type Sent = Pick<Forward, 'headers' | 'query' | 'bodyBytes'>;

/** What an adapter is asked to do: the gate merge has already applied the gate's rules. */
export type ChatParams = {
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  responseFormat?: ResponseFormat;
  /** Anthropic only, like the two below. */
  thinking?: ThinkingConfig;
  /** OpenAI only: sent as `reasoning_effort` (dataplane/reasoning.ts keeps it for models that reason). */
  reasoningEffort?: ReasoningEffort;
  /** `anthropic-beta` values the client sent; the Anthropic adapter forwards those it knows. */
  betas?: string[];
  /** A drop-in route's own request, for an adapter that forwards its wire format. */
  forward?: Forward;
};

export type Usage = {
  promptTokens: number;
  completionTokens: number;
  /** Input read from the provider's prompt cache (part of promptTokens), priced below input. */
  cachedTokens?: number;
  /** Input written to the provider's prompt cache (part of promptTokens; Anthropic), priced above. */
  cacheWriteTokens?: number;
  reasoningTokens?: number;
};

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export type ChatCompletion = {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** The stop sequence that ended the answer, where the provider says which (Anthropic). */
  stopSequence?: string;
  /** The model's reasoning, where the provider returns it in a form it takes back (Anthropic). */
  thinking?: ThinkingBlock[];
  /** null when the provider reported none; the gateway then counts tokens itself. */
  usage: Usage | null;
  providerRequest: unknown;
  providerResponse: unknown;
  /** The client's request was forwarded: providerResponse is the answer, in the client's wire format. */
  forwarded?: boolean;
  /** What the translation of a drop-in request left out (Forward.dropped), where it was translated. */
  dropped?: string[];
};

/** One piece of a streamed answer. Tool-call fragments carry the index of the call they extend. */
export type StreamDelta = {
  content?: string;
  /** Reasoning text, and the signature that closes a thinking block (Anthropic). */
  thinking?: string;
  thinkingSignature?: string;
  /** Reasoning Anthropic encrypted, whole: a block of its own, sent back as it came. */
  redactedThinking?: string;
  toolCalls?: { index: number; id?: string; name?: string; arguments?: string }[];
  /** A forwarded request's stream: the provider's event as it came, for the client as it is. */
  raw?: { event?: string; data: string };
};

export type CallOptions = {
  signal: AbortSignal;
  /** Streams the answer: called for each delta as it arrives. */
  onDelta?: (delta: StreamDelta) => void;
};

export interface ProviderAdapter {
  /** Sends one chat request for `model` (the provider's own model name). Throws ProviderError. */
  chat(model: string, params: ChatParams, options: CallOptions): Promise<ChatCompletion>;
  /** The drop-in wire formats this provider takes as sent (see forward). */
  forwards?: ReadonlySet<WireApi>;
  /**
   * Sends `params.forward`'s body as the client wrote it, with the gate's changes of `params`
   * applied; streamed, each event reaches onDelta as `raw`. The completion is read from the
   * answer (usage, tool calls, text) for costing and the log.
   */
  forward?(
    model: string,
    params: ChatParams & { forward: Forward },
    options: CallOptions,
  ): Promise<ChatCompletion>;
}

export type ProviderErrorKind =
  | 'http'
  | 'network'
  | 'timeout'
  | 'not_configured'
  | 'invalid_response'
  | 'content_policy';

/** A failed attempt; `retryable` says whether routing moves on to the next model. */
export class ProviderError extends Error {
  readonly retryable: boolean;
  /** The exact JSON the attempt sent, for the log (set by withWireRequest). */
  providerRequest: unknown = null;
  /** The request never reached the provider (refused connection, unknown host): nothing billed. */
  unreached = false;
  /** What the provider reported it billed, when it answered and the answer was refused here. */
  usage: Usage | null = null;
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status: number | null = null,
    readonly providerResponse: unknown = null,
  ) {
    super(message);
    this.name = 'ProviderError';
    this.retryable = isRetryable(kind, status);
  }
}

/**
 * Fall back on outages (network errors, timeouts, 408, 429, 5xx, an unconfigured provider) and
 * on answers that fail the gate's structured-output contract; never on the caller's own mistakes
 * (400/401/403/404/422) or a content-policy refusal, which another model would only repeat.
 */
function isRetryable(kind: ProviderErrorKind, status: number | null): boolean {
  switch (kind) {
    case 'network':
    case 'timeout':
    case 'not_configured':
    case 'invalid_response':
      return true;
    case 'content_policy':
      return false;
    case 'http':
      return status === 408 || status === 429 || (status !== null && status >= 500);
  }
}

/** Text of a message's content, whatever its form. */
export function textOf(content: string | ContentPart[] | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((p): p is TextPart => p.type === 'text')
    .map((p) => p.text)
    .join('');
}

/**
 * Runs a provider call; a failure carries the JSON the call sent (`wire()`, the same pure
 * function the adapter sent from), so a failed entry's log shows what the provider received.
 */
export async function withWireRequest<T>(wire: () => unknown, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ProviderError && error.providerRequest === null) error.providerRequest = wire();
    throw error;
  }
}

/**
 * `message` without what only Anthropic reads (cache marks, thinking, is_error, images in a tool
 * result), for the adapters that send OpenAI's shape as it is; the same object when it has none.
 */
export function withoutAnthropicFields(message: ChatMessage): ChatMessage {
  const parts = Array.isArray(message.content) ? (message.content as ContentPart[]) : [];
  const marked = parts.some((p) => p.cache_control !== undefined);
  if (message.role === 'tool') {
    const { is_error, cache_control, ...rest } = message;
    const plain = is_error === undefined && cache_control === undefined;
    if (plain && !parts.some((p) => p.type !== 'text' || p.cache_control)) return message;
    return { ...rest, content: parts.length > 0 ? textOf(parts) : rest.content };
  }
  if (message.role === 'assistant' && message.thinking !== undefined) {
    const { thinking, ...rest } = message;
    return withoutAnthropicFields(rest);
  }
  if (!marked) return message;
  return {
    ...message,
    content: parts.map(({ cache_control, ...p }) => p),
  } as ChatMessage;
}

/** One unmarked text part as plain text, what every provider takes; several stay parts. */
export function contentOf<P extends ContentPart>(parts: P[]): string | P[] {
  const [only] = parts;
  return parts.length === 1 && only?.type === 'text' && !only.cache_control ? only.text : parts;
}

/** A tool call's arguments as JSON; a model's malformed arguments read as no arguments. */
export function parseToolArguments(args: string): unknown {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return {};
  }
}

/** The media type and base64 data of a `data:` URL, or null for any other URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const m = /^data:([^;]+);base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1] as string, data: m[2] as string } : null;
}
