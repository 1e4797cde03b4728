/** Anthropic's Messages API (POST /v1/messages), plain and streamed. */
import { postJson, postSse } from './http.ts';
import {
  type CallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatParams,
  type ContentPart,
  type FinishReason,
  type ProviderAdapter,
  ProviderError,
  parseDataUrl,
  parseToolArguments,
  type ToolCall,
  textOf,
  type Usage,
  withWireRequest,
} from './types.ts';

export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; this is used when neither the gate nor the client set one. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

type Block =
  | { type: 'text'; text: string }
  | {
      type: 'image';
      source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
    }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string };

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
  usage?: WireUsage;
};

function imageBlock(url: string): Block {
  const data = parseDataUrl(url);
  return data
    ? { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } }
    : { type: 'image', source: { type: 'url', url } };
}

function blocksOf(content: string | ContentPart[] | null): Block[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return content.map((part) =>
    part.type === 'text' ? { type: 'text', text: part.text } : imageBlock(part.image_url.url),
  );
}

/** System prompt apart; tool results become user turns; consecutive turns of one role merge. */
export function toAnthropicMessages(messages: ChatMessage[]): { system?: string; messages: WireMessage[] } {
  const system: string[] = [];
  const out: WireMessage[] = [];
  const push = (role: WireMessage['role'], blocks: Block[]) => {
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else if (m.role === 'user') push('user', blocksOf(m.content));
    else if (m.role === 'assistant') {
      push('assistant', [
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
    } else if (m.role === 'tool')
      push('user', [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: textOf(m.content) }]);
  }
  return { ...(system.length > 0 && { system: system.join('\n\n') }), messages: out };
}

function toolChoiceOf(choice: ChatParams['toolChoice']) {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  if (choice === 'none') return { type: 'none' };
  return { type: 'tool', name: choice.function.name };
}

export function anthropicRequestBody(model: string, params: ChatParams, stream: boolean) {
  const { system, messages } = toAnthropicMessages(params.messages);
  const toolChoice = toolChoiceOf(params.toolChoice);
  return {
    model,
    ...(system && { system }),
    messages,
    max_tokens: params.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    // Anthropic's scale ends at 1 where OpenAI's ends at 2.
    ...(params.temperature !== undefined && { temperature: Math.min(params.temperature, 1) }),
    ...(params.topP !== undefined && { top_p: params.topP }),
    ...(params.stop?.length && { stop_sequences: params.stop }),
    ...(params.tools?.length && {
      tools: params.tools.map((t) => ({
        name: t.function.name,
        ...(t.function.description && { description: t.function.description }),
        input_schema: t.function.parameters ?? { type: 'object', properties: {} },
      })),
    }),
    ...(toolChoice && params.tools?.length && { tool_choice: toolChoice }),
    ...(stream && { stream: true }),
  };
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

function usageOf(usage: WireUsage | undefined): Usage | null {
  if (!usage || typeof usage.input_tokens !== 'number') return null;
  const cached = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  return {
    promptTokens: usage.input_tokens + cached + written,
    completionTokens: usage.output_tokens ?? 0,
    ...(cached > 0 && { cachedTokens: cached }),
    ...(written > 0 && { cacheWriteTokens: written }),
  };
}

function resultOf(body: unknown, response: WireResponse): ChatCompletion {
  const blocks = response.content ?? [];
  const text = blocks.filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text');
  const toolCalls: ToolCall[] = blocks
    .filter((b): b is Extract<Block, { type: 'tool_use' }> => b.type === 'tool_use')
    .map((b) => ({
      id: b.id,
      type: 'function',
      function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
    }));
  return {
    content: text.length > 0 ? text.map((b) => b.text).join('') : null,
    toolCalls,
    finishReason: finishReasonOf(response.stop_reason, response),
    usage: usageOf(response.usage),
    providerRequest: body,
    providerResponse: response,
  };
}

export function createAnthropicAdapter(opts: {
  baseUrl: string;
  apiKey: string | undefined;
}): ProviderAdapter {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/v1/messages`;
  const headers = { 'x-api-key': opts.apiKey ?? '', 'anthropic-version': ANTHROPIC_VERSION };

  async function complete(model: string, params: ChatParams, options: CallOptions) {
    const body = anthropicRequestBody(model, params, false);
    return resultOf(body, (await postJson(url, headers, body, options.signal)) as WireResponse);
  }

  async function stream(model: string, params: ChatParams, options: CallOptions) {
    const body = anthropicRequestBody(model, params, true);
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
    await postSse(url, headers, body, options.signal, (event) => {
      const data = JSON.parse(event.data) as {
        type: string;
        index?: number;
        message?: WireResponse;
        content_block?: Block;
        delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string };
        usage?: WireUsage;
        error?: { type?: string; message?: string };
      };
      switch (data.type) {
        case 'message_start':
          message.id = data.message?.id;
          message.usage = { ...data.message?.usage };
          break;
        case 'content_block_start': {
          const block = data.content_block as Block;
          (message.content as Block[])[data.index ?? 0] =
            block.type === 'tool_use' ? { ...block, input: {} } : block;
          if (block.type === 'tool_use') {
            const index = toolIndex.size;
            toolIndex.set(data.index ?? 0, index);
            options.onDelta?.({ toolCalls: [{ index, id: block.id, name: block.name }] });
          }
          break;
        }
        case 'content_block_delta': {
          const i = data.index ?? 0;
          const block = (message.content as Block[])[i];
          if (data.delta?.type === 'text_delta' && block?.type === 'text') {
            block.text += data.delta.text ?? '';
            options.onDelta?.({ content: data.delta.text ?? '' });
          } else if (data.delta?.type === 'input_json_delta' && block?.type === 'tool_use') {
            partialJson.set(i, (partialJson.get(i) ?? '') + (data.delta.partial_json ?? ''));
            options.onDelta?.({
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
    return resultOf(body, message);
  }

  return {
    chat: (model, params, options) =>
      withWireRequest(
        () => anthropicRequestBody(model, params, Boolean(options.onDelta)),
        (options.onDelta ? stream : complete)(model, params, options),
      ),
  };
}
