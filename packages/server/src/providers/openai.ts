/**
 * OpenAI's chat-completions wire format, for OpenAI itself and the compatible family (Groq,
 * DeepSeek, xAI, Together, OpenRouter, Ollama, vLLM) and, with its few differences, Mistral.
 */
import { sha256 } from '../domain/secrets.ts';
import { postJson, postSse } from './http.ts';
import {
  type CallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatParams,
  type FinishReason,
  type ProviderAdapter,
  ProviderError,
  type ToolCall,
  type Usage,
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
    ...(stream && { stream: true }),
    ...(stream && dialect.streamOptions && { stream_options: { include_usage: true } }),
  };
}

export function createOpenAIAdapter(dialect: OpenAIDialect): ProviderAdapter {
  const headers = {
    ...(dialect.apiKey && { authorization: `Bearer ${dialect.apiKey}` }),
    ...dialect.extraHeaders,
  };

  async function complete(model: string, params: ChatParams, options: CallOptions): Promise<ChatCompletion> {
    const body = openAIRequestBody(dialect, model, params, false);
    const response = (await postJson(
      dialect.url,
      headers,
      body,
      options.signal,
      isContentPolicy,
    )) as WireResponse;
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
    };
  }

  async function stream(model: string, params: ChatParams, options: CallOptions): Promise<ChatCompletion> {
    const body = openAIRequestBody(dialect, model, params, true);
    let content = '';
    let sawContent = false;
    let refusal = '';
    const calls: { id: string; name: string; arguments: string }[] = [];
    let finishReason: string | null = null;
    let usage: WireUsage | null = null;
    let id: string | undefined;
    let done = false;
    await postSse(
      dialect.url,
      headers,
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
          options.onDelta?.({
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
    };
  }

  return {
    chat: (model, params, options) =>
      withWireRequest(
        () => openAIRequestBody(dialect, model, params, Boolean(options.onDelta)),
        (options.onDelta ? stream : complete)(model, params, options),
      ),
  };
}
