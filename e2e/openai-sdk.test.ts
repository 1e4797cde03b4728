import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SdkAccount, signUpForSdk } from './support/sdk.ts';
import { type RunningServer, startServer } from './support/server.ts';

/**
 * The official `openai` SDK, as an application would use it, against the real server process:
 * pointed at {base}/v1 with the API key, the gate in the x-gatehouse-gate-id header.
 */
describe('the openai SDK against Gatehouse', () => {
  let server: RunningServer;
  let account: SdkAccount;

  const clientFor = (gateId?: string) => account.openAI(gateId);

  beforeAll(async () => {
    server = await startServer();
    account = await signUpForSdk(server.url, 'sdk');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('answers a plain chat completion', async () => {
    const client = clientFor(await account.createGate({ systemPrompt: 'Be brief.' }));
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'mock/echo', messages: [{ role: 'user', content: 'hello from the SDK' }] })
      .withResponse();
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('mock/echo');
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]?.message).toMatchObject({
      role: 'assistant',
      content: 'Echo: hello from the SDK',
    });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBe(
      (completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0),
    );
    expect(response.headers.get('x-gatehouse-model-used')).toBe('mock/echo');
    expect(completion.id).toBe(`chatcmpl-${response.headers.get('x-gatehouse-request-id')}`);
  });

  it('streams a chat completion, with usage at the end when asked', async () => {
    const client = clientFor(await account.createGate({}));
    const stream = await client.chat.completions.create({
      model: 'mock/echo',
      messages: [{ role: 'user', content: 'stream these few words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = '';
    let finishReason: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      expect(chunk.object).toBe('chat.completion.chunk');
      content += chunk.choices[0]?.delta.content ?? '';
      finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(2);
    expect(content).toBe('Echo: stream these few words');
    expect(finishReason).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
  });

  it('returns a tool call, and takes the tool result in a follow-up', async () => {
    const client = clientFor(await account.createGate({}));
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'What is the weather in Oslo? [mock:tool=get_weather]' },
    ];
    const first = await client.chat.completions.create({ model: 'mock/echo', messages, tools });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'mock' });

    const followUp = await client.chat.completions.create({
      model: 'mock/echo',
      tools,
      // Without the directive: the mock reads the last user message, and would call the tool again.
      messages: [
        { role: 'user', content: 'What is the weather in Oslo?' },
        choice?.message as OpenAI.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: call.id, content: '{"temperatureC": -3}' },
      ],
    });
    expect(followUp.choices[0]?.finish_reason).toBe('stop');
    expect(followUp.choices[0]?.message.tool_calls).toBeUndefined();
    expect(followUp.choices[0]?.message.content).toBe('Echo: What is the weather in Oslo?');
  });

  it('answers a json_schema response_format with JSON the SDK parses', async () => {
    const client = clientFor(await account.createGate({}));
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, temperatureC: { type: 'number' } },
      required: ['city', 'temperatureC'],
      additionalProperties: false,
    };
    const completion = await client.chat.completions.parse({
      model: 'mock/echo',
      messages: [{ role: 'user', content: 'Weather in Oslo as JSON' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
    });
    const parsed = completion.choices[0]?.message.parsed as { city: unknown; temperatureC: unknown } | null;
    expect(parsed).not.toBeNull();
    expect(typeof parsed?.city).toBe('string');
    expect(typeof parsed?.temperatureC).toBe('number');
  });

  it('lists the caller gates and their models', async () => {
    const gateId = await account.createGate({ model: 'mock/fast' });
    const ids: string[] = [];
    for await (const model of clientFor(gateId).models.list()) ids.push(model.id);
    expect(ids).toContain(gateId);
    expect(ids).toContain('mock/fast');
  });

  it('surfaces a gate over its block limit as an APIError with status 402', async () => {
    const client = clientFor(await account.createGate({ spendingLimit: 0, spendingEnforcement: 'block' }));
    const error = await client.chat.completions
      .create({ model: 'mock/echo', messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 402, code: 'spending_limit_exceeded', type: 'insufficient_quota' });
  });

  it('surfaces a provider 400 as a BadRequestError, and an unknown gate as a NotFoundError', async () => {
    const client = clientFor(await account.createGate({}));
    const bad = await client.chat.completions
      .create({ model: 'mock/echo', messages: [{ role: 'user', content: '[mock:fail=400] hi' }] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad).toMatchObject({ status: 400, type: 'invalid_request_error' });

    const missing = await clientFor(crypto.randomUUID())
      .chat.completions.create({ model: 'mock/echo', messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });
});
