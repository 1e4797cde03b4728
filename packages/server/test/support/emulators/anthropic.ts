/**
 * Anthropic's Messages API (POST /v1/messages): `message` objects, the named SSE events of a
 * stream (message_start, content_block_start/delta/stop with text_delta and input_json_delta,
 * ping, message_delta, message_stop, error), and the checks the real endpoint makes first.
 */
import { type Gatekeeper, type Reply, sseFrame, startUpstream } from './upstream.ts';

export type AnthropicUsage = { input: number; output: number; cacheRead?: number; cacheCreation?: number };

export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature: string };

const MESSAGE_ID = 'msg_013Zva2CMHLNnXjNJJKqJ2EF';

function usageBody(u: AnthropicUsage) {
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: u.cacheCreation ?? 0,
    cache_read_input_tokens: u.cacheRead ?? 0,
    output_tokens: u.output,
    service_tier: 'standard',
  };
}

export function message(a: {
  content?: AnthropicBlock[];
  stopReason?: string;
  usage?: AnthropicUsage;
  model?: string;
}) {
  const content = a.content ?? [{ type: 'text', text: 'Hi! My name is Claude.' }];
  return {
    id: MESSAGE_ID,
    type: 'message',
    role: 'assistant',
    model: a.model ?? 'claude-3-5-haiku-20241022',
    content,
    stop_reason: a.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: usageBody(a.usage ?? { input: 25, output: 15 }),
  };
}

export type StreamBlock =
  | { type: 'text'; parts: string[] }
  | { type: 'tool_use'; id: string; name: string; jsonParts: string[] }
  | { type: 'thinking'; parts: string[]; signature: string }
  | { type: 'redacted_thinking'; data: string };

/** The named events of a streamed answer, from message_start to message_stop. */
export function streamFrames(a: {
  blocks: StreamBlock[];
  stopReason?: string;
  usage?: AnthropicUsage;
  model?: string;
}): string[] {
  const usage = a.usage ?? { input: 25, output: 15 };
  const frame = (data: { type: string } & Record<string, unknown>) => sseFrame(data, data.type);
  const frames = [
    frame({
      type: 'message_start',
      message: {
        id: MESSAGE_ID,
        type: 'message',
        role: 'assistant',
        content: [],
        model: a.model ?? 'claude-3-5-haiku-20241022',
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usageBody({ ...usage, output: 1 }) },
      },
    }),
  ];
  a.blocks.forEach((block, index) => {
    if (block.type === 'redacted_thinking') {
      frames.push(frame({ type: 'content_block_start', index, content_block: block }));
    } else if (block.type === 'thinking') {
      frames.push(
        frame({
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        }),
      );
      for (const thinking of block.parts) {
        frames.push(
          frame({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } }),
        );
      }
      frames.push(
        frame({
          type: 'content_block_delta',
          index,
          delta: { type: 'signature_delta', signature: block.signature },
        }),
      );
    } else if (block.type === 'text') {
      frames.push(frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      if (index === 0) frames.push(frame({ type: 'ping' }));
      for (const text of block.parts) {
        frames.push(frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }));
      }
    } else {
      frames.push(
        frame({
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        }),
      );
      for (const partial_json of ['', ...block.jsonParts]) {
        frames.push(
          frame({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }),
        );
      }
    }
    frames.push(frame({ type: 'content_block_stop', index }));
  });
  const stopReason = a.stopReason ?? (a.blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  frames.push(
    frame({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
  );
  frames.push(frame({ type: 'message_stop' }));
  return frames;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export function errorBody(status: number, message: string) {
  return {
    type: 'error',
    error: { type: ERROR_TYPES[status] ?? 'api_error', message },
    request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy',
  };
}

export function errorReply(status: number, message: string): Reply {
  return { type: 'json', status, body: errorBody(status, message) };
}

/** The `error` event Anthropic sends inside a stream that fails after it began. */
export function errorFrame(type: string, message: string): string {
  return sseFrame({ type: 'error', error: { type, message } }, 'error');
}

const FIELDS = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  // What Claude Code 2.1 sends besides (context management and output settings are GA fields).
  'context_management',
  'output_config',
  'container',
  'mcp_servers',
]);

type WireBlock = { type: string; id?: string; tool_use_id?: string };

/**
 * What the real endpoint refuses of extended thinking: a budget under 1,024 or not under
 * max_tokens, a temperature but 1, a forced tool, and a tool loop (the assistant turns since the
 * user last wrote, not only tool results) whose first turn does not begin with its thinking.
 */
function thinkingProblem(
  body: Record<string, unknown>,
  messages: { role: string; content: string | WireBlock[] }[],
): string | null {
  const thinking = body.thinking as { type?: string; budget_tokens?: number } | undefined;
  if (thinking?.type !== 'enabled') return null;
  const budget = thinking.budget_tokens ?? 0;
  if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if ((body.max_tokens as number) <= budget) {
    return '`max_tokens` must be greater than `thinking.budget_tokens`';
  }
  if (typeof body.temperature === 'number' && body.temperature !== 1) {
    return '`temperature` may only be set to 1 when thinking is enabled';
  }
  const choice = (body.tool_choice as { type?: string } | undefined)?.type;
  if (choice === 'any' || choice === 'tool') {
    return 'Thinking may not be enabled when tool_choice forces tool use.';
  }
  const wrote = messages.findLastIndex(
    (m) =>
      m.role === 'user' && !(Array.isArray(m.content) && m.content.every((b) => b.type === 'tool_result')),
  );
  const loop = messages.slice(wrote + 1).filter((m) => m.role === 'assistant');
  const blocks = (m: (typeof loop)[number] | undefined) => (Array.isArray(m?.content) ? m.content : []);
  const first = blocks(loop[0])[0]?.type ?? 'text';
  if (loop.some((m) => blocks(m).some((b) => b.type === 'tool_use')) && !first.includes('thinking')) {
    return `messages.${messages.indexOf(loop[0] as never)}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
  }
  return null;
}

/** `fields`: fields a newer API knows besides these (a future field a test sends through). */
export function gatekeeper(apiKey: string, fields: string[] = []): Gatekeeper {
  const known = new Set([...FIELDS, ...fields]);
  const bad = (message: string) => errorReply(400, message);
  return (request) => {
    // The Messages API takes a query (Claude Code's ?beta=true) and ignores what it does not use.
    if (request.method !== 'POST' || request.path.split('?')[0] !== '/v1/messages') {
      return errorReply(404, `${request.method} ${request.path}: not found`);
    }
    if (request.headers['x-api-key'] !== apiKey) return errorReply(401, 'invalid x-api-key');
    if (!request.headers['anthropic-version']) return bad('anthropic-version: header is required');
    const body = request.body as Record<string, unknown> & {
      messages?: { role: string; content: string | WireBlock[] }[];
    };
    for (const key of Object.keys(body))
      if (!known.has(key)) return bad(`${key}: Extra inputs are not permitted`);
    if (typeof body.max_tokens !== 'number') return bad('max_tokens: Field required');
    if (typeof body.temperature === 'number' && body.temperature > 1) {
      return bad('temperature: Input should be less than or equal to 1');
    }
    // Current models take system messages in the conversation: the turns around them alternate.
    const messages = (body.messages ?? []).filter((m) => m.role !== 'system');
    const thinking = thinkingProblem(body, messages);
    if (thinking) return bad(thinking);
    for (const [i, m] of messages.entries()) {
      if (m.role !== 'user' && m.role !== 'assistant') {
        return bad(
          `messages: Unexpected role "${m.role}". The Messages API accepts a top-level \`system\` parameter, not "system" as an input message role.`,
        );
      }
      if (m.content.length === 0 && i < messages.length - 1) {
        return bad(
          `messages.${i}: all messages must have non-empty content except for the optional final assistant message`,
        );
      }
      if (i > 0 && m.role === messages[i - 1]?.role) {
        return bad(`messages.${i}: roles must alternate between "user" and "assistant"`);
      }
      const previous = messages[i - 1]?.content;
      const toolUses = new Set(
        Array.isArray(previous) ? previous.filter((b) => b.type === 'tool_use').map((b) => b.id) : [],
      );
      for (const block of Array.isArray(m.content) ? m.content : []) {
        if (block.type === 'tool_result' && !toolUses.has(block.tool_use_id)) {
          return bad(
            `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
        }
      }
    }
    return null;
  };
}

export async function startAnthropicEmulator(apiKey = 'sk-ant-test', fields: string[] = []) {
  const upstream = await startUpstream(gatekeeper(apiKey, fields));
  return { upstream, baseUrl: upstream.url, apiKey };
}
