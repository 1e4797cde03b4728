/** Anthropic's Messages API (POST /v1/messages), plain and streamed. */
import { postJson, postSse, withQuery } from './http.ts';
import {
  type CacheControl,
  type CallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatParams,
  type ContentPart,
  type FinishReason,
  type Forward,
  type ProviderAdapter,
  ProviderError,
  parseDataUrl,
  parseToolArguments,
  type StreamDelta,
  type TextPart,
  type ThinkingBlock,
  type ToolCall,
  textOf,
  type Usage,
  withWireRequest,
} from './types.ts';

export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; this is used when neither the gate nor the client set one. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * The `anthropic-beta` values forwarded to Anthropic: betas that change only how it treats the
 * fields the gateway sends (Anthropic refuses a beta it does not know, and a client's betas are
 * dropped, never an error). Others, and every beta on other providers, are dropped.
 */
export const FORWARDED_BETAS = new Set([
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'fine-grained-tool-streaming-2025-05-14',
  'token-efficient-tools-2025-02-19',
  'prompt-caching-2024-07-31',
  'extended-cache-ttl-2025-04-11',
  'output-128k-2025-02-19',
  'context-1m-2025-08-07',
  'token-counting-2024-11-01',
  'dev-full-thinking-2025-05-14',
]);

/**
 * Betas about the client's own sign-in (Claude Code's oauth-…): the gateway signs with its own
 * key, so they are never forwarded, even with a body sent as it came.
 */
const CREDENTIAL_BETA = /^oauth-/;

type Cached = { cache_control?: CacheControl };
type TextBlock = { type: 'text'; text: string } & Cached;
type ImageBlock = {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
} & Cached;

type Block =
  | TextBlock
  | ImageBlock
  | ({ type: 'tool_use'; id: string; name: string; input: unknown } & Cached)
  | ({
      type: 'tool_result';
      tool_use_id: string;
      content: string | (TextBlock | ImageBlock)[];
      is_error?: boolean;
    } & Cached)
  | ThinkingBlock;

type WireMessage = { role: 'user' | 'assistant'; content: Block[] };

type WireUsage = {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
};

type WireResponse = {
  id?: string;
  content?: Block[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: WireUsage;
};

const cacheOf = (part: { cache_control?: CacheControl }) =>
  part.cache_control ? { cache_control: part.cache_control } : {};

function imageBlock(url: string, cached: Cached): ImageBlock {
  const data = parseDataUrl(url);
  return data
    ? { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data }, ...cached }
    : { type: 'image', source: { type: 'url', url }, ...cached };
}

function blocksOf(content: string | ContentPart[] | null): (TextBlock | ImageBlock)[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return content.map((part) =>
    part.type === 'text'
      ? { type: 'text', text: part.text, ...cacheOf(part) }
      : imageBlock(part.image_url.url, cacheOf(part)),
  );
}

/** One string, unless a part carries a cache mark: then the blocks, so the mark reaches Anthropic. */
function systemOf(parts: (string | TextPart[])[]): string | TextBlock[] | undefined {
  if (parts.length === 0) return undefined;
  if (!parts.some((p) => typeof p !== 'string' && p.some((t) => t.cache_control))) {
    return parts.map((p) => textOf(p)).join('\n\n');
  }
  return parts.flatMap((p) => blocksOf(p) as TextBlock[]);
}

function toolResultOf(m: Extract<ChatMessage, { role: 'tool' }>): Block {
  return {
    type: 'tool_result',
    tool_use_id: m.tool_call_id,
    content: typeof m.content === 'string' ? m.content : blocksOf(m.content),
    ...(m.is_error !== undefined && { is_error: m.is_error }),
    ...cacheOf(m),
  };
}

/** System prompt apart; tool results become user turns; consecutive turns of one role merge. */
export function toAnthropicMessages(messages: ChatMessage[]): {
  system?: string | TextBlock[];
  messages: WireMessage[];
} {
  const system: (string | TextPart[])[] = [];
  const out: WireMessage[] = [];
  const push = (role: WireMessage['role'], blocks: Block[]) => {
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') system.push(m.content);
    else if (m.role === 'user') push('user', blocksOf(m.content));
    else if (m.role === 'assistant') {
      push('assistant', [
        ...(m.thinking ?? []),
        ...blocksOf(m.content),
        ...(m.tool_calls ?? []).map(
          (c): Block => ({
            type: 'tool_use',
            id: c.id,
            name: c.function.name,
            input: parseToolArguments(c.function.arguments),
          }),
        ),
      ]);
    } else if (m.role === 'tool') push('user', [toolResultOf(m)]);
  }
  const systemPrompt = systemOf(system);
  return { ...(systemPrompt && { system: systemPrompt }), messages: out };
}

function toolChoiceOf(choice: ChatParams['toolChoice']) {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  if (choice === 'none') return { type: 'none' };
  return { type: 'tool', name: choice.function.name };
}

/**
 * Anthropic refuses a thinking budget that is not below max_tokens. The gate's output cap wins:
 * the budget shrinks under it, or thinking is left off when no budget (at least 1024) fits.
 */
function thinkingWithin(thinking: ChatParams['thinking'], maxTokens: number) {
  if (thinking?.type !== 'enabled' || thinking.budget_tokens < maxTokens) return thinking;
  return maxTokens > 1024 ? { ...thinking, budget_tokens: maxTokens - 1 } : undefined;
}

export function anthropicRequestBody(model: string, params: ChatParams, stream: boolean) {
  const { system, messages } = toAnthropicMessages(params.messages);
  const toolChoice = toolChoiceOf(params.toolChoice);
  const maxTokens = params.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  const thinking = thinkingWithin(params.thinking, maxTokens);
  return {
    model,
    ...(system && { system }),
    messages,
    max_tokens: maxTokens,
    // Anthropic's scale ends at 1 where OpenAI's ends at 2.
    ...(params.temperature !== undefined && { temperature: Math.min(params.temperature, 1) }),
    ...(params.topP !== undefined && { top_p: params.topP }),
    ...(params.stop?.length && { stop_sequences: params.stop }),
    ...(params.tools?.length && {
      tools: params.tools.map((t) => ({
        name: t.function.name,
        ...(t.function.description && { description: t.function.description }),
        input_schema: t.function.parameters ?? { type: 'object', properties: {} },
        ...cacheOf(t),
      })),
    }),
    ...(toolChoice && params.tools?.length && { tool_choice: toolChoice }),
    ...(thinking && { thinking }),
    ...(stream && { stream: true }),
  };
}

/** `body[key]` set to `value`, or removed when there is none. */
export function setOrDelete(body: Record<string, unknown>, key: string, value: unknown) {
  if (value === undefined) delete body[key];
  else body[key] = value;
}

/**
 * The client's own Messages body with the gate's changes: the model, the gate's system prompt
 * before the client's, the output cap, temperature and top_p the merge decided (a client's
 * value the gate does not permit is taken out), the thinking budget fitted under the cap.
 * Everything else goes as the client wrote it, fields this gateway has never heard of included.
 */
export function anthropicForwardBody(
  model: string,
  params: ChatParams & { forward: Forward },
  stream: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...params.forward.body, model };
  const maxTokens = params.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  body.max_tokens = maxTokens;
  setOrDelete(
    body,
    'temperature',
    params.temperature === undefined ? undefined : Math.min(params.temperature, 1),
  );
  setOrDelete(body, 'top_p', params.topP);
  if (body.thinking !== undefined) {
    setOrDelete(body, 'thinking', thinkingWithin(body.thinking as ChatParams['thinking'], maxTokens));
  }
  const system = params.forward.system ?? [];
  if (system.length > 0) {
    const own = body.system;
    body.system = Array.isArray(own)
      ? [...system.map((text) => ({ type: 'text', text })), ...own]
      : [...system, ...(typeof own === 'string' && own ? [own] : [])].join('\n\n');
  }
  if (stream) body.stream = true;
  return body;
}

/** The HTTP status each error type stands for, for errors that arrive inside a stream. */
const STREAM_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

function finishReasonOf(reason: string | null | undefined, response: unknown): FinishReason {
  switch (reason) {
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      throw new ProviderError('content_policy', 'The model refused to answer', null, response);
    default:
      return 'stop';
  }
}

/** The usage reported; a figure that is no count is passed on for the pipeline to refuse (openai.ts). */
function usageOf(usage: WireUsage | undefined): Usage | null {
  if (!usage || usage.input_tokens == null) return null;
  const cached = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  // A part that is no count stands for the whole, so that it is seen and refused.
  const unsound = [usage.input_tokens, cached, written].find((n) => typeof n !== 'number');
  return {
    promptTokens: unsound ?? usage.input_tokens + cached + written,
    completionTokens: usage.output_tokens ?? 0,
    ...(cached > 0 && { cachedTokens: cached }),
    ...(written > 0 && { cacheWriteTokens: written }),
  };
}

function resultOf(body: unknown, response: WireResponse, forwarded = false): ChatCompletion {
  const blocks = response.content ?? [];
  const text = blocks.filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text');
  const toolCalls: ToolCall[] = blocks
    .filter((b): b is Extract<Block, { type: 'tool_use' }> => b.type === 'tool_use')
    .map((b) => ({
      id: b.id,
      type: 'function',
      function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
    }));
  const thinking = blocks.filter(
    (b): b is ThinkingBlock => b.type === 'thinking' || b.type === 'redacted_thinking',
  );
  return {
    content: text.length > 0 ? text.map((b) => b.text).join('') : null,
    toolCalls,
    // A forwarded refusal is an answer the client reads as Anthropic wrote it.
    finishReason:
      forwarded && response.stop_reason === 'refusal'
        ? 'content_filter'
        : finishReasonOf(response.stop_reason, response),
    ...(response.stop_sequence && { stopSequence: response.stop_sequence }),
    ...(thinking.length > 0 && { thinking }),
    usage: usageOf(response.usage),
    providerRequest: body,
    providerResponse: response,
    ...(forwarded && { forwarded }),
  };
}

export function createAnthropicAdapter(opts: {
  baseUrl: string;
  apiKey: string | undefined;
}): ProviderAdapter {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/v1/messages`;
  const baseHeaders = { 'x-api-key': opts.apiKey ?? '', 'anthropic-version': ANTHROPIC_VERSION };
  const headersFor = (params: ChatParams) => {
    const betas = params.betas?.filter((b) => FORWARDED_BETAS.has(b)) ?? [];
    return betas.length > 0 ? { ...baseHeaders, 'anthropic-beta': betas.join(',') } : baseHeaders;
  };

  /** A forwarded request's headers: every beta the client asked for, but those of its own sign-in. */
  const forwardHeaders = (forward: Forward) => {
    const betas = (forward.headers['anthropic-beta'] ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter((b) => b && !CREDENTIAL_BETA.test(b));
    return betas.length > 0 ? { ...baseHeaders, 'anthropic-beta': betas.join(',') } : baseHeaders;
  };

  async function complete(model: string, params: ChatParams, options: CallOptions) {
    const body = anthropicRequestBody(model, params, false);
    return resultOf(body, (await postJson(url, headersFor(params), body, options.signal)) as WireResponse);
  }

  /**
   * Reads a streamed answer into the message a plain call would have returned. `raw`: the
   * events go to onDelta as they came (a forwarded request), instead of as the gateway's deltas.
   */
  async function stream(
    target: string,
    headers: Record<string, string>,
    body: Record<string, unknown>,
    options: CallOptions,
    raw = false,
  ) {
    const emit = (delta: StreamDelta) => {
      if (!raw) options.onDelta?.(delta);
    };
    // The stream rebuilt into the message a plain call would have returned.
    const message: WireResponse & { type: string; role: string } = {
      type: 'message',
      role: 'assistant',
      content: [],
      stop_reason: null,
      usage: {},
    };
    const toolIndex = new Map<number, number>();
    const partialJson = new Map<number, string>();
    let stopped = false;
    await postSse(target, headers, body, options.signal, (event) => {
      const data = JSON.parse(event.data) as {
        type: string;
        index?: number;
        message?: WireResponse;
        content_block?: Block;
        delta?: {
          type?: string;
          text?: string;
          partial_json?: string;
          thinking?: string;
          signature?: string;
          stop_reason?: string;
          stop_sequence?: string | null;
        };
        usage?: WireUsage;
        error?: { type?: string; message?: string };
      };
      // A failure is told the client by the route, in its own error event, not twice.
      if (raw && data.type !== 'error')
        options.onDelta?.({ raw: { event: event.event ?? data.type, data: event.data } });
      switch (data.type) {
        case 'message_start':
          message.id = data.message?.id;
          message.usage = { ...data.message?.usage };
          break;
        case 'content_block_start': {
          const block = data.content_block as Block;
          (message.content as Block[])[data.index ?? 0] =
            block.type === 'tool_use'
              ? { ...block, input: {} }
              : block.type === 'thinking'
                ? { type: 'thinking', thinking: block.thinking ?? '', signature: block.signature ?? '' }
                : block;
          if (block.type === 'redacted_thinking') emit({ redactedThinking: block.data });
          if (block.type === 'tool_use') {
            const index = toolIndex.size;
            toolIndex.set(data.index ?? 0, index);
            emit({ toolCalls: [{ index, id: block.id, name: block.name }] });
          }
          break;
        }
        case 'content_block_delta': {
          const i = data.index ?? 0;
          const block = (message.content as Block[])[i];
          if (data.delta?.type === 'text_delta' && block?.type === 'text') {
            block.text += data.delta.text ?? '';
            emit({ content: data.delta.text ?? '' });
          } else if (data.delta?.type === 'thinking_delta' && block?.type === 'thinking') {
            block.thinking += data.delta.thinking ?? '';
            emit({ thinking: data.delta.thinking ?? '' });
          } else if (data.delta?.type === 'signature_delta' && block?.type === 'thinking') {
            block.signature += data.delta.signature ?? '';
            emit({ thinkingSignature: data.delta.signature ?? '' });
          } else if (data.delta?.type === 'input_json_delta' && block?.type === 'tool_use') {
            partialJson.set(i, (partialJson.get(i) ?? '') + (data.delta.partial_json ?? ''));
            emit({
              toolCalls: [{ index: toolIndex.get(i) ?? 0, arguments: data.delta.partial_json ?? '' }],
            });
          }
          break;
        }
        case 'content_block_stop': {
          const i = data.index ?? 0;
          const block = (message.content as Block[])[i];
          if (block?.type === 'tool_use') block.input = parseToolArguments(partialJson.get(i) ?? '');
          break;
        }
        case 'message_delta':
          message.stop_reason = data.delta?.stop_reason ?? message.stop_reason;
          message.stop_sequence = data.delta?.stop_sequence ?? message.stop_sequence;
          message.usage = { ...message.usage, ...data.usage };
          break;
        case 'message_stop':
          stopped = true;
          break;
        case 'error': {
          const status = STREAM_ERROR_STATUS[data.error?.type ?? ''] ?? 500;
          throw new ProviderError(
            'http',
            `Provider stream failed: ${data.error?.message ?? 'error'}`,
            status,
            data,
          );
        }
      }
    });
    if (!stopped) throw new ProviderError('network', 'The provider closed the stream before it finished');
    message.content = (message.content ?? []).filter(Boolean);
    return resultOf(body, message, raw);
  }

  async function forward(model: string, params: ChatParams & { forward: Forward }, options: CallOptions) {
    const body = anthropicForwardBody(model, params, Boolean(options.onDelta));
    const target = withQuery(url, params.forward.query);
    const headers = forwardHeaders(params.forward);
    if (options.onDelta) return stream(target, headers, body, options, true);
    return resultOf(body, (await postJson(target, headers, body, options.signal)) as WireResponse, true);
  }

  return {
    chat: (model, params, options) =>
      withWireRequest(
        () => anthropicRequestBody(model, params, Boolean(options.onDelta)),
        options.onDelta
          ? stream(url, headersFor(params), anthropicRequestBody(model, params, true), options)
          : complete(model, params, options),
      ),
    forwards: new Set(['anthropic-messages']),
    forward: (model, params, options) =>
      withWireRequest(
        () => anthropicForwardBody(model, params, Boolean(options.onDelta)),
        forward(model, params, options),
      ),
  };
}
