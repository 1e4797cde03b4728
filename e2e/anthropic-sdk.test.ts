import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  message as anthropicMessage,
  startAnthropicEmulator,
  streamFrames,
} from '../packages/server/test/support/emulators/anthropic.ts';
import {
  completion as openAICompletion,
  startOpenAIEmulator,
  streamReply,
} from '../packages/server/test/support/emulators/openai.ts';
import { type SdkAccount, signUpForSdk } from './support/sdk.ts';
import { type RunningServer, startServer } from './support/server.ts';

/**
 * The official `@anthropic-ai/sdk`, as an application (or Claude Code) would use it, against the
 * real server process: pointed at {base} with a Gatehouse key, the gate in x-gatehouse-gate-id.
 * Gates on the mock provider, and on local servers speaking Anthropic's and OpenAI's formats.
 */
describe('the Anthropic SDK against Gatehouse', () => {
  let server: RunningServer;
  let account: SdkAccount;
  let anthropic: Awaited<ReturnType<typeof startAnthropicEmulator>>;
  let openai: Awaited<ReturnType<typeof startOpenAIEmulator>>;

  const clientFor = (gateId: string) =>
    new Anthropic({
      baseURL: server.url,
      apiKey: account.apiKey,
      defaultHeaders: { 'x-gatehouse-gate-id': gateId },
      // The gateway does its own fallback; retries here would hide what it answered.
      maxRetries: 0,
    });

  const WEATHER: Anthropic.Tool = {
    name: 'get_weather',
    description: 'Current weather for a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  };

  /**
   * A message's wire fields but its id, which names the request and so differs between two calls
   * (the stream helper also adds fields of its own: parsed_output, stop_details).
   */
  const withoutId = (m: Anthropic.Message) => ({
    type: m.type,
    role: m.role,
    model: m.model,
    content: m.content,
    stop_reason: m.stop_reason,
    stop_sequence: m.stop_sequence,
    usage: m.usage,
  });

  beforeAll(async () => {
    anthropic = await startAnthropicEmulator('sk-ant-e2e');
    openai = await startOpenAIEmulator('openai', 'sk-openai-e2e');
    server = await startServer({
      ANTHROPIC_API_KEY: anthropic.apiKey,
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      OPENAI_API_KEY: openai.apiKey,
      OPENAI_BASE_URL: openai.baseUrl,
    });
    account = await signUpForSdk(server.url, 'sdk');
  });

  afterAll(async () => {
    await server?.stop();
    await anthropic?.upstream.close();
    await openai?.upstream.close();
  });

  it('answers a plain message', async () => {
    const client = clientFor(await account.createGate({ systemPrompt: 'Be brief.' }));
    const { data: message, response } = await client.messages
      .create({
        model: 'mock/echo',
        max_tokens: 256,
        system: [{ type: 'text', text: 'You are helpful.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'hello from the SDK' }],
      })
      .withResponse();
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'mock/echo',
      content: [{ type: 'text', text: 'Echo: hello from the SDK' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.id).toBe(`msg_${response.headers.get('x-gatehouse-request-id')?.replaceAll('-', '')}`);
  });

  it('streams a message whose events and final message match the plain call', async () => {
    const client = clientFor(await account.createGate());
    const params = {
      model: 'mock/echo',
      max_tokens: 256,
      messages: [{ role: 'user' as const, content: 'stream these few words' }],
    };
    const plain = await client.messages.create(params);

    const stream = client.messages.stream(params);
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    const final = await stream.finalMessage();
    expect(text).toBe('Echo: stream these few words');
    expect(withoutId(final)).toEqual(withoutId(plain));

    const types: string[] = [];
    for await (const event of await client.messages.create({ ...params, stream: true }))
      types.push(event.type);
    expect(types[0]).toBe('message_start');
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
  });

  it('calls a tool, streamed or not, alike, and answers after the tool result', async () => {
    const client = clientFor(await account.createGate());
    const params = {
      model: 'mock/echo',
      max_tokens: 256,
      tools: [WEATHER],
      tool_choice: { type: 'auto' as const },
      messages: [{ role: 'user' as const, content: 'Weather in Oslo? [mock:tool=get_weather]' }],
    };
    const plain = await client.messages.create(params);
    expect(plain.stop_reason).toBe('tool_use');
    const call = plain.content[0];
    expect(call).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'mock' } });
    const final = await client.messages.stream(params).finalMessage();
    expect(withoutId(final)).toEqual(withoutId(plain));

    if (call?.type !== 'tool_use') throw new Error('expected a tool_use block');
    const after = await client.messages.create({
      ...params,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: plain.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: call.id, content: [{ type: 'text', text: '-3 C' }] }],
        },
      ],
    });
    expect(after.stop_reason).toBe('end_turn');
    expect(after.content).toEqual([{ type: 'text', text: 'Echo: Weather in Oslo?' }]);
  });

  it('takes an image, as base64 and as a URL', async () => {
    const client = clientFor(await account.createGate());
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
    const message = await client.messages.create({
      model: 'mock/echo',
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: What is this?' }]);
  });

  it('counts tokens', async () => {
    const client = clientFor(await account.createGate());
    const counted = await client.messages.countTokens({
      model: 'mock/echo',
      messages: [{ role: 'user', content: 'How many tokens is this?' }],
      tools: [WEATHER],
    });
    expect(counted.input_tokens).toBeGreaterThan(10);
  });

  it('surfaces errors as the SDK’s own classes', async () => {
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => e,
      );
    const ask = (client: Anthropic, content: string) =>
      client.messages.create({ model: 'mock/echo', max_tokens: 16, messages: [{ role: 'user', content }] });

    const blocked = await failure(
      ask(clientFor(await account.createGate({ spendingLimit: 0, spendingEnforcement: 'block' })), 'hi'),
    );
    expect(blocked).toBeInstanceOf(Anthropic.APIError);
    expect(blocked).toMatchObject({
      status: 402,
      error: { type: 'error', error: { type: 'billing_error' } },
    });

    const client = clientFor(await account.createGate());
    expect(await failure(ask(client, '[mock:fail=400] hi'))).toBeInstanceOf(Anthropic.BadRequestError);
    expect(await failure(ask(client, '[mock:fail=429] hi'))).toBeInstanceOf(Anthropic.RateLimitError);
    expect(await failure(ask(clientFor(crypto.randomUUID()), 'hi'))).toBeInstanceOf(Anthropic.NotFoundError);
    const wrongKey = new Anthropic({ baseURL: server.url, apiKey: 'gh_wrong', maxRetries: 0 });
    expect(await failure(ask(wrongKey, 'hi'))).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('goes through a gate to Anthropic and to OpenAI, one upstream request per call', async () => {
    // Each gate named by its UUID as the model, the other way the SDK can name it.
    const anthropicGate = await account.createGate({ model: 'anthropic/claude-sonnet-4-5' });
    const openAIGate = await account.createGate({ model: 'openai/gpt-4o-mini' });
    const client = new Anthropic({ baseURL: server.url, apiKey: account.apiKey, maxRetries: 0 });
    const params = {
      model: anthropicGate,
      max_tokens: 512,
      tools: [WEATHER],
      messages: [{ role: 'user' as const, content: 'Weather in Oslo?' }],
    };
    const call = { id: 'toolu_01A', name: 'get_weather', input: { city: 'Oslo' } };
    anthropic.upstream.reply(
      {
        type: 'json',
        body: anthropicMessage({
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', ...call },
          ],
        }),
      },
      {
        type: 'sse',
        frames: streamFrames({
          blocks: [
            { type: 'text', parts: ['Check', 'ing.'] },
            { type: 'tool_use', id: call.id, name: call.name, jsonParts: ['{"city":', ' "Oslo"}'] },
          ],
        }),
      },
    );
    const plain = await client.messages.create(params);
    const streamed = await client.messages.stream(params).finalMessage();
    expect(anthropic.upstream.requests).toHaveLength(2);
    expect(withoutId(streamed)).toEqual(withoutId(plain));
    expect(plain.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', ...call },
    ]);

    const openAICall = { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' };
    openai.upstream.reply(
      {
        type: 'json',
        body: openAICompletion('openai', {
          content: 'Checking.',
          toolCalls: [openAICall],
          finishReason: 'tool_calls',
        }),
      },
      streamReply('openai', {
        content: ['Check', 'ing.'],
        toolCalls: [{ id: 'call_1', name: 'get_weather', argumentParts: ['{"city":', '"Oslo"}'] }],
        finishReason: 'tool_calls',
      }),
    );
    const viaOpenAI = await client.messages.create({ ...params, model: openAIGate });
    const viaOpenAIStreamed = await client.messages.stream({ ...params, model: openAIGate }).finalMessage();
    expect(openai.upstream.requests).toHaveLength(2);
    expect(viaOpenAI.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(viaOpenAI.stop_reason).toBe('tool_use');
    expect(withoutId(viaOpenAIStreamed)).toEqual(withoutId(viaOpenAI));
  });
});
