/**
 * The Gemini adapter against a local server speaking generateContent and
 * streamGenerateContent?alt=sse: systemInstruction and generationConfig, function calls and
 * responses (with Gemini 3's thought signatures), native JSON schema, and safety blocks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatParams, ToolDefinition } from '../../src/providers/types.ts';
import { adapterFrom, complete, failureOf, stream } from '../support/emulators/adapters.ts';
import {
  blockedCandidate,
  blockedPrompt,
  chunkFrame,
  response,
  startGeminiEmulator,
  streamFrames,
} from '../support/emulators/gemini.ts';
import { expectRepliesUsed, type Upstream } from '../support/emulators/upstream.ts';

const MODEL = 'gemini-2.5-flash';

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
  const emulator = await startGeminiEmulator('gemini-test-key');
  upstream = emulator.upstream;
  adapter = adapterFrom('gemini', { GEMINI_API_KEY: 'gemini-test-key', GEMINI_BASE_URL: emulator.baseUrl });
});
expectRepliesUsed(() => upstream);

describe('a plain answer', () => {
  it('sends systemInstruction and generationConfig with the key header, and reads text and usage', async () => {
    const answer = response({
      parts: [{ text: 'Weighing the options…', thought: true }, { text: 'Paris.' }],
      usage: { prompt: 1200, candidates: 3, cached: 1024, thoughts: 40 },
    });
    upstream.reply({ type: 'json', body: answer });
    const params: ChatParams = {
      messages: [
        { role: 'system', content: 'Answer in one word.' },
        { role: 'user', content: 'Capital of France?' },
        { role: 'assistant', content: 'Paris.' },
        { role: 'user', content: 'And of Italy?' },
      ],
      temperature: 0.2,
      maxTokens: 64,
      topP: 0.9,
      stop: ['\n\n'],
      seed: 7,
    };

    const result = await complete(adapter, MODEL, params);

    const sent = upstream.last();
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('gemini-test-key');
    expect(sent.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Capital of France?' }] },
        { role: 'model', parts: [{ text: 'Paris.' }] },
        { role: 'user', parts: [{ text: 'And of Italy?' }] },
      ],
      systemInstruction: { parts: [{ text: 'Answer in one word.' }] },
      generationConfig: {
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 64,
        stopSequences: ['\n\n'],
        seed: 7,
      },
    });
    expect(result).toEqual({
      content: 'Paris.',
      toolCalls: [],
      finishReason: 'stop',
      usage: { promptTokens: 1200, completionTokens: 43, cachedTokens: 1024, reasoningTokens: 40 },
      providerRequest: sent.body,
      providerResponse: answer,
    });
  });

  it('reads MAX_TOKENS as a length stop', async () => {
    upstream.reply({ type: 'json', body: response({ finishReason: 'MAX_TOKENS' }) });
    const result = await complete(adapter, MODEL, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(result.finishReason).toBe('length');
  });
});

describe('a streamed answer', () => {
  it('hands over text deltas in order from CRLF-separated chunks and assembles the answer', async () => {
    upstream.reply({
      type: 'sse',
      frames: streamFrames({
        chunks: [[{ text: 'Hel' }], [{ text: 'lo, ' }], [{ text: 'world!' }]],
        usage: { prompt: 9, candidates: 4 },
      }),
    });
    const { completion, deltas } = await stream(adapter, MODEL, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
    });

    const sent = upstream.last();
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(sent.headers.accept).toBe('text/event-stream');
    expect(sent.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
    });
    expect(deltas).toEqual([{ content: 'Hel' }, { content: 'lo, ' }, { content: 'world!' }]);
    expect(completion.content).toBe('Hello, world!');
    expect(completion.finishReason).toBe('stop');
    expect(completion.usage).toEqual({ promptTokens: 9, completionTokens: 4 });
    expect(completion.providerResponse).toMatchObject({
      candidates: [{ content: { parts: [{ text: 'Hello, world!' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4 },
    });
  });
});

describe('tool calls', () => {
  it('declares functions and returns a function call as a tool call with JSON arguments', async () => {
    upstream.reply({
      type: 'json',
      body: response({ parts: [{ functionCall: { name: 'get_weather', args: { city: 'Boston' } } }] }),
    });
    const result = await complete(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Weather in Boston?' }],
      tools: [weatherTool],
      toolChoice: { type: 'function', function: { name: 'get_weather' } },
    });

    expect(upstream.last().body).toMatchObject({
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Current weather in a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    });
    expect(result.finishReason).toBe('tool_calls');
    expect(result.content).toBeNull();
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]?.function).toEqual({ name: 'get_weather', arguments: '{"city":"Boston"}' });
  });

  it('streams each function call as one tool-call delta, in order', async () => {
    upstream.reply({
      type: 'sse',
      frames: streamFrames({
        chunks: [
          [{ functionCall: { name: 'get_weather', args: { city: 'Boston' } } }],
          [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }],
        ],
      }),
    });
    const { completion, deltas } = await stream(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Weather in Boston and Paris?' }],
      tools: [weatherTool],
    });

    expect(deltas.map((d) => d.toolCalls?.map((t) => [t.index, t.name, t.arguments]))).toEqual([
      [[0, 'get_weather', '{"city":"Boston"}']],
      [[1, 'get_weather', '{"city":"Paris"}']],
    ]);
    expect(completion.finishReason).toBe('tool_calls');
    expect(completion.toolCalls.map((c) => JSON.parse(c.function.arguments))).toEqual([
      { city: 'Boston' },
      { city: 'Paris' },
    ]);
    expect(new Set(completion.toolCalls.map((c) => c.id)).size).toBe(2);
    expect(completion.toolCalls.map((c) => c.id)).toEqual(deltas.map((d) => d.toolCalls?.[0]?.id));
  });

  it('sends back function calls and their results as functionResponse parts named after the call', async () => {
    upstream.reply({
      type: 'json',
      body: response({ parts: [{ text: '18°C and sunny; the API said "n/a".' }] }),
    });
    await complete(adapter, MODEL, {
      messages: [
        { role: 'user', content: 'Weather in Boston and Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_0',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Boston"}' },
            },
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_forecast', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '{"celsius":18}' },
        { role: 'tool', tool_call_id: 'call_1', content: 'n/a' },
      ],
      tools: [weatherTool],
    });

    expect(upstream.last().body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Boston and Paris?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Boston' } } },
          { functionCall: { name: 'get_forecast', args: { city: 'Paris' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { celsius: 18 } } },
          { functionResponse: { name: 'get_forecast', response: { content: 'n/a' } } },
        ],
      },
    ]);
  });

  it('carries a Gemini 3 thought signature from the tool call to the follow-up request', async () => {
    const signature = 'CiIBVKhc7oW1Hq2m0z0xtK8Ey4Ag9QmVbW3Gq0w9bH9o0nRrEnIKZQFUqFzu';
    upstream.reply({
      type: 'json',
      body: response({
        model: 'gemini-3-flash-preview',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Boston' } }, thoughtSignature: signature },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
        ],
      }),
    });
    const ask = { role: 'user' as const, content: 'Weather in Boston and Paris?' };
    const first = await complete(adapter, 'gemini-3-flash-preview', {
      messages: [ask],
      tools: [weatherTool],
    });
    const [boston, paris] = first.toolCalls;
    if (!boston || !paris) throw new Error('expected two tool calls');

    upstream.reply({ type: 'json', body: response({ parts: [{ text: 'Both mild.' }] }) });
    const second = await complete(adapter, 'gemini-3-flash-preview', {
      messages: [
        ask,
        { role: 'assistant', content: null, tool_calls: first.toolCalls },
        { role: 'tool', tool_call_id: boston.id, content: '{"celsius":18}' },
        { role: 'tool', tool_call_id: paris.id, content: '{"celsius":21}' },
      ],
      tools: [weatherTool],
    });

    expect(second.content).toBe('Both mild.');
    expect(upstream.last().body.contents[1]).toEqual({
      role: 'model',
      parts: [
        { functionCall: { name: 'get_weather', args: { city: 'Boston' } }, thoughtSignature: signature },
        { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
      ],
    });
  });

  it('lets Gemini 3 accept tool calls that another model made, which carry no signature', async () => {
    upstream.reply({ type: 'json', body: response({ parts: [{ text: 'Mild.' }] }) });
    const result = await complete(adapter, 'gemini-3-flash-preview', {
      messages: [
        { role: 'user', content: 'Weather in Boston?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_x',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Boston"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_x', content: '{"celsius":18}' },
      ],
      tools: [weatherTool],
    });
    expect(result.content).toBe('Mild.');
  });
});

describe('structured output', () => {
  it('asks for JSON natively with responseMimeType and responseJsonSchema', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    upstream.reply({ type: 'json', body: response({ parts: [{ text: '{"name":"Paris"}' }] }) });
    const result = await complete(adapter, MODEL, {
      messages: [{ role: 'user', content: 'Capital of France?' }],
      responseFormat: { type: 'json_schema', json_schema: { name: 'city', schema } },
    });
    expect(upstream.last().body.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(result.content).toBe('{"name":"Paris"}');
  });
});

describe('content policy', () => {
  it('turns a candidate stopped for SAFETY into a content-policy error', async () => {
    upstream.reply({ type: 'json', body: blockedCandidate('SAFETY') });
    const error = await failureOf(complete(adapter, MODEL, { messages: [{ role: 'user', content: 'x' }] }));
    expect(error).toMatchObject({ kind: 'content_policy', retryable: false });
    expect(error.message).toContain('SAFETY');
  });

  it('turns a blocked prompt (promptFeedback.blockReason) into a content-policy error', async () => {
    upstream.reply({ type: 'json', body: blockedPrompt('PROHIBITED_CONTENT') });
    const error = await failureOf(complete(adapter, MODEL, { messages: [{ role: 'user', content: 'x' }] }));
    expect(error).toMatchObject({ kind: 'content_policy', retryable: false });
    expect(error.message).toContain('PROHIBITED_CONTENT');
  });

  it('turns a stream stopped for SAFETY into a content-policy error', async () => {
    upstream.reply({
      type: 'sse',
      frames: [
        ...streamFrames({ chunks: [[{ text: 'Here is how' }], [{ text: ' to' }]] }).slice(0, 1),
        chunkFrame(blockedCandidate('SAFETY')),
      ],
    });
    const error = await failureOf(stream(adapter, MODEL, { messages: [{ role: 'user', content: 'x' }] }));
    expect(error).toMatchObject({ kind: 'content_policy', retryable: false });
  });

  it('turns a stream whose prompt was blocked into a content-policy error', async () => {
    upstream.reply({ type: 'sse', frames: [chunkFrame(blockedPrompt('SAFETY'))] });
    const error = await failureOf(stream(adapter, MODEL, { messages: [{ role: 'user', content: 'x' }] }));
    expect(error).toMatchObject({ kind: 'content_policy', retryable: false });
  });
});
