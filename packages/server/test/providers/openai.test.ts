/**
 * The OpenAI adapter against a local server speaking api.openai.com's chat-completions format:
 * the exact JSON it sends, and what it makes of plain, streamed, tool-calling, structured and
 * refused answers.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, ChatParams, ToolDefinition } from '../../src/providers/types.ts';
import { adapterFrom, complete, failureOf, foldDeltas, stream } from '../support/emulators/adapters.ts';
import { completion, errorReply, startOpenAIEmulator, streamReply } from '../support/emulators/openai.ts';
import { expectRepliesUsed, type Upstream } from '../support/emulators/upstream.ts';

const weatherTool: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

let upstream: Upstream;
let adapter: ReturnType<typeof adapterFrom>;

beforeAll(async () => {
  const emulator = await startOpenAIEmulator('openai', 'sk-test');
  upstream = emulator.upstream;
  adapter = adapterFrom('openai', { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: emulator.baseUrl });
});
expectRepliesUsed(() => upstream);

describe('a plain answer', () => {
  it('sends the request in OpenAI shape with a bearer key and reads content, finish reason and usage', async () => {
    const answer = completion('openai', {
      content: 'Paris.',
      usage: { prompt: 1200, completion: 3, cached: 1024, reasoning: 0 },
    });
    upstream.reply({ type: 'json', body: answer });
    const params: ChatParams = {
      messages: [
        { role: 'system', content: 'Answer in one word.' },
        { role: 'user', content: 'Capital of France?' },
      ],
      temperature: 0.2,
      maxTokens: 64,
      topP: 0.9,
      stop: ['\n\n'],
      seed: 7,
    };

    const result = await complete(adapter, 'gpt-4o-mini', params);

    const sent = upstream.last();
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Answer in one word.' },
        { role: 'user', content: 'Capital of France?' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 64,
      stop: ['\n\n'],
      seed: 7,
    });
    expect(result).toEqual({
      content: 'Paris.',
      toolCalls: [],
      finishReason: 'stop',
      usage: { promptTokens: 1200, completionTokens: 3, cachedTokens: 1024 },
      providerRequest: sent.body,
      providerResponse: answer,
    });
  });

  it('reports reasoning tokens and a length stop', async () => {
    upstream.reply({
      type: 'json',
      body: completion('openai', {
        content: 'The answer is',
        finishReason: 'length',
        usage: { prompt: 30, completion: 80, reasoning: 64 },
      }),
    });
    const result = await complete(adapter, 'gpt-4o-mini', {
      messages: [{ role: 'user', content: 'Think.' }],
    });
    expect(result.finishReason).toBe('length');
    expect(result.usage).toEqual({ promptTokens: 30, completionTokens: 80, reasoningTokens: 64 });
  });
});

describe('a streamed answer', () => {
  it('hands over each delta in order and assembles the answer with its usage', async () => {
    upstream.reply(
      streamReply('openai', {
        content: ['Hel', 'lo', ', wor', 'ld!'],
        usage: { prompt: 11, completion: 4, cached: 0 },
      }),
    );
    const { completion: result, deltas } = await stream(adapter, 'gpt-4o-mini', {
      messages: [{ role: 'user', content: 'Say hello' }],
      maxTokens: 20,
    });

    expect(upstream.last().body).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
      max_completion_tokens: 20,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(upstream.last().headers.accept).toBe('text/event-stream');
    expect(deltas).toEqual([{ content: 'Hel' }, { content: 'lo' }, { content: ', wor' }, { content: 'ld!' }]);
    expect(result.content).toBe('Hello, world!');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toEqual({ promptTokens: 11, completionTokens: 4 });
    expect(result.providerRequest).toEqual(upstream.last().body);
    expect(result.providerResponse).toMatchObject({
      id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hello, world!' }, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
    });
    expect(
      (result.providerResponse as { choices: { message: Record<string, unknown> }[] }).choices[0]?.message,
    ).not.toHaveProperty('tool_calls');
  });
});

describe('tool calls', () => {
  it('returns a called tool with its arguments as JSON text', async () => {
    upstream.reply({
      type: 'json',
      body: completion('openai', {
        toolCalls: [
          { id: 'call_DdmNJw2dPaGhBkqr1bkZ0Iak', name: 'get_weather', arguments: '{"city":"Boston"}' },
        ],
      }),
    });
    const result = await complete(adapter, 'gpt-4o-mini', {
      messages: [{ role: 'user', content: 'Weather in Boston?' }],
      tools: [weatherTool],
      toolChoice: 'required',
    });

    expect(upstream.last().body).toMatchObject({ tools: [weatherTool], tool_choice: 'required' });
    expect(result.content).toBeNull();
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toEqual([
      {
        id: 'call_DdmNJw2dPaGhBkqr1bkZ0Iak',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Boston"}' },
      },
    ]);
  });

  it('assembles streamed calls from argument fragments, one delta per fragment', async () => {
    upstream.reply(
      streamReply('openai', {
        toolCalls: [
          { id: 'call_a1', name: 'get_weather', argumentParts: ['{"ci', 'ty":', '"Bos', 'ton"}'] },
          { id: 'call_b2', name: 'get_weather', argumentParts: ['{"city":', '"Paris"}'] },
        ],
      }),
    );
    const { completion: result, deltas } = await stream(adapter, 'gpt-4o-mini', {
      messages: [{ role: 'user', content: 'Weather in Boston and Paris?' }],
      tools: [weatherTool],
    });

    expect(deltas[0]).toEqual({ toolCalls: [{ index: 0, id: 'call_a1', name: 'get_weather' }] });
    expect(deltas[1]).toEqual({ toolCalls: [{ index: 0, arguments: '{"ci' }] });
    expect(foldDeltas(deltas).calls).toEqual([
      { id: 'call_a1', name: 'get_weather', arguments: '{"city":"Boston"}' },
      { id: 'call_b2', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.content).toBeNull();
    expect(result.toolCalls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['call_a1', 'get_weather', { city: 'Boston' }],
      ['call_b2', 'get_weather', { city: 'Paris' }],
    ]);
    expect(result.usage).toEqual({ promptTokens: 19, completionTokens: 10 });
  });

  it('sends the assistant tool calls and the tool results back as OpenAI messages', async () => {
    upstream.reply({ type: 'json', body: completion('openai', { content: 'It is 18°C in Boston.' }) });
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Weather in Boston?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_a1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Boston"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a1', content: '{"celsius":18}' },
    ];
    const result = await complete(adapter, 'gpt-4o-mini', { messages, tools: [weatherTool] });

    expect(upstream.last().body.messages).toEqual(messages);
    expect(result.content).toBe('It is 18°C in Boston.');
  });
});

describe('structured output', () => {
  it('passes a json_schema response format natively', async () => {
    const responseFormat = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'city',
        strict: true,
        schema: {
          type: 'object',
          properties: { name: { type: 'string' } },
          required: ['name'],
          additionalProperties: false,
        },
      },
    };
    upstream.reply({ type: 'json', body: completion('openai', { content: '{"name":"Paris"}' }) });
    const result = await complete(adapter, 'gpt-4o-mini', {
      messages: [{ role: 'user', content: 'Capital of France?' }],
      responseFormat,
    });
    expect(upstream.last().body.response_format).toEqual(responseFormat);
    expect(result.content).toBe('{"name":"Paris"}');
  });
});

describe('content policy', () => {
  it('turns a refusal into a content-policy error that no fallback would fix', async () => {
    upstream.reply({
      type: 'json',
      body: completion('openai', { content: null, refusal: "I'm sorry, I cannot assist with that request." }),
    });
    const error = await failureOf(
      complete(adapter, 'gpt-4o-mini', { messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(error).toMatchObject({ kind: 'content_policy', retryable: false });
    expect(error.message).toContain('I cannot assist');
  });

  it('turns a streamed refusal into a content-policy error', async () => {
    upstream.reply(streamReply('openai', { refusal: ["I'm sorry, ", 'I cannot assist with that.'] }));
    const error = await failureOf(
      stream(adapter, 'gpt-4o-mini', { messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(error).toMatchObject({ kind: 'content_policy', retryable: false });
    expect(error.message).toContain('I cannot assist with that.');
  });

  it('reads a 400 content_policy_violation as content policy, not as a bad request', async () => {
    upstream.reply(
      errorReply(
        'openai',
        400,
        'Your request was rejected as a result of our safety system.',
        'content_policy_violation',
      ),
    );
    const error = await failureOf(
      complete(adapter, 'gpt-4o-mini', { messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(error).toMatchObject({ kind: 'content_policy', status: 400, retryable: false });
  });

  it('reads a content_filter stop as a filtered answer', async () => {
    upstream.reply({
      type: 'json',
      body: completion('openai', { content: '', finishReason: 'content_filter' }),
    });
    const result = await complete(adapter, 'gpt-4o-mini', { messages: [{ role: 'user', content: 'x' }] });
    expect(result.finishReason).toBe('content_filter');
  });
});
