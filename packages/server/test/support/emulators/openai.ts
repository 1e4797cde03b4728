/**
 * OpenAI's chat-completions wire format, and the dialects of it that Mistral and Groq speak.
 * Shapes follow the providers' API references: `chat.completion` objects, `chat.completion.chunk`
 * streams with tool-call argument fragments, the usage chunk `stream_options.include_usage` asks
 * for (Groq also puts usage in `x_groq`; Mistral always sends it on its last chunk), `[DONE]`,
 * and each provider's error bodies.
 */
import { type Gatekeeper, type RecordedRequest, type Reply, sseFrame, startUpstream } from './upstream.ts';

export type Flavor = 'openai' | 'mistral' | 'groq';

export type WireUsage = { prompt: number; completion: number; cached?: number; reasoning?: number };
export type WireToolCall = { id: string; name: string; arguments: string };

export type Answer = {
  content?: string | null;
  toolCalls?: WireToolCall[];
  refusal?: string;
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'model_length';
  usage?: WireUsage;
  model?: string;
};

const CREATED = 1_741_569_952;

function usageBody(flavor: Flavor, u: WireUsage) {
  const base = {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
  };
  if (flavor === 'mistral') return base;
  return {
    ...base,
    prompt_tokens_details: { cached_tokens: u.cached ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: u.reasoning ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function idOf(flavor: Flavor) {
  return flavor === 'mistral'
    ? 'cmpl-e5cc70bb28c444948073e77776eb30ef'
    : 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT';
}

function wireToolCall(flavor: Flavor, call: WireToolCall, index: number) {
  // Mistral numbers its calls and leaves out `type`.
  return flavor === 'mistral'
    ? { id: call.id, function: { name: call.name, arguments: call.arguments }, index }
    : { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

/** A non-streamed `chat.completion`. */
export function completion(flavor: Flavor, a: Answer) {
  const toolCalls = a.toolCalls ?? [];
  const message = {
    role: 'assistant',
    content: a.content === undefined ? (toolCalls.length > 0 ? null : 'Hello!') : a.content,
    ...(flavor === 'openai' && { refusal: a.refusal ?? null, annotations: [] }),
    ...(toolCalls.length > 0 && { tool_calls: toolCalls.map((c, i) => wireToolCall(flavor, c, i)) }),
    ...(flavor === 'mistral' && toolCalls.length === 0 && { tool_calls: null, prefix: false }),
  };
  return {
    id: idOf(flavor),
    object: 'chat.completion',
    created: CREATED,
    model: a.model ?? 'gpt-4o-mini-2024-07-18',
    choices: [
      {
        index: 0,
        message,
        ...(flavor !== 'mistral' && { logprobs: null }),
        finish_reason: a.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage: usageBody(flavor, a.usage ?? { prompt: 19, completion: 10 }),
    ...(flavor === 'openai' && { service_tier: 'default', system_fingerprint: 'fp_06737a9306' }),
    ...(flavor === 'groq' && {
      system_fingerprint: 'fp_179b0f92c9',
      x_groq: { id: 'req_01hy8ppkajfqk987jv2vx88m9r' },
    }),
  };
}

export type StreamAnswer = {
  /** Content fragments, one chunk each. */
  content?: string[];
  /** Refusal fragments (OpenAI streams a refusal in `delta.refusal`). */
  refusal?: string[];
  /** Each call with its arguments in fragments; the first chunk of a call carries id and name. */
  toolCalls?: { id: string; name: string; argumentParts: string[] }[];
  finishReason?: string;
  usage?: WireUsage;
  model?: string;
};

/** The SSE frames of a streamed answer, ending in `[DONE]`; `request` decides the usage chunk. */
export function chunkFrames(flavor: Flavor, request: RecordedRequest, a: StreamAnswer): string[] {
  const model = a.model ?? request.body?.model ?? 'gpt-4o-mini';
  const includeUsage = request.body?.stream_options?.include_usage === true;
  const usage = a.usage ?? { prompt: 19, completion: 10 };
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id: idOf(flavor),
    object: 'chat.completion.chunk',
    created: CREATED,
    model,
    ...(flavor !== 'mistral' && { system_fingerprint: 'fp_06737a9306' }),
    choices,
    // With include_usage, OpenAI puts `usage: null` on every chunk but the last.
    ...(includeUsage && flavor === 'openai' && { usage: null }),
    ...extra,
  });
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta,
    ...(flavor !== 'mistral' && { logprobs: null }),
    finish_reason: finish,
  });
  const frames: unknown[] = [];
  const first: Record<string, unknown> = { role: 'assistant', content: '' };
  if (flavor === 'openai') first.refusal = null;
  frames.push(
    chunk([choice(first)], flavor === 'groq' ? { x_groq: { id: 'req_01jt0xby4ffanamrs6m40mv0fy' } } : {}),
  );
  for (const text of a.content ?? []) frames.push(chunk([choice({ content: text })]));
  for (const text of a.refusal ?? []) frames.push(chunk([choice({ refusal: text })]));
  (a.toolCalls ?? []).forEach((call, index) => {
    if (flavor === 'mistral') {
      // Mistral sends each call whole, in one delta.
      const args = call.argumentParts.join('');
      frames.push(
        chunk([choice({ tool_calls: [wireToolCall('mistral', { ...call, arguments: args }, index)] })]),
      );
      return;
    }
    frames.push(
      chunk([
        choice({
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        }),
      ]),
    );
    for (const part of call.argumentParts) {
      frames.push(chunk([choice({ tool_calls: [{ index, function: { arguments: part } }] })]));
    }
  });
  const finish = a.finishReason ?? ((a.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
  const usageJson = usageBody(flavor, usage);
  if (flavor === 'mistral') frames.push(chunk([choice({ content: '' }, finish)], { usage: usageJson }));
  else if (flavor === 'groq') {
    frames.push(
      chunk([choice({}, finish)], {
        x_groq: {
          id: 'req_01jt0xby4ffanamrs6m40mv0fy',
          usage: {
            queue_time: 0.075,
            prompt_time: 0.006,
            completion_time: 0.022,
            total_time: 0.028,
            ...usageJson,
          },
        },
      }),
    );
  } else frames.push(chunk([choice({}, finish)]));
  if (includeUsage && flavor !== 'mistral') frames.push({ ...chunk([]), usage: usageJson });
  return [...frames.map((f) => sseFrame(f)), sseFrame('[DONE]')];
}

export function streamReply(flavor: Flavor, a: StreamAnswer, cut?: (frames: string[]) => string[]) {
  return (request: RecordedRequest): Reply => {
    const frames = chunkFrames(flavor, request, a);
    return { type: 'sse', frames: cut ? cut(frames) : frames };
  };
}

/** An error answer in the provider's own shape. */
export function errorReply(
  flavor: Flavor,
  status: number,
  message: string,
  code: string | null = null,
): Reply {
  if (flavor === 'mistral') {
    return {
      type: 'json',
      status,
      body: {
        object: 'error',
        message,
        type: status === 429 ? 'rate_limited' : 'invalid_request_error',
        param: null,
        code,
      },
    };
  }
  const type =
    status === 429
      ? 'rate_limit_exceeded'
      : status >= 500
        ? 'server_error'
        : status === 401
          ? 'invalid_request_error'
          : 'invalid_request_error';
  return { type: 'json', status, body: { error: { message, type, param: null, code } } };
}

const OPENAI_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const MISTRAL_ROLES = new Set(['system', 'user', 'assistant', 'tool']);
/** Mistral's request model forbids extra fields: anything else is a 422. */
const MISTRAL_FIELDS = new Set([
  'model',
  'messages',
  'temperature',
  'top_p',
  'max_tokens',
  'stream',
  'stop',
  'random_seed',
  'response_format',
  'tools',
  'tool_choice',
  'presence_penalty',
  'frequency_penalty',
  'n',
  'prediction',
  'parallel_tool_calls',
  'prompt_mode',
  'safe_prompt',
]);

function mistralExtraForbidden(loc: (string | number)[], input: unknown): Reply {
  return {
    type: 'json',
    status: 422,
    body: {
      object: 'error',
      message: {
        detail: [
          { type: 'extra_forbidden', loc: ['body', ...loc], msg: 'Extra inputs are not permitted', input },
        ],
      },
      type: 'invalid_request_error',
      param: null,
      code: null,
    },
  };
}

/** What the real endpoint checks before it answers: the path, the key, and the request's shape. */
export function gatekeeper(flavor: Flavor, apiKey: string, path: string): Gatekeeper {
  return (request) => {
    // OpenAI serves its Responses API beside chat completions, with a body of its own.
    const responses = flavor === 'openai' && request.path === '/v1/responses';
    if (request.method !== 'POST' || (request.path !== path && !responses)) {
      return errorReply(flavor, 404, `Invalid URL (${request.method} ${request.path})`);
    }
    if (request.headers.authorization !== `Bearer ${apiKey}`) {
      return flavor === 'mistral'
        ? { type: 'json', status: 401, body: { message: 'Unauthorized', request_id: 'b2c4e0c1' } }
        : errorReply(flavor, 401, 'Incorrect API key provided: sk-wrong.', 'invalid_api_key');
    }
    const body = request.body as Record<string, unknown> & { messages?: { role: string; name?: string }[] };
    if (responses) return null;
    if (flavor === 'mistral') {
      for (const key of Object.keys(body)) {
        if (!MISTRAL_FIELDS.has(key)) return mistralExtraForbidden([key], body[key]);
      }
    }
    if (flavor === 'openai' && body.stream_options && body.stream !== true) {
      return errorReply(
        flavor,
        400,
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      );
    }
    if (flavor === 'mistral') {
      // Mistral checks every tool call id in the conversation, its own or not.
      const messages = (body.messages ?? []) as {
        tool_call_id?: string;
        tool_calls?: { id?: string }[];
      }[];
      const ids = messages.flatMap((m) => [
        ...(m.tool_call_id !== undefined ? [m.tool_call_id] : []),
        ...(m.tool_calls ?? []).map((c) => c.id ?? ''),
      ]);
      const bad = ids.find((id) => !/^[a-zA-Z0-9]{9}$/.test(id));
      if (bad !== undefined) {
        return {
          type: 'json',
          status: 400,
          body: {
            object: 'error',
            message: `Tool call id was ${bad} but must be a-z, A-Z, 0-9, with a length of 9.`,
            type: 'invalid_request_error',
            param: null,
            code: null,
          },
        };
      }
    }
    const roles = flavor === 'mistral' ? MISTRAL_ROLES : OPENAI_ROLES;
    for (const [i, m] of (body.messages ?? []).entries()) {
      if (!roles.has(m.role)) {
        return flavor === 'mistral'
          ? {
              type: 'json',
              status: 422,
              body: {
                object: 'error',
                message: {
                  detail: [
                    {
                      type: 'union_tag_invalid',
                      loc: ['body', 'messages', i],
                      msg: `Input tag '${m.role}' found using 'role' does not match any of the expected tags`,
                    },
                  ],
                },
                type: 'invalid_request_error',
                param: null,
                code: null,
              },
            }
          : errorReply(
              flavor,
              400,
              `Invalid value: '${m.role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
              'invalid_value',
            );
      }
      if (flavor === 'mistral' && m.role !== 'tool' && 'name' in m)
        return mistralExtraForbidden(['messages', i, m.role, 'name'], m.name);
    }
    return null;
  };
}

/** The OpenAI-shaped emulator for one flavor, mounted where that provider's base URL points. */
export async function startOpenAIEmulator(flavor: Flavor, apiKey = 'sk-test') {
  const path = {
    openai: '/v1/chat/completions',
    mistral: '/v1/chat/completions',
    groq: '/openai/v1/chat/completions',
  }[flavor];
  const upstream = await startUpstream(gatekeeper(flavor, apiKey, path));
  const baseUrl = { openai: `${upstream.url}/v1`, mistral: upstream.url, groq: `${upstream.url}/openai/v1` }[
    flavor
  ];
  return { upstream, baseUrl, apiKey };
}

/**
 * An output item of a Responses answer. `parts`: a stream sends the text (a message's, a call's
 * arguments or input, a reasoning summary's) in these deltas, then the whole of it in a `.done` event.
 */
export type ResponsesOutput =
  | { type: 'message'; text: string; parts?: string[] }
  | { type: 'function_call'; call_id: string; name: string; arguments: string; parts?: string[] }
  | { type: 'custom_tool_call'; call_id: string; name: string; input: string; parts?: string[] }
  | { type: 'reasoning'; summary: string; parts?: string[] }
  /** An item type the gateway has never seen. */
  | ({ type: string } & Record<string, unknown>);

/** A Responses API `response` object, as OpenAI answers it (status completed). */
export function responsesAnswer(a: { output: ResponsesOutput[]; usage?: WireUsage; model?: string }) {
  const usage = a.usage ?? { prompt: 19, completion: 10 };
  return {
    id: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
    object: 'response',
    created_at: CREATED,
    status: 'completed',
    model: a.model ?? 'gpt-4o-mini-2024-07-18',
    output: a.output.map(({ parts: _parts, ...item }, n) =>
      item.type === 'message'
        ? {
            id: `msg_${n}`,
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: item.text, annotations: [] }],
          }
        : item.type === 'reasoning'
          ? { id: `rs_${n}`, type: 'reasoning', summary: [{ type: 'summary_text', text: item.summary }] }
          : { id: `item_${n}`, status: 'completed', ...item },
    ),
    usage: {
      input_tokens: usage.prompt,
      input_tokens_details: { cached_tokens: usage.cached ?? 0 },
      output_tokens: usage.completion,
      output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
      total_tokens: usage.prompt + usage.completion,
    },
  };
}

/**
 * A streamed Responses answer: response.created, each output item added and done (a message's
 * text in one delta), any `extra` events (types the gateway has never seen), response.completed.
 */
export function responsesFrames(a: Parameters<typeof responsesAnswer>[0], extra: unknown[] = []): string[] {
  const response = responsesAnswer(a);
  let sequence = 0;
  const frame = (data: Record<string, unknown>) =>
    sseFrame({ ...data, sequence_number: sequence++ }, data.type as string);
  const frames = [
    frame({ type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }),
  ];
  response.output.forEach((item, output_index) => {
    frames.push(frame({ type: 'response.output_item.added', output_index, item }));
    const parts = a.output[output_index]?.parts as string[] | undefined;
    const item_id = item.id;
    if (item.type === 'message') {
      const text = (item as { content: { text: string }[] }).content[0]?.text ?? '';
      for (const delta of parts ?? [text]) {
        frames.push(
          frame({ type: 'response.output_text.delta', item_id, output_index, content_index: 0, delta }),
        );
      }
      if (parts) {
        frames.push(
          frame({ type: 'response.output_text.done', item_id, output_index, content_index: 0, text }),
        );
      }
    } else if (item.type === 'function_call' && parts) {
      for (const delta of parts) {
        frames.push(frame({ type: 'response.function_call_arguments.delta', item_id, output_index, delta }));
      }
      const args = (item as { arguments: string }).arguments;
      frames.push(
        frame({ type: 'response.function_call_arguments.done', item_id, output_index, arguments: args }),
      );
    } else if (item.type === 'custom_tool_call' && parts) {
      for (const delta of parts) {
        frames.push(frame({ type: 'response.custom_tool_call_input.delta', item_id, output_index, delta }));
      }
      const input = (item as { input: string }).input;
      frames.push(frame({ type: 'response.custom_tool_call_input.done', item_id, output_index, input }));
    } else if (item.type === 'reasoning' && parts) {
      const summary = { item_id, output_index, summary_index: 0 };
      for (const delta of parts) {
        frames.push(frame({ type: 'response.reasoning_summary_text.delta', ...summary, delta }));
      }
      const text = parts.join('');
      frames.push(frame({ type: 'response.reasoning_summary_text.done', ...summary, text }));
    }
    frames.push(frame({ type: 'response.output_item.done', output_index, item }));
  });
  for (const event of extra) frames.push(frame(event as Record<string, unknown>));
  frames.push(frame({ type: 'response.completed', response }));
  return frames;
}
