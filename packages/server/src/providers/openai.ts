/**
 * OpenAI's chat-completions wire format, for OpenAI itself and the compatible family (Groq,
 * DeepSeek, xAI, Together, OpenRouter, Ollama, vLLM) and, with its few differences, Mistral.
 */
import { isJsonObject } from '@gatehouse/rules/jsonLimits';
import { sha256 } from '../domain/secrets.ts';
import { setOrDelete } from './anthropic.ts';
import { postJson, postSse, withQuery } from './http.ts';
import {
  type CallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatParams,
  type FinishReason,
  type Forward,
  type ProviderAdapter,
  ProviderError,
  type StreamDelta,
  type ToolCall,
  type Usage,
  type WireApi,
  withoutAnthropicFields,
  withWireRequest,
} from './types.ts';

export type OpenAIDialect = {
  /** Full URL of the chat-completions endpoint. */
  url: string;
  apiKey: string | undefined;
  /** OpenAI's reasoning models refuse max_tokens; the others expect it. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  seedField: 'seed' | 'random_seed';
  /** Mistral spells tool_choice "required" as "any". */
  requiredToolChoice: 'required' | 'any';
  /**
   * Whether the request may carry `stream_options` to get usage on a stream. Mistral refuses the
   * field (422) and always puts usage on its last chunk.
   */
  streamOptions: boolean;
  /** Whether the API knows OpenAI's `developer` role; the others get `system` instead. */
  developerRole: boolean;
  /** Whether messages other than tool results may carry `name` (Mistral forbids it). */
  messageNames: boolean;
  /**
   * Mistral accepts only tool call ids of nine letters and digits, its own kind, and checks every
   * id in the conversation: one begun on another provider (call_…, toolu_…) is a 400 there.
   */
  toolCallIds: 'any' | 'nine-alphanumeric';
  /**
   * The drop-in formats it takes as a client sent them (OpenAI itself): a compatible provider
   * refuses fields it does not know (Mistral: 422), so it gets the translation instead.
   */
  forwards: WireApi[];
  /** Full URL of the Responses endpoint, where it has one (forwards 'openai-responses'). */
  responsesUrl?: string;
  extraHeaders?: Record<string, string>;
};

type WireUsage = {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
};

type WireToolCall = {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string | Record<string, unknown> };
};

/** Mistral's reasoning models answer with a list of chunks (thinking, then text) instead of a string. */
type WireContent = string | { type?: string; text?: string }[] | null;

type WireChoice = {
  message?: { content?: WireContent; tool_calls?: WireToolCall[] | null; refusal?: string | null };
  delta?: { content?: WireContent; tool_calls?: WireToolCall[] | null; refusal?: string | null };
  finish_reason?: string | null;
};

type WireResponse = {
  choices?: WireChoice[];
  usage?: WireUsage | null;
  /** Groq puts a stream's usage here, on its last chunk. */
  x_groq?: { usage?: WireUsage };
  error?: { message?: string };
};

function textOfContent(content: WireContent | undefined): string | null {
  if (content == null) return null;
  if (typeof content === 'string') return content;
  return content
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text)
    .join('');
}

export function finishReasonOf(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'length':
    case 'model_length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * The usage reported, as it came: none when absent (the gateway then counts), and a figure that is
 * no count passed on for the pipeline to refuse (dataplane/usage.ts), not taken for an absence.
 */
function usageOf(usage: WireUsage | null | undefined): Usage | null {
  if (!usage || usage.prompt_tokens == null) return null;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens ?? 0,
    ...(cached && { cachedTokens: cached }),
    ...(usage.completion_tokens_details?.reasoning_tokens && {
      reasoningTokens: usage.completion_tokens_details.reasoning_tokens,
    }),
  };
}

const argumentsText = (args: string | Record<string, unknown> | undefined) =>
  typeof args === 'string' ? args : JSON.stringify(args ?? {});

function isContentPolicy(body: unknown): boolean {
  const code = (body as { error?: { code?: string } } | null)?.error?.code;
  return code === 'content_policy_violation' || code === 'content_filter';
}

const NINE_ALPHANUMERIC = /^[a-zA-Z0-9]{9}$/;

/**
 * A tool call id in the nine letters and digits Mistral accepts: its own ids unchanged, any other
 * id turned into the first nine hex digits of its SHA-256, so a call and its result still match.
 */
function mistralToolCallId(id: string): string {
  return NINE_ALPHANUMERIC.test(id) ? id : sha256(id).slice(0, 9);
}

function wireMessages(dialect: OpenAIDialect, chat: ChatMessage[]): ChatMessage[] {
  const rewriteIds = dialect.toolCallIds === 'nine-alphanumeric';
  const messages = chat.map(withoutAnthropicFields);
  if (dialect.developerRole && dialect.messageNames && !rewriteIds) return messages;
  return messages.map((m) => {
    if (m.role === 'tool') {
      return rewriteIds ? { ...m, tool_call_id: mistralToolCallId(m.tool_call_id) } : m;
    }
    const { name, ...rest } = m;
    const kept = dialect.messageNames && name !== undefined ? { ...rest, name } : rest;
    if (rewriteIds && m.role === 'assistant' && m.tool_calls) {
      (kept as typeof m).tool_calls = m.tool_calls.map((c) => ({ ...c, id: mistralToolCallId(c.id) }));
    }
    return (
      m.role === 'developer' && !dialect.developerRole ? { ...kept, role: 'system' } : kept
    ) as ChatMessage;
  });
}

export function openAIRequestBody(
  dialect: OpenAIDialect,
  model: string,
  params: ChatParams,
  stream: boolean,
) {
  const toolChoice = params.toolChoice === 'required' ? dialect.requiredToolChoice : params.toolChoice;
  return {
    model,
    messages: wireMessages(dialect, params.messages),
    ...(params.temperature !== undefined && { temperature: params.temperature }),
    ...(params.topP !== undefined && { top_p: params.topP }),
    ...(params.maxTokens !== undefined && { [dialect.maxTokensField]: params.maxTokens }),
    ...(params.stop?.length && { stop: params.stop }),
    ...(params.seed !== undefined && { [dialect.seedField]: params.seed }),
    ...(params.tools?.length && { tools: params.tools.map(({ cache_control, ...tool }) => tool) }),
    ...(toolChoice !== undefined && { tool_choice: toolChoice }),
    ...(params.responseFormat && { response_format: params.responseFormat }),
    ...(params.reasoningEffort && { reasoning_effort: params.reasoningEffort }),
    ...(stream && { stream: true }),
    ...(stream && dialect.streamOptions && { stream_options: { include_usage: true } }),
  };
}

type Forwarded = ChatParams & { forward: Forward };

/**
 * The client's own chat-completions body with the gate's changes: the model, the gate's system
 * prompt as the first messages, the parameters the merge decided (the output cap in the field
 * the client used), the gate's response format, and usage asked for on a stream (the gateway
 * costs from it). Everything else goes as the client wrote it.
 */
export function openAIForwardBody(dialect: OpenAIDialect, model: string, params: Forwarded, stream: boolean) {
  const body: Record<string, unknown> = { ...params.forward.body, model };
  setOrDelete(body, 'temperature', params.temperature);
  setOrDelete(body, 'top_p', params.topP);
  const capField =
    'max_completion_tokens' in body
      ? 'max_completion_tokens'
      : 'max_tokens' in body
        ? 'max_tokens'
        : dialect.maxTokensField;
  delete body.max_tokens;
  delete body.max_completion_tokens;
  if (params.maxTokens !== undefined) body[capField] = params.maxTokens;
  const system = params.forward.system ?? [];
  if (system.length > 0 && Array.isArray(body.messages)) {
    body.messages = [...system.map((content) => ({ role: 'system', content })), ...body.messages];
  }
  if (params.responseFormat) body.response_format = params.responseFormat;
  if (stream) {
    body.stream = true;
    if (dialect.streamOptions) {
      body.stream_options = {
        ...(isJsonObject(body.stream_options) && body.stream_options),
        include_usage: true,
      };
    }
  }
  return body;
}

/**
 * The client's own Responses body with the gate's changes: the model, the gate's system prompt
 * before the client's instructions, the parameters the merge decided, the gate's response format
 * in `text.format` (its other settings, verbosity, kept). Everything else goes as written.
 */
export function responsesForwardBody(model: string, params: Forwarded, stream: boolean) {
  const body: Record<string, unknown> = { ...params.forward.body, model };
  setOrDelete(body, 'temperature', params.temperature);
  setOrDelete(body, 'top_p', params.topP);
  setOrDelete(body, 'max_output_tokens', params.maxTokens);
  const system = params.forward.system ?? [];
  if (system.length > 0) {
    const own = typeof body.instructions === 'string' && body.instructions ? [body.instructions] : [];
    body.instructions = [...system, ...own].join('\n\n');
  }
  const format = params.responseFormat;
  if (format) {
    body.text = {
      ...(isJsonObject(body.text) && body.text),
      format:
        format.type === 'json_schema' ? { type: format.type, ...format.json_schema } : { type: format.type },
    };
  }
  if (stream) body.stream = true;
  return body;
}

type ResponsesUsage = {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number };
  output_tokens_details?: { reasoning_tokens?: number };
};

type ResponsesItem = {
  type?: string;
  content?: { type?: string; text?: string }[];
  call_id?: string;
  name?: string;
  arguments?: string;
  input?: string;
};

type ResponsesAnswer = {
  status?: string;
  incomplete_details?: { reason?: string } | null;
  output?: ResponsesItem[];
  usage?: ResponsesUsage | null;
};

/** What the gateway reads of a Responses answer: its text, tool calls (custom ones too) and usage. */
function responsesResult(body: unknown, response: ResponsesAnswer): ChatCompletion {
  const output = response.output ?? [];
  const text = output
    .filter((i) => i.type === 'message')
    .flatMap((i) => i.content ?? [])
    .filter((p) => p.type === 'output_text')
    .map((p) => p.text ?? '');
  const toolCalls: ToolCall[] = output
    .filter((i) => i.type === 'function_call' || i.type === 'custom_tool_call')
    .map((i, n) => ({
      id: i.call_id ?? `call_${n}`,
      type: 'function',
      function: {
        name: i.name ?? '',
        arguments: i.type === 'custom_tool_call' ? (i.input ?? '') : (i.arguments ?? ''),
      },
    }));
  const reason = response.status === 'incomplete' ? response.incomplete_details?.reason : undefined;
  const u = response.usage;
  return {
    content: text.length > 0 ? text.join('') : null,
    toolCalls,
    finishReason:
      reason === 'max_output_tokens'
        ? 'length'
        : reason === 'content_filter'
          ? 'content_filter'
          : toolCalls.length > 0
            ? 'tool_calls'
            : 'stop',
    usage:
      u && typeof u.input_tokens === 'number'
        ? {
            promptTokens: u.input_tokens,
            completionTokens: u.output_tokens ?? 0,
            ...(u.input_tokens_details?.cached_tokens && {
              cachedTokens: u.input_tokens_details.cached_tokens,
            }),
            ...(u.output_tokens_details?.reasoning_tokens && {
              reasoningTokens: u.output_tokens_details.reasoning_tokens,
            }),
          }
        : null,
    providerRequest: body,
    providerResponse: response,
    forwarded: true,
  };
}

export function createOpenAIAdapter(dialect: OpenAIDialect): ProviderAdapter {
  const headers = {
    ...(dialect.apiKey && { authorization: `Bearer ${dialect.apiKey}` }),
    ...dialect.extraHeaders,
  };

  async function complete(
    url: string,
    sent: Record<string, string>,
    body: Record<string, unknown>,
    options: CallOptions,
    forwarded = false,
  ): Promise<ChatCompletion> {
    const response = (await postJson(url, sent, body, options.signal, isContentPolicy)) as WireResponse;
    const choice = response.choices?.[0];
    if (!choice?.message) {
      throw new ProviderError('invalid_response', 'The provider answered without a choice', null, response);
    }
    if (choice.message.refusal) {
      throw new ProviderError(
        'content_policy',
        `The model refused: ${choice.message.refusal}`,
        null,
        response,
      );
    }
    const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).map((call, i) => ({
      id: call.id ?? `call_${i}`,
      type: 'function',
      function: { name: call.function?.name ?? '', arguments: argumentsText(call.function?.arguments) },
    }));
    return {
      content: textOfContent(choice.message.content),
      toolCalls,
      finishReason: finishReasonOf(choice.finish_reason),
      usage: usageOf(response.usage),
      providerRequest: body,
      providerResponse: response,
      ...(forwarded && { forwarded }),
    };
  }

  /**
   * Reads a streamed answer. `raw`: a forwarded request's chunks go to onDelta as they came,
   * but the usage chunk the gateway asked for when the client did not (and `[DONE]`, which the
   * route writes itself).
   */
  async function stream(
    url: string,
    sent: Record<string, string>,
    body: Record<string, unknown>,
    options: CallOptions,
    raw: { usageChunk: boolean } | null = null,
  ): Promise<ChatCompletion> {
    const model = body.model as string;
    const emit = (delta: StreamDelta) => {
      if (!raw) options.onDelta?.(delta);
    };
    let content = '';
    let sawContent = false;
    let refusal = '';
    const calls: { id: string; name: string; arguments: string }[] = [];
    let finishReason: string | null = null;
    let usage: WireUsage | null = null;
    let id: string | undefined;
    let done = false;
    await postSse(
      url,
      sent,
      body,
      options.signal,
      (event) => {
        if (event.data === '[DONE]') {
          done = true;
          return;
        }
        const chunk = JSON.parse(event.data) as WireResponse & { id?: string };
        if (chunk.error) {
          throw new ProviderError(
            'http',
            `Provider stream failed: ${chunk.error.message ?? 'error'}`,
            500,
            chunk,
          );
        }
        if (raw && (chunk.choices?.length || !chunk.usage || raw.usageChunk)) {
          options.onDelta?.({ raw: { ...(event.event && { event: event.event }), data: event.data } });
        }
        id ??= chunk.id;
        if (chunk.usage) usage = chunk.usage;
        else if (chunk.x_groq?.usage && !usage) usage = chunk.x_groq.usage;
        const choice = chunk.choices?.[0];
        if (!choice) return;
        if (choice.finish_reason) finishReason = choice.finish_reason;
        const delta = choice.delta;
        if (!delta) return;
        if (delta.refusal) refusal += delta.refusal;
        const text = textOfContent(delta.content);
        const toolDeltas = (delta.tool_calls ?? []).map((d, i) => {
          const index = d.index ?? i;
          const call = calls[index] ?? { id: '', name: '', arguments: '' };
          calls[index] = call;
          if (d.id) call.id = d.id;
          if (d.function?.name) call.name += d.function.name;
          const args = d.function?.arguments === undefined ? undefined : argumentsText(d.function.arguments);
          if (args) call.arguments += args;
          return {
            index,
            ...(d.id && { id: d.id }),
            ...(d.function?.name && { name: d.function.name }),
            ...(args && { arguments: args }),
          };
        });
        if (text) {
          content += text;
          sawContent = true;
        }
        if (text || toolDeltas.length > 0) {
          emit({
            ...(text && { content: text }),
            ...(toolDeltas.length > 0 && { toolCalls: toolDeltas }),
          });
        }
      },
      isContentPolicy,
    );
    // Every dialect ends a stream with `[DONE]`; without it the answer (or its usage) may be cut short.
    if (!done) throw new ProviderError('network', 'The provider closed the stream before it finished');
    const toolCalls: ToolCall[] = calls.map((c, i) => ({
      id: c.id || `call_${i}`,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
    const message = {
      role: 'assistant',
      content: sawContent ? content : null,
      ...(refusal && { refusal }),
      ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
    };
    const providerResponse = {
      id,
      object: 'chat.completion',
      model,
      choices: [{ index: 0, message, finish_reason: finishReason }],
      usage,
    };
    if (refusal) {
      throw new ProviderError('content_policy', `The model refused: ${refusal}`, null, providerResponse);
    }
    return {
      content: sawContent ? content : null,
      toolCalls,
      finishReason: finishReasonOf(finishReason),
      usage: usageOf(usage),
      providerRequest: body,
      // The stream, assembled into the shape of a non-streamed answer.
      providerResponse,
      ...(raw && { forwarded: true }),
    };
  }

  /** A Responses stream, every event forwarded as it came; the final response is what it read. */
  async function responsesStream(
    url: string,
    sent: Record<string, string>,
    body: Record<string, unknown>,
    options: CallOptions,
  ): Promise<ChatCompletion> {
    let final: ResponsesAnswer | null = null;
    await postSse(
      url,
      sent,
      body,
      options.signal,
      (event) => {
        const data = JSON.parse(event.data) as {
          type?: string;
          response?: ResponsesAnswer & { error?: { message?: string } | null };
          message?: string;
        };
        // A failure is told the client by the route, in its own error event, not twice.
        if (data.type === 'error' || data.type === 'response.failed') {
          const message = data.message ?? data.response?.error?.message ?? 'error';
          throw new ProviderError('http', `Provider stream failed: ${message}`, 500, data);
        }
        options.onDelta?.({ raw: { event: event.event ?? data.type ?? 'message', data: event.data } });
        if (data.type === 'response.completed' || data.type === 'response.incomplete') {
          final = data.response ?? {};
        }
      },
      isContentPolicy,
    );
    if (!final) throw new ProviderError('network', 'The provider closed the stream before it finished');
    return responsesResult(body, final);
  }

  const withSent = (forward: Forward) =>
    forward.headers['openai-beta'] ? { ...headers, 'openai-beta': forward.headers['openai-beta'] } : headers;

  function forwardBody(model: string, params: Forwarded, stream: boolean) {
    return params.forward.api === 'openai-responses'
      ? responsesForwardBody(model, params, stream)
      : openAIForwardBody(dialect, model, params, stream);
  }

  async function forward(model: string, params: Forwarded, options: CallOptions): Promise<ChatCompletion> {
    const { forward: f } = params;
    const body = forwardBody(model, params, Boolean(options.onDelta));
    const sent = withSent(f);
    if (f.api === 'openai-responses') {
      // Only a dialect with a Responses URL forwards to it (`forwards` below).
      const url = withQuery(dialect.responsesUrl as string, f.query);
      if (options.onDelta) return responsesStream(url, sent, body, options);
      return responsesResult(
        body,
        (await postJson(url, sent, body, options.signal, isContentPolicy)) as ResponsesAnswer,
      );
    }
    const url = withQuery(dialect.url, f.query);
    if (!options.onDelta) return complete(url, sent, body, options, true);
    const asked = isJsonObject(f.body.stream_options) && f.body.stream_options.include_usage === true;
    return stream(url, sent, body, options, { usageChunk: asked });
  }

  const forwards = new Set(
    dialect.forwards.filter((api) => api !== 'openai-responses' || dialect.responsesUrl !== undefined),
  );
  return {
    chat: (model, params, options) =>
      withWireRequest(
        () => openAIRequestBody(dialect, model, params, Boolean(options.onDelta)),
        options.onDelta
          ? stream(dialect.url, headers, openAIRequestBody(dialect, model, params, true), options)
          : complete(dialect.url, headers, openAIRequestBody(dialect, model, params, false), options),
      ),
    ...(forwards.size > 0 && {
      forwards,
      forward: (model: string, params: Forwarded, options: CallOptions) =>
        withWireRequest(
          () => forwardBody(model, params, Boolean(options.onDelta)),
          forward(model, params, options),
        ),
    }),
  };
}
