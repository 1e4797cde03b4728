/**
 * The Anthropic adapter against a local server speaking the Messages API: the system prompt on
 * top, max_tokens always set, tools and tool results as content blocks, the named SSE events of a
 * stream, and refusals.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { withInjectedFormat } from '../../src/dataplane/structured.ts';
import type { ChatParams, ToolDefinition } from '../../src/providers/types.ts';
import { adapterFrom, complete, failureOf, foldDeltas, stream } from '../support/emulators/adapters.ts';
import { errorFrame, message, startAnthropicEmulator, streamFrames } from '../support/emulators/anthropic.ts';
import { expectRepliesUsed, type Upstream } from '../support/emulators/upstream.ts';

const MODEL = 'claude-3-5-haiku-latest';

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
  const emulator = await startAnthropicEmulator('sk-ant-test');
  upstream = emulator.upstream;
  adapter = adapterFrom('anthropic', {
    ANTHROPIC_API_KEY: 'sk-ant-test',
    ANTHROPIC_BASE_URL: emulator.baseUrl,
  });
});
expectRepliesUsed(() => upstream);

describe('a plain answer', () => {
  it('puts the system prompt on top, sends the key and version headers, and reads usage with the cache', async () => {
    const answer = message({
      content: [{ type: 'text', text: 'Paris.' }],
      usage: { input: 20, output: 3, cacheRead: 1000, cacheCreation: 50 },
    });
    upstream.reply({ type: 'json', body: answer });
    const params: ChatParams = {
      messages: [
        { role: 'system', content: 'Answer in one word.' },
        { role: 'developer', content: 'Be exact.' },
        { role: 'user', content: 'Capital of France?' },
      ],
      temperature: 1.5,
      maxTokens: 64,
      stop: ['\n\n'],
    };

    const result = await complete(adapter, MODEL, params);

    const sent = upstream.last();
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: MODEL,
      system: 'Answer in one word.\n\nBe exact.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] }],
      max_tokens: 64,
      temperature: 1,
      stop_sequences: ['\n\n'],
    });
    expect(result).toEqual({
      content: 'Paris.',
      toolCalls: [],
      finishReason: 'stop',
      // Anthropic counts cached and cache-writing input apart from input_tokens.
      usage: { promptTokens: 1070, completionTokens: 3, cachedTokens: 1000, cacheWriteTokens: 50 },
      providerRequest: sent.body,
      providerResponse: answer,
    });
  });

  it('always sends max_tokens, which Anthropic requires, and reads max_tokens as a length stop', async () => {
    upstream.reply({ type: 'json', body: message({ stopReason: 'max_tokens' }) });
    const result = await complete(adapter, MODEL, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(upstream.last().body.max_tokens).toBe(4096);
    expect(result.finishReason).toBe('length');
  });
});

describe('a streamed answer', () => {
  it('hands over text deltas in order and assembles the message with its usage', async () => {
    upstream.reply({
      type: 'sse',
      frames: streamFrames({
        blocks: [{ type: 'text', parts: ['Hel', 'lo', ', world', '!'] }],
        usage: { input: 25, output: 6, cacheRead: 10 },
      }),
    });
    const { completion, deltas } = await stream(adapter, MODEL, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
    });

    expect(upstream.last().body).toMatchObject({ system: 'Be brief.', stream: true, max_tokens: 4096 });
    expect(upstream.last().headers.accept).toBe('text/event-stream');
    expect(deltas).toEqual([{ content: 'Hel' }, { content: 'lo' }, { content: ', world' }, { content: '!' }]);
    expect(completion.content).toBe('Hello, world!');
    expect(completion.finishReason).toBe('stop');
    expect(completion.usage).toEqual({ promptTokens: 35, completionTokens: 6, cachedTokens: 10 });
    expect(completion.providerResponse).toMatchObject({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello, world!' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 25, cache_read_input_tokens: 10, output_tokens: 6 },
    });
  });

  it('fails on an error event in the middle of the stream, retryable when Anthropic is overloaded', async () => {
    const frames = streamFrames({ blocks: [{ type: 'text', parts: ['Hel', 'lo'] }] });
    upstream.reply({
      type: 'sse',
      frames: [...frames.slice(0, 4), errorFrame('overloaded_error', 'Overloaded')],
    });
    const error = await failureOf(stream(adapter, MODEL, { messages: [{ role: 'user', content: 'Hi' }] }));
    expect(error).toMatchObject({ kind: 'http', status: 529, retryable: true });
    expect(error.message).toContain('Overloaded');
  });

  it('reads a rate-limit error event as a 429', async () => {
    upstream.reply({
      type: 'sse',
      frames: [
        errorFrame('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'),
      ],
    });
    const error = await failureOf(stream(adapter, MODEL, { messages: [{ role: 'user', content: 'Hi' }] }));
    expect(error).toMatchObject({ kind: 'http', status: 429, retryable: true });
  });
});

describe('tool calls', () => {
  it('translates tools and tool choice, and returns tool_use blocks as tool calls with JSON arguments', async () => {
    upstream.reply({
      type: 'json',
      body: message({
        content: [
          { type: 'text', text: 'Let me check.' },
          {
            type: 'tool_use',
            id: 'toolu_01A09q90qw90lq917835lq9',
            name: 'get_weather',
            input: { city: 'Boston' },
          },
        ],
      }),
    });
    const result = await complete(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Weather in Boston?' }],
      tools: [weatherTool],
      toolChoice: 'required',
    });

    expect(upstream.last().body).toMatchObject({
      tools: [
        {
          name: 'get_weather',
          description: 'Current weather in a city',
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ],
      tool_choice: { type: 'any' },
    });
    expect(result.content).toBe('Let me check.');
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toEqual([
      {
        id: 'toolu_01A09q90qw90lq917835lq9',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Boston"}' },
      },
    ]);
  });

  it('assembles streamed tool_use blocks from input_json_delta fragments', async () => {
    upstream.reply({
      type: 'sse',
      frames: streamFrames({
        blocks: [
          { type: 'text', parts: ['Checking.'] },
          {
            type: 'tool_use',
            id: 'toolu_01',
            name: 'get_weather',
            jsonParts: ['{"ci', 'ty": "Bos', 'ton"}'],
          },
          { type: 'tool_use', id: 'toolu_02', name: 'get_weather', jsonParts: ['{"city": ', '"Paris"}'] },
        ],
      }),
    });
    const { completion, deltas } = await stream(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Weather in Boston and Paris?' }],
      tools: [weatherTool],
    });

    expect(deltas[0]).toEqual({ content: 'Checking.' });
    expect(deltas[1]).toEqual({ toolCalls: [{ index: 0, id: 'toolu_01', name: 'get_weather' }] });
    const folded = foldDeltas(deltas);
    expect(folded.calls.map((c) => [c.id, c.name, JSON.parse(c.arguments)])).toEqual([
      ['toolu_01', 'get_weather', { city: 'Boston' }],
      ['toolu_02', 'get_weather', { city: 'Paris' }],
    ]);
    expect(completion.finishReason).toBe('tool_calls');
    expect(completion.toolCalls.map((c) => [c.id, JSON.parse(c.function.arguments)])).toEqual([
      ['toolu_01', { city: 'Boston' }],
      ['toolu_02', { city: 'Paris' }],
    ]);
    expect(completion.providerResponse).toMatchObject({
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Boston' } },
        { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: { city: 'Paris' } },
      ],
    });
  });

  it('sends assistant tool calls as tool_use blocks and tool results as one user turn of tool_result blocks', async () => {
    upstream.reply({ type: 'json', body: message({ content: [{ type: 'text', text: '18°C and 21°C.' }] }) });
    const result = await complete(adapter, MODEL, {
      messages: [
        { role: 'user', content: 'Weather in Boston and Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'toolu_01',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Boston"}' },
            },
            {
              id: 'toolu_02',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_01', content: '{"celsius":18}' },
        { role: 'tool', tool_call_id: 'toolu_02', content: '{"celsius":21}' },
      ],
      tools: [weatherTool],
    });

    expect(upstream.last().body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Boston and Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Boston' } },
          { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01', content: '{"celsius":18}' },
          { type: 'tool_result', tool_use_id: 'toolu_02', content: '{"celsius":21}' },
        ],
      },
    ]);
    expect(result.content).toBe('18°C and 21°C.');
  });
});

describe('structured output', () => {
  it('receives the schema the data plane injects as part of the system prompt', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const params = withInjectedFormat(
      {
        messages: [
          { role: 'system', content: 'You know geography.' },
          { role: 'user', content: 'Capital of France?' },
        ],
        responseFormat: { type: 'json_schema', json_schema: { name: 'city', schema } },
      },
      false,
    );
    upstream.reply({
      type: 'json',
      body: message({ content: [{ type: 'text', text: '{"name":"Paris"}' }] }),
    });
    const result = await complete(adapter, MODEL, params);

    const sent = upstream.last().body;
    expect(sent.system).toContain(JSON.stringify(schema));
    expect(sent.system).toContain('You know geography.');
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] },
    ]);
    expect(sent).not.toHaveProperty('response_format');
    expect(result.content).toBe('{"name":"Paris"}');
  });
});

describe('content policy', () => {
  it('turns stop_reason "refusal" into a content-policy error', async () => {
    upstream.reply({ type: 'json', body: message({ content: [], stopReason: 'refusal' }) });
    const error = await failureOf(complete(adapter, MODEL, { messages: [{ role: 'user', content: 'x' }] }));
    expect(error).toMatchObject({ kind: 'content_policy', retryable: false });
  });

  it('turns a streamed refusal into a content-policy error', async () => {
    upstream.reply({
      type: 'sse',
      frames: streamFrames({ blocks: [{ type: 'text', parts: ['I can'] }], stopReason: 'refusal' }),
    });
    const error = await failureOf(stream(adapter, MODEL, { messages: [{ role: 'user', content: 'x' }] }));
    expect(error).toMatchObject({ kind: 'content_policy', retryable: false });
  });
});
