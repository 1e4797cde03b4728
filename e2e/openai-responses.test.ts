import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completion,
  startOpenAIEmulator,
  streamReply,
} from '../packages/server/test/support/emulators/openai.ts';
import { type SdkAccount, signUpForSdk } from './support/sdk.ts';
import { type RunningServer, startServer } from './support/server.ts';

/**
 * The official `openai` SDK's Responses API (`client.responses.create` and `.stream`), as an
 * application would use it, against the real server process pointed at {base}/v1: on the mock
 * provider, and through a gate to a local server speaking the chat-completions format (DeepSeek's).
 * Gatehouse keeps no responses, so `previous_response_id` is a BadRequestError.
 */
describe('the openai SDK’s Responses API against Gatehouse', () => {
  let server: RunningServer;
  let account: SdkAccount;
  let openai: Awaited<ReturnType<typeof startOpenAIEmulator>>;

  const clientFor = (gateId?: string) => account.openAI(gateId);

  const WEATHER: OpenAI.Responses.FunctionTool = {
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

  beforeAll(async () => {
    openai = await startOpenAIEmulator('openai', 'sk-openai-e2e');
    // DeepSeek speaks chat completions only: a Responses request reaches it translated (an OpenAI
    // model would get the body as sent, which dropin-forward and the agents' e2e cover).
    server = await startServer({
      OPENAI_API_KEY: openai.apiKey,
      OPENAI_BASE_URL: openai.baseUrl,
      DEEPSEEK_API_KEY: openai.apiKey,
      DEEPSEEK_BASE_URL: openai.baseUrl,
    });
    account = await signUpForSdk(server.url, 'responses');
  });

  afterAll(async () => {
    await server?.stop();
    await openai?.upstream.close();
  });

  it('answers a plain response', async () => {
    const client = clientFor(await account.createGate({ systemPrompt: 'Be brief.' }));
    const { data: response, response: http } = await client.responses
      .create({ model: 'mock/echo', instructions: 'Answer kindly.', input: 'hello from the SDK' })
      .withResponse();
    expect(response.object).toBe('response');
    expect(response.id).toBe(`resp_${http.headers.get('x-gatehouse-request-id')}`);
    expect(response.status).toBe('completed');
    expect(response.model).toBe('mock/echo');
    expect(response.output_text).toBe('Echo: hello from the SDK');
    expect(response.output).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [
          expect.objectContaining({ type: 'output_text', text: 'Echo: hello from the SDK', annotations: [] }),
        ],
      }),
    ]);
    expect(response.usage?.total_tokens).toBe(
      (response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0),
    );
  });

  it('streams typed events, and the stream helper’s final response matches the plain call', async () => {
    const client = clientFor(await account.createGate());
    const params = { model: 'mock/echo', input: 'stream these few words' };
    const plain = await client.responses.create(params);

    const stream = await client.responses.create({ ...params, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(text).toBe(plain.output_text);

    const deltas: string[] = [];
    const helper = client.responses
      .stream(params)
      .on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await helper.finalResponse();
    expect(deltas.join('')).toBe(plain.output_text);
    expect(final.output_text).toBe(plain.output_text);
    expect(final.status).toBe('completed');
    // The helper adds fields of its own (the parsed output); the wire fields match the plain call.
    expect(final.output).toMatchObject([{ ...plain.output[0], id: expect.any(String) }]);
  });

  it('calls a function tool through a gate to an OpenAI-format server, streamed or not, one upstream request per call', async () => {
    // The gate named by its UUID as the model, the other way the SDK can name it.
    const gate = await account.createGate({ model: 'deepseek/deepseek-chat' });
    const client = clientFor();
    const ask: OpenAI.Responses.ResponseInputItem = { role: 'user', content: 'Weather in Oslo?' };
    const params = { model: gate, input: [ask], tools: [WEATHER] };
    openai.upstream.reset();
    openai.upstream.reply(
      {
        type: 'json',
        body: completion('openai', {
          toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
        }),
      },
      streamReply('openai', {
        toolCalls: [{ id: 'call_1', name: 'get_weather', argumentParts: ['{"city":', '"Oslo"}'] }],
      }),
      { type: 'json', body: completion('openai', { content: 'It is 4°C in Oslo.' }) },
    );

    const plain = await client.responses.create(params);
    expect(plain.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_1',
        name: 'get_weather',
        arguments: '{"city":"Oslo"}',
        status: 'completed',
      }),
    ]);

    const argumentDeltas: string[] = [];
    const streamed = await client.responses
      .stream(params)
      .on('response.function_call_arguments.delta', (e) => argumentDeltas.push(e.delta))
      .finalResponse();
    expect(argumentDeltas).toEqual(['{"city":', '"Oslo"}']);
    expect(streamed.output).toMatchObject([{ ...plain.output[0], id: expect.any(String) }]);

    const answer = await client.responses.create({
      ...params,
      input: [
        ask,
        ...plain.output,
        { type: 'function_call_output', call_id: 'call_1', output: '{"celsius":4}' },
      ] as OpenAI.Responses.ResponseInput,
    });
    expect(answer.output_text).toBe('It is 4°C in Oslo.');
    expect(answer.model).toBe('deepseek/deepseek-chat');
    expect(openai.upstream.requests).toHaveLength(3);
    expect(openai.upstream.last().body.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"celsius":4}' },
    ]);
  });

  it('refuses previous_response_id and store: true with a BadRequestError', async () => {
    const client = clientFor(await account.createGate());
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => e,
      );
    const chained = await failure(
      client.responses.create({ model: 'mock/echo', input: 'and then?', previous_response_id: 'resp_123' }),
    );
    expect(chained).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chained as InstanceType<typeof OpenAI.BadRequestError>).status).toBe(400);
    expect((chained as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
    const stored = await failure(client.responses.create({ model: 'mock/echo', input: 'hi', store: true }));
    expect(stored).toBeInstanceOf(OpenAI.BadRequestError);
  });
});
