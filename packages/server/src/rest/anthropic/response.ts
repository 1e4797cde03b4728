/**
 * The gateway's answer in Anthropic's Messages wire format: the `message` object, the named
 * events of a stream, and errors as `{type: "error", error: {type, message}}`.
 */
import { ChatFailure, type ChatOutcome, type StreamStart } from '../../dataplane/chat.ts';
import { DomainError, HTTP_STATUS } from '../../domain/errors.ts';
import { CLIENT_GONE_STATUS, isClientGone } from '../../http/errors.ts';
import type { SseFormat } from '../../http/sse.ts';
import {
  type ChatCompletion,
  parseToolArguments,
  type StreamDelta,
  type Usage,
} from '../../providers/types.ts';

const ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/**
 * Our status in Anthropic's terms: 502 (no model could answer) is its 500 api_error, or its 529
 * overloaded_error when the last model tried was overloaded; the rest keep their status.
 */
function statusOf(error: DomainError): number {
  const status = HTTP_STATUS[error.code];
  if (status !== 502) return status;
  const last = error instanceof ChatFailure ? error.attempts.at(-1)?.status : null;
  return last === 529 || last === 503 ? 529 : 500;
}

export function anthropicError(error: unknown): { status: number; body: unknown } {
  if (error instanceof DomainError) {
    const status = statusOf(error);
    const message = error.message.replace(/^Invalid request: /, '');
    return {
      status,
      // Anthropic's own errors carry a top-level request_id: here, the log entry the failure left.
      body: {
        type: 'error',
        error: { type: ERROR_TYPE[status] ?? 'api_error', message },
        ...(error.requestId && { request_id: error.requestId }),
      },
    };
  }
  if (isClientGone(error)) return { status: CLIENT_GONE_STATUS, body: null };
  console.error('anthropic route: unexpected error', error);
  return {
    status: 500,
    body: { type: 'error', error: { type: 'api_error', message: 'Something went wrong on our side' } },
  };
}

const messageId = (id: string) => `msg_${id.replaceAll('-', '')}`;

function stopReasonOf(c: ChatCompletion): string {
  switch (c.finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return c.stopSequence ? 'stop_sequence' : 'end_turn';
  }
}

/** Anthropic counts cache reads and writes apart from input_tokens; our promptTokens holds all three. */
function usageBody(u: Usage) {
  const read = u.cachedTokens ?? 0;
  const written = u.cacheWriteTokens ?? 0;
  return {
    input_tokens: Math.max(0, u.promptTokens - read - written),
    output_tokens: u.completionTokens,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}

export function messageBody(o: ChatOutcome) {
  const c = o.completion;
  return {
    id: messageId(o.id),
    type: 'message',
    role: 'assistant',
    model: o.modelUsed,
    content: [
      ...(c.thinking ?? []),
      ...(c.content ? [{ type: 'text', text: c.content }] : []),
      ...c.toolCalls.map((call) => ({
        type: 'tool_use',
        id: call.id,
        name: call.function.name,
        input: parseToolArguments(call.function.arguments),
      })),
    ],
    stop_reason: stopReasonOf(c),
    stop_sequence: c.stopSequence ?? null,
    usage: usageBody(o.usage),
  };
}

type Event = { type: string } & Record<string, unknown>;
type BlockKind = 'text' | 'thinking' | 'redacted_thinking' | 'tool_use';

/** The stream's first events: the message, empty, and a ping. */
function messageStart(s: StreamStart): Event[] {
  const message = {
    id: messageId(s.id),
    type: 'message',
    role: 'assistant',
    model: s.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: usageBody({ promptTokens: 0, completionTokens: 0 }),
  };
  return [{ type: 'message_start', message }, { type: 'ping' }];
}

/**
 * The stream as Anthropic's events: message_start and a ping first, then one content block per
 * run of text, thinking or tool call (start, deltas, stop), then message_delta with the stop
 * reason and the whole usage (input counted too, as Anthropic's cumulative usage does), and
 * message_stop. message_start's usage is zero: the gateway knows the counts only at the end.
 */
export function messageStream(): SseFormat {
  let started = false;
  let blocks = 0;
  let open: BlockKind | null = null;
  const toolBlocks = new Map<number, number>();

  const begin = (s: StreamStart, out: Event[]) => {
    if (started) return;
    started = true;
    out.push(...messageStart(s));
  };
  const close = (out: Event[]) => {
    if (open) out.push({ type: 'content_block_stop', index: blocks - 1 });
    open = null;
  };
  const openBlock = (out: Event[], kind: BlockKind, content_block: Record<string, unknown>) => {
    close(out);
    out.push({ type: 'content_block_start', index: blocks, content_block });
    blocks += 1;
    open = kind;
  };
  const delta = (out: Event[], index: number, d: Record<string, unknown>) =>
    out.push({ type: 'content_block_delta', index, delta: d });

  return {
    delta: (s: StreamStart, d: StreamDelta) => {
      const out: Event[] = [];
      begin(s, out);
      if (d.thinking !== undefined) {
        if (open !== 'thinking')
          openBlock(out, 'thinking', { type: 'thinking', thinking: '', signature: '' });
        delta(out, blocks - 1, { type: 'thinking_delta', thinking: d.thinking });
      }
      if (d.thinkingSignature && open === 'thinking') {
        delta(out, blocks - 1, { type: 'signature_delta', signature: d.thinkingSignature });
      }
      if (d.redactedThinking !== undefined) {
        openBlock(out, 'redacted_thinking', { type: 'redacted_thinking', data: d.redactedThinking });
      }
      if (d.content) {
        if (open !== 'text') openBlock(out, 'text', { type: 'text', text: '' });
        delta(out, blocks - 1, { type: 'text_delta', text: d.content });
      }
      for (const call of d.toolCalls ?? []) {
        if (!toolBlocks.has(call.index)) {
          toolBlocks.set(call.index, blocks);
          const id = call.id ?? `toolu_${call.index}`;
          openBlock(out, 'tool_use', { type: 'tool_use', id, name: call.name ?? '', input: {} });
        }
        if (call.arguments) {
          delta(out, toolBlocks.get(call.index) as number, {
            type: 'input_json_delta',
            partial_json: call.arguments,
          });
        }
      }
      return out;
    },
    end: (s: StreamStart, o: ChatOutcome) => {
      const out: Event[] = [];
      begin({ ...s, model: o.modelUsed }, out);
      close(out);
      out.push(
        {
          type: 'message_delta',
          delta: {
            stop_reason: stopReasonOf(o.completion),
            stop_sequence: o.completion.stopSequence ?? null,
          },
          usage: usageBody(o.usage),
        },
        { type: 'message_stop' },
      );
      return out;
    },
    error: (error: unknown) => {
      const { body } = anthropicError(error);
      return body ?? { type: 'error', error: { type: 'api_error', message: 'The stream was interrupted' } };
    },
    eventName: (event: unknown) => (event as Event).type,
    doneMarker: false,
  };
}
