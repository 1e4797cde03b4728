/**
 * Mistral through the OpenAI adapter's Mistral dialect, against a local server that validates
 * requests the way api.mistral.ai does (unknown fields are a 422) and answers in Mistral's shape:
 * usage on the last chunk, tool calls whole in one delta, `any` for a required tool.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/providers/types.ts';
import { adapterFrom, complete, failureOf, foldDeltas, stream } from '../support/emulators/adapters.ts';
import { completion, errorReply, startOpenAIEmulator, streamReply } from '../support/emulators/openai.ts';
import { expectRepliesUsed, type Upstream } from '../support/emulators/upstream.ts';

const MODEL = 'mistral-small-latest';

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
  const emulator = await startOpenAIEmulator('mistral', 'mistral-key');
  upstream = emulator.upstream;
  adapter = adapterFrom('mistral', { MISTRAL_API_KEY: 'mistral-key', MISTRAL_BASE_URL: emulator.baseUrl });
});
expectRepliesUsed(() => upstream);

describe('a plain answer', () => {
  it("sends Mistral's field names and roles, and reads content and usage", async () => {
    const answer = completion('mistral', {
      content: 'Paris.',
      model: MODEL,
      usage: { prompt: 16, completion: 3 },
    });
    upstream.reply({ type: 'json', body: answer });
    const result = await complete(adapter, MODEL, {
      messages: [
        { role: 'system', content: 'Answer in one word.' },
        { role: 'developer', content: 'Be exact.' },
        { role: 'user', content: 'Capital of France?', name: 'ada' },
      ],
      temperature: 0.3,
      maxTokens: 64,
      topP: 0.9,
      stop: ['\n\n'],
      seed: 7,
    });

    const sent = upstream.last();
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer mistral-key');
    expect(sent.body).toEqual({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Answer in one word.' },
        { role: 'system', content: 'Be exact.' },
        { role: 'user', content: 'Capital of France?' },
      ],
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 64,
      stop: ['\n\n'],
      random_seed: 7,
    });
    expect(result).toEqual({
      content: 'Paris.',
      toolCalls: [],
      finishReason: 'stop',
      usage: { promptTokens: 16, completionTokens: 3 },
      providerRequest: sent.body,
      providerResponse: answer,
    });
  });

  it('reads model_length as a length stop', async () => {
    upstream.reply({
      type: 'json',
      body: completion('mistral', { content: 'The', finishReason: 'model_length' }),
    });
    const result = await complete(adapter, MODEL, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(result.finishReason).toBe('length');
  });

  it('reads the text of an answer given as chunks, leaving out the thinking', async () => {
    const plain = completion('mistral', { model: 'magistral-small' });
    const [choice] = plain.choices;
    const content = [
      { type: 'thinking', thinking: [{ type: 'text', text: 'Paris is the capital.' }] },
      { type: 'text', text: 'Paris.' },
    ];
    const answer = { ...plain, choices: [{ ...choice, message: { ...choice?.message, content } }] };
    upstream.reply({ type: 'json', body: answer });
    const result = await complete(adapter, 'magistral-small', {
      messages: [{ role: 'user', content: 'Capital?' }],
    });
    expect(result.content).toBe('Paris.');
  });

  it("passes on the message of Mistral's validation errors", async () => {
    upstream.reply({
      type: 'json',
      status: 422,
      body: {
        object: 'error',
        message: {
          detail: [
            {
              type: 'less_than_equal',
              loc: ['body', 'temperature'],
              msg: 'Input should be less than or equal to 1.5',
              input: 1.8,
            },
          ],
        },
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    const error = await failureOf(
      complete(adapter, MODEL, { messages: [{ role: 'user', content: 'Hi' }], temperature: 1.8 }),
    );
    expect(error).toMatchObject({ kind: 'http', status: 422, retryable: false });
    expect(error.message).toContain('Input should be less than or equal to 1.5');
  });
});

describe('a streamed answer', () => {
  it('streams without stream_options, which Mistral rejects, and takes usage from the last chunk', async () => {
    upstream.reply(
      streamReply('mistral', {
        content: ['Bon', 'jour', '!'],
        usage: { prompt: 7, completion: 3 },
        model: MODEL,
      }),
    );
    const { completion: result, deltas } = await stream(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Say hello in French' }],
    });

    expect(upstream.last().body).toEqual({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello in French' }],
      stream: true,
    });
    expect(deltas).toEqual([{ content: 'Bon' }, { content: 'jour' }, { content: '!' }]);
    expect(result.content).toBe('Bonjour!');
    expect(result.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(result.providerResponse).toMatchObject({
      choices: [{ message: { role: 'assistant', content: 'Bonjour!' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 7, completion_tokens: 3 },
    });
  });
});

describe('tool calls', () => {
  it('asks for a required tool with "any" and reads a tool call without a type field', async () => {
    upstream.reply({
      type: 'json',
      body: completion('mistral', {
        toolCalls: [{ id: 'D681PevKs', name: 'get_weather', arguments: '{"city": "Boston"}' }],
      }),
    });
    const result = await complete(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Weather in Boston?' }],
      tools: [weatherTool],
      toolChoice: 'required',
    });

    expect(upstream.last().body).toMatchObject({ tools: [weatherTool], tool_choice: 'any' });
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toEqual([
      {
        id: 'D681PevKs',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city": "Boston"}' },
      },
    ]);
  });

  it('reads streamed tool calls that arrive whole', async () => {
    upstream.reply(
      streamReply('mistral', {
        toolCalls: [
          { id: 'D681PevKs', name: 'get_weather', argumentParts: ['{"city": "Boston"}'] },
          { id: 'yXc9Dmq2a', name: 'get_weather', argumentParts: ['{"city": "Paris"}'] },
        ],
      }),
    );
    const { completion: result, deltas } = await stream(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Weather in Boston and Paris?' }],
      tools: [weatherTool],
    });
    expect(foldDeltas(deltas).calls).toEqual([
      { id: 'D681PevKs', name: 'get_weather', arguments: '{"city": "Boston"}' },
      { id: 'yXc9Dmq2a', name: 'get_weather', arguments: '{"city": "Paris"}' },
    ]);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls.map((c) => JSON.parse(c.function.arguments))).toEqual([
      { city: 'Boston' },
      { city: 'Paris' },
    ]);
  });

  it('sends the assistant tool calls and the tool result back', async () => {
    upstream.reply({ type: 'json', body: completion('mistral', { content: '18°C.' }) });
    const messages = [
      { role: 'user' as const, content: 'Weather in Boston?' },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [
          {
            id: 'D681PevKs',
            type: 'function' as const,
            function: { name: 'get_weather', arguments: '{"city": "Boston"}' },
          },
        ],
      },
      { role: 'tool' as const, tool_call_id: 'D681PevKs', content: '{"celsius":18}' },
    ];
    const result = await complete(adapter, MODEL, { messages, tools: [weatherTool] });
    expect(upstream.last().body.messages).toEqual(messages);
    expect(result.content).toBe('18°C.');
  });

  it("rewrites other providers' tool call ids into the nine letters and digits Mistral accepts", async () => {
    upstream.reply({ type: 'json', body: completion('mistral', { content: '18°C.' }) });
    // A conversation begun on OpenAI (or Anthropic: toolu_…), falling back to Mistral.
    const openAIId = 'call_Xo1mBQ7m3jTkbY0mD3Zw6Hn2';
    const anthropicId = 'toolu_01A09q90qw90lq917835lq9';
    const call = (id: string, city: string) => ({
      id,
      type: 'function' as const,
      function: { name: 'get_weather', arguments: JSON.stringify({ city }) },
    });
    const result = await complete(adapter, MODEL, {
      messages: [
        { role: 'user', content: 'Weather in Boston and Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [call(openAIId, 'Boston'), call(anthropicId, 'Paris')],
        },
        { role: 'tool', tool_call_id: anthropicId, content: '{"celsius":21}' },
        { role: 'tool', tool_call_id: openAIId, content: '{"celsius":18}' },
      ],
      tools: [weatherTool],
    });
    expect(result.content).toBe('18°C.');
    const sent = upstream.last().body.messages as {
      tool_calls?: { id: string }[];
      tool_call_id?: string;
    }[];
    const [bostonId, parisId] = (sent[1]?.tool_calls ?? []).map((c) => c.id);
    expect(bostonId).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(parisId).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(bostonId).not.toBe(parisId);
    // Each result still answers its own call.
    expect(sent[2]?.tool_call_id).toBe(parisId);
    expect(sent[3]?.tool_call_id).toBe(bostonId);
  });
});

describe('structured output', () => {
  it('passes a json_schema response format natively', async () => {
    const responseFormat = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'city',
        strict: true,
        schema: { type: 'object', properties: { name: { type: 'string' } } },
      },
    };
    upstream.reply({ type: 'json', body: completion('mistral', { content: '{"name":"Paris"}' }) });
    const result = await complete(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Capital of France?' }],
      responseFormat,
    });
    expect(upstream.last().body.response_format).toEqual(responseFormat);
    expect(result.content).toBe('{"name":"Paris"}');
  });
});

describe('failures', () => {
  it('reads a Mistral 429 as retryable', async () => {
    upstream.reply(errorReply('mistral', 429, 'Requests rate limit exceeded'));
    const error = await failureOf(complete(adapter, MODEL, { messages: [{ role: 'user', content: 'Hi' }] }));
    expect(error).toMatchObject({ kind: 'http', status: 429, retryable: true });
    expect(error.message).toContain('Requests rate limit exceeded');
  });
});
