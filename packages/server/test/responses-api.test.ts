/**
 * POST /v1/responses, OpenAI's Responses API without stored state, through gates on the mock
 * provider and on a local server speaking OpenAI's chat-completions format: the response object
 * (message and function_call items, usage, incomplete on a length cut), the typed events of a
 * stream, OpenAI-shaped 400s for what needs state or built-in tools, and a log entry per request.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { logEntriesOf, logEntryOf, type OpenAIError } from './support/chat.ts';
import { completion, startOpenAIEmulator, streamReply } from './support/emulators/openai.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const openai = await startOpenAIEmulator('openai', 'sk-openai-upstream');
// DeepSeek speaks chat completions only: a Responses request reaches it translated.
const app = useTestApp({
  OPENAI_API_KEY: openai.apiKey,
  OPENAI_BASE_URL: openai.baseUrl,
  DEEPSEEK_API_KEY: openai.apiKey,
  DEEPSEEK_BASE_URL: openai.baseUrl,
});
afterAll(() => openai.upstream.close());
beforeEach(() => openai.upstream.reset());

type OutputItem = { type: string; id: string; status: string } & Record<string, unknown>;
type ResponseObject = {
  id: string;
  object: 'response';
  status: string;
  model: string;
  output: OutputItem[];
  incomplete_details: { reason: string } | null;
  instructions: string | null;
  store: boolean;
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
  };
};
type StreamEvent = { type: string; sequence_number: number } & Record<string, unknown>;

const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

function responses(user: TestUser, gateId: string | null, body: Record<string, unknown>) {
  return app.request('/v1/responses', {
    method: 'POST',
    headers: { ...user.auth, ...(gateId && { 'x-gatehouse-gate-id': gateId }) },
    json: { model: 'mock/echo', ...body },
  });
}

async function responseOf(res: Response): Promise<ResponseObject> {
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as ResponseObject;
}

async function errorOf(res: Response, status = 400): Promise<OpenAIError['error']> {
  expect(res.status, await res.clone().text()).toBe(status);
  return ((await res.json()) as OpenAIError).error;
}

/** The events of a stream: each frame's `event:` name must be its data's type. */
async function eventsOf(res: Response): Promise<StreamEvent[]> {
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const frames = (await res.text()).split('\n\n').filter((f) => f.trim() !== '');
  return frames.map((frame) => {
    const lines = frame.split('\n');
    const name = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length);
    const data = JSON.parse(lines.find((l) => l.startsWith('data: '))?.slice('data: '.length) ?? '');
    expect(data.type).toBe(name);
    return data as StreamEvent;
  });
}

const textOf = (r: ResponseObject) =>
  r.output
    .filter((i) => i.type === 'message')
    .flatMap((i) => i.content as { text: string }[])
    .map((p) => p.text)
    .join('');

async function setUp(settings: Record<string, unknown> = {}) {
  const user = await signUpUser(app);
  const gate = await createGate(app, user, settings);
  return { user, gate };
}

describe('POST /v1/responses answers a response object', () => {
  it('answers a string input, and logs the request as /v1/responses', async () => {
    const { user, gate } = await setUp();
    const res = await responses(user, gate.id, { input: 'hello there' });
    const body = await responseOf(res);
    const requestId = res.headers.get('x-gatehouse-request-id');
    expect(body).toMatchObject({
      id: `resp_${requestId}`,
      object: 'response',
      status: 'completed',
      model: 'mock/echo',
      incomplete_details: null,
      error: null,
      previous_response_id: null,
      store: false,
      output: [
        {
          type: 'message',
          id: `msg_${requestId}`,
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Echo: hello there', annotations: [] }],
        },
      ],
    });
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    expect(body.usage.output_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.input_tokens + body.usage.output_tokens);
    expect(body.usage.input_tokens_details).toEqual({ cached_tokens: 0 });
    expect(body.usage.output_tokens_details).toEqual({ reasoning_tokens: 0 });

    const entry = await logEntryOf(app, requestId);
    expect(entry).toMatchObject({ endpoint: '/v1/responses', gateId: gate.id, success: true, stream: false });
    expect(entry.promptTokens).toBe(body.usage.input_tokens);
  });

  it('takes the gate as its UUID in model, and passes instructions as a system message after the gate’s', async () => {
    const { user, gate } = await setUp({ systemPrompt: 'Gate rules.' });
    const res = await responses(user, null, {
      model: gate.id,
      instructions: 'Be terse.',
      input: [
        { role: 'developer', content: 'Answer in English.' },
        { role: 'user', content: [{ type: 'input_text', text: 'first question' }] },
        {
          type: 'message',
          role: 'assistant',
          id: 'msg_earlier',
          status: 'completed',
          content: [{ type: 'output_text', text: 'first answer', annotations: [] }],
        },
        { type: 'message', role: 'user', content: 'second question' },
      ],
      // Harmless fields the SDK may send are accepted.
      metadata: { ticket: 'T-1' },
      user: 'end-user-1',
      parallel_tool_calls: true,
      truncation: 'disabled',
      reasoning: { effort: 'low' },
      include: ['message.output_text.logprobs'],
      store: false,
    });
    const body = await responseOf(res);
    expect(textOf(body)).toBe('Echo: second question');
    expect(body.instructions).toBe('Be terse.');
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect((entry.providerRequest as { messages: unknown }).messages).toEqual([
      { role: 'system', content: 'Gate rules.' },
      { role: 'system', content: 'Be terse.' },
      { role: 'developer', content: 'Answer in English.' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
    ]);
    expect(entry.metadata).toEqual({ ticket: 'T-1' });
  });

  it('calls a function tool, and answers once the function’s output comes back as items', async () => {
    const { user, gate } = await setUp();
    const ask = { role: 'user', content: '[mock:tool=get_weather] weather in Paris?' };
    const first = await responseOf(
      await responses(user, gate.id, { input: [ask], tools: [WEATHER], tool_choice: 'auto' }),
    );
    expect(first.status).toBe('completed');
    expect(first.output).toHaveLength(1);
    const call = first.output[0] as OutputItem;
    expect(call).toMatchObject({
      type: 'function_call',
      status: 'completed',
      call_id: 'call_mock_0',
      name: 'get_weather',
    });
    expect(call.id).toMatch(/^fc_/);
    expect(JSON.parse(call.arguments as string)).toEqual({ city: 'mock' });

    const res = await responses(user, gate.id, {
      input: [ask, ...first.output, { type: 'function_call_output', call_id: 'call_mock_0', output: '18°C' }],
      tools: [WEATHER],
    });
    const second = await responseOf(res);
    expect(second.output.map((i) => i.type)).toEqual(['message']);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    const sent = entry.providerRequest as { messages: unknown[]; tools: unknown[] };
    expect(sent.messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_mock_0',
            type: 'function',
            function: call && { name: 'get_weather', arguments: call.arguments },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_mock_0', content: '18°C' },
    ]);
    expect(sent.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: WEATHER.description,
          parameters: WEATHER.parameters,
          strict: true,
        },
      },
    ]);
    expect(entry.toolResults).toEqual([{ tool_call_id: 'call_mock_0', content: '18°C' }]);
  });

  it('maps text.format json_schema (and json_object) to structured output', async () => {
    const { user, gate } = await setUp();
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, temperature: { type: 'number' } },
      required: ['city', 'temperature'],
      additionalProperties: false,
    };
    const res = await responses(user, gate.id, {
      input: 'weather as JSON',
      text: { format: { type: 'json_schema', name: 'weather', schema, strict: true } },
    });
    const body = await responseOf(res);
    expect(JSON.parse(textOf(body))).toEqual({ city: 'mock', temperature: 1 });
    expect((body as unknown as { text: unknown }).text).toEqual({
      format: { type: 'json_schema', name: 'weather', schema, strict: true },
    });
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect((entry.providerRequest as { responseFormat: unknown }).responseFormat).toEqual({
      type: 'json_schema',
      json_schema: { name: 'weather', schema, strict: true },
    });

    const json = await responseOf(
      await responses(user, gate.id, { input: 'any JSON', text: { format: { type: 'json_object' } } }),
    );
    expect(JSON.parse(textOf(json))).toEqual({ echo: 'any JSON' });
  });
});

describe('POST /v1/responses streams typed events', () => {
  it('streams text as created, in_progress, the item’s events and completed, numbered in order', async () => {
    const { user, gate } = await setUp();
    const res = await responses(user, gate.id, { input: 'stream these few words', stream: true });
    const requestId = res.headers.get('x-gatehouse-request-id');
    const events = await eventsOf(res);
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...deltas.map(() => 'response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));

    const created = events[0] as StreamEvent & { response: ResponseObject };
    expect(created.response).toMatchObject({ id: `resp_${requestId}`, status: 'in_progress', output: [] });
    const text = deltas.map((d) => d.delta).join('');
    expect(text).toBe('Echo: stream these few words');
    for (const d of deltas) {
      expect(d).toMatchObject({ item_id: `msg_${requestId}`, output_index: 0, content_index: 0 });
    }
    expect(events.find((e) => e.type === 'response.output_text.done')?.text).toBe(text);
    const done = events.at(-1) as StreamEvent & { response: ResponseObject };
    expect(done.response).toMatchObject({ id: `resp_${requestId}`, status: 'completed', model: 'mock/echo' });
    expect(textOf(done.response)).toBe(text);
    expect(done.response.usage.total_tokens).toBeGreaterThan(0);

    const entry = await logEntryOf(app, requestId);
    expect(entry).toMatchObject({ endpoint: '/v1/responses', success: true, stream: true });
  });

  it('streams a function call as its item, argument deltas and done', async () => {
    const { user, gate } = await setUp();
    const events = await eventsOf(
      await responses(user, gate.id, {
        input: '[mock:tool=get_weather] weather?',
        tools: [WEATHER],
        stream: true,
      }),
    );
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const added = events[2] as StreamEvent & { item: OutputItem };
    expect(added.item).toMatchObject({
      type: 'function_call',
      status: 'in_progress',
      call_id: 'call_mock_0',
      name: 'get_weather',
      arguments: '',
    });
    const done = events.at(-1) as StreamEvent & { response: ResponseObject };
    expect(done.response.output).toEqual([
      { ...added.item, status: 'completed', arguments: '{"city":"mock"}' },
    ]);
  });

  it('rejects a streamed bad request before streaming, in OpenAI’s error shape', async () => {
    const { user, gate } = await setUp();
    const error = await errorOf(
      await responses(user, gate.id, { input: 'hi', stream: true, previous_response_id: 'resp_1' }),
    );
    expect(error.param).toBe('previous_response_id');
  });
});

describe('POST /v1/responses refuses what needs state or OpenAI’s own tools', () => {
  it('answers 400 naming previous_response_id, store: true, background, conversation', async () => {
    const { user, gate } = await setUp();
    const cases: [Record<string, unknown>, string][] = [
      [{ previous_response_id: 'resp_abc' }, 'previous_response_id'],
      [{ store: true }, 'store'],
      [{ background: true }, 'background'],
      [{ conversation: 'conv_123' }, 'conversation'],
    ];
    for (const [extra, param] of cases) {
      const error = await errorOf(await responses(user, gate.id, { input: 'hi', ...extra }));
      expect(error).toMatchObject({ type: 'invalid_request_error', param, code: 'invalid_request' });
      expect(error.message).toContain('keeps no responses');
    }
    // Nothing reached a model; each refusal is logged against the gate.
    const entries = await logEntriesOf(app, gate.id);
    expect(entries.map((e) => [e.endpoint, e.statusCode])).toEqual(cases.map(() => ['/v1/responses', 400]));
  });

  // Hosted tools and item types another family has no use for are left out and named (dropin-forward.test.ts).
  it('answers 400 naming the field for bad input, never 500', async () => {
    const { user, gate } = await setUp();
    const cases: [Record<string, unknown>, string, RegExp?][] = [
      [{ input: 'hi', tools: [{ type: 'function', name: 'bad name!', parameters: {} }] }, 'tools.0.name'],
      [{ input: 42 }, 'input'],
      [{}, 'input'],
      [{ input: [] }, 'input'],
      [
        { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] },
        'input.0.content.0.image_url',
      ],
      [{ input: [{ role: 'tool', content: 'x' }] }, 'input.0.role'],
      [{ input: [{ type: 'function_call_output', output: 'x' }] }, 'input.0.call_id'],
      [{ input: 'hi', text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name'],
      [{ input: 'hi', max_output_tokens: 0 }, 'max_output_tokens'],
      [{ input: 'hi', temperature: 3 }, 'temperature'],
    ];
    for (const [body, param, message] of cases) {
      const error = await errorOf(await responses(user, gate.id, body));
      expect(error.param, JSON.stringify(body)).toBe(param);
      if (message) expect(error.message).toMatch(message);
    }
    for (const raw of ['not json', '[]', 'null', '{"input": {"role": "user"}}']) {
      const res = await app.request('/v1/responses', {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id, 'content-type': 'application/json' },
        body: raw,
      });
      expect(res.status, raw).toBe(400);
      expect(((await res.json()) as OpenAIError).error.type).toBe('invalid_request_error');
    }
  });

  it('needs a gate and a key', async () => {
    const { user } = await setUp();
    const noGate = await errorOf(await responses(user, null, { input: 'hi' }));
    expect(noGate.param).toBe('gateId');
    const res = await app.request('/v1/responses', { method: 'POST', json: { model: 'x', input: 'hi' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as OpenAIError).error.type).toBe('authentication_error');
  });
});

describe('POST /v1/responses through a gate to a chat-completions upstream, translated', () => {
  const MODEL = 'deepseek/deepseek-chat';

  it('sends one chat request per response, with the round trip translated, and reports usage', async () => {
    const { user, gate } = await setUp({ model: MODEL, allowOverrides: true });
    const upstream = openai.upstream;
    upstream.reply(
      {
        type: 'json',
        body: completion('openai', {
          toolCalls: [{ id: 'call_abc123', name: 'get_weather', arguments: '{"city":"Paris"}' }],
          usage: { prompt: 40, completion: 12, cached: 8, reasoning: 3 },
        }),
      },
      { type: 'json', body: completion('openai', { content: 'It is 18°C in Paris.' }) },
    );
    const ask = { role: 'user', content: 'Weather in Paris?' };
    const first = await responseOf(
      await responses(user, gate.id, {
        model: gate.id,
        instructions: 'Use the tools.',
        input: [ask],
        tools: [WEATHER],
        tool_choice: { type: 'function', name: 'get_weather' },
        max_output_tokens: 300,
        temperature: 0.3,
      }),
    );
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.last().body).toMatchObject({
      model: 'deepseek-chat',
      messages: [
        { role: 'system', content: 'Use the tools.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: WEATHER.description,
            parameters: WEATHER.parameters,
            strict: true,
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      temperature: 0.3,
    });
    expect(first.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_abc123',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      }),
    ]);
    expect(first.usage).toEqual({
      input_tokens: 40,
      input_tokens_details: { cached_tokens: 8 },
      output_tokens: 12,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 52,
    });

    const second = await responseOf(
      await responses(user, gate.id, {
        model: gate.id,
        input: [
          ask,
          ...first.output,
          { type: 'function_call_output', call_id: 'call_abc123', output: '{"celsius":18}' },
        ],
        tools: [WEATHER],
      }),
    );
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.last().body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_abc123',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc123', content: '{"celsius":18}' },
    ]);
    expect(textOf(second)).toBe('It is 18°C in Paris.');
    expect(second.model).toBe(MODEL);

    const entries = await logEntriesOf(app, gate.id);
    expect(entries.map((e) => [e.endpoint, e.success])).toEqual([
      ['/v1/responses', true],
      ['/v1/responses', true],
    ]);
  });

  it('answers a length cut as incomplete, with max_output_tokens sent as the output cap', async () => {
    const { user, gate } = await setUp({ model: MODEL, allowOverrides: { maxTokens: true } });
    openai.upstream.reply({
      type: 'json',
      body: completion('openai', { content: 'The answer is cut', finishReason: 'length' }),
    });
    const body = await responseOf(
      await responses(user, gate.id, { input: 'a long essay', max_output_tokens: 16 }),
    );
    expect(openai.upstream.requests).toHaveLength(1);
    expect(openai.upstream.last().body).toMatchObject({ max_tokens: 16 });
    expect(body).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 16,
      output: [{ type: 'message', status: 'incomplete', content: [{ text: 'The answer is cut' }] }],
    });
  });

  it('streams text and a call’s argument fragments as the upstream sends them, once', async () => {
    const { user, gate } = await setUp({ model: MODEL });
    openai.upstream.reply(
      streamReply('openai', {
        content: ['Let me ', 'check.'],
        toolCalls: [{ id: 'call_s1', name: 'get_weather', argumentParts: ['{"city":', '"Oslo"', '}'] }],
        usage: { prompt: 30, completion: 9 },
      }),
    );
    const events = await eventsOf(
      await responses(user, gate.id, { input: 'Weather in Oslo?', tools: [WEATHER], stream: true }),
    );
    expect(openai.upstream.requests).toHaveLength(1);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const args = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    expect(args.map((e) => e.delta).join('')).toBe('{"city":"Oslo"}');
    expect(args.every((e) => e.output_index === 1)).toBe(true);
    expect(events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    });
    const done = events.at(-1) as StreamEvent & { response: ResponseObject };
    expect(done.response.output.map((i) => [i.type, i.status])).toEqual([
      ['message', 'completed'],
      ['function_call', 'completed'],
    ]);
    expect(textOf(done.response)).toBe('Let me check.');
    expect(done.response.output[1]).toMatchObject({ call_id: 'call_s1', arguments: '{"city":"Oslo"}' });
    expect(done.response.usage).toMatchObject({ input_tokens: 30, output_tokens: 9, total_tokens: 39 });
  });

  it('streams a length cut as response.incomplete', async () => {
    const { user, gate } = await setUp({ model: MODEL });
    openai.upstream.reply(streamReply('openai', { content: ['cut ', 'short'], finishReason: 'length' }));
    const events = await eventsOf(await responses(user, gate.id, { input: 'long', stream: true }));
    const last = events.at(-1) as StreamEvent & { response: ResponseObject };
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
  });

  it('ends a stream that breaks after its first byte with an error event', async () => {
    const { user, gate } = await setUp({ model: MODEL });
    openai.upstream.reply(
      streamReply('openai', { content: ['partial ', 'answer', ' never', ' ends'] }, (frames) =>
        frames.slice(0, 3),
      ),
    );
    const events = await eventsOf(await responses(user, gate.id, { input: 'hi', stream: true }));
    expect(openai.upstream.requests).toHaveLength(1);
    const last = events.at(-1) as StreamEvent;
    expect(last.type).toBe('error');
    expect(last).toMatchObject({ code: expect.any(String), message: expect.any(String), param: null });
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(['response.created', 'response.in_progress']);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.some((e) => e.type === 'response.completed')).toBe(false);
  });
});
