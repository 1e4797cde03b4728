/**
 * POST /v1/messages and /v1/messages/count_tokens through gates on the mock provider: Anthropic's
 * wire format in and out (message objects, the named events of a stream, errors), translated to
 * whatever the gate routes to, and logged like chat.
 */
import { describe, expect, it } from 'vitest';
import {
  type AnthropicErrorBody,
  assemble,
  messageOf,
  messages,
  namedEvents,
  shapeOf,
} from './support/anthropic.ts';
import { useTestApp } from './support/app.ts';
import { logEntryOf } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

const app = useTestApp();

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
    required: ['city', 'unit'],
  },
};

const say = (text: string) => [{ role: 'user', content: text }];
// A 1x1 transparent PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** An object nested `depth` deep. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { type: 'object' };
  for (let i = 0; i < depth; i++) value = { type: 'object', properties: { inner: value } };
  return value;
}

async function errorOf(res: Response, status: number): Promise<AnthropicErrorBody['error']> {
  expect(res.status, await res.clone().text()).toBe(status);
  const body = (await res.json()) as AnthropicErrorBody;
  expect(body.type).toBe('error');
  return body.error;
}

describe('POST /v1/messages answers in Anthropic’s format', () => {
  it('answers a message object, and logs the request against the gate as /v1/messages', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await messages(app, user, gate.id, { messages: say('hello there') });
    const message = await messageOf(res);
    const requestId = res.headers.get('x-gatehouse-request-id');
    expect(message).toMatchObject({
      id: `msg_${requestId?.replaceAll('-', '')}`,
      type: 'message',
      role: 'assistant',
      model: 'mock/echo',
      content: [{ type: 'text', text: 'Echo: hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    expect(res.headers.get('x-gatehouse-model-used')).toBe('mock/echo');

    const entry = await logEntryOf(app, requestId);
    expect(entry).toMatchObject({
      endpoint: '/v1/messages',
      gateId: gate.id,
      success: true,
      statusCode: 200,
    });
    expect(entry.promptTokens).toBe(message.usage.input_tokens);
    expect(entry.completionTokens).toBe(message.usage.output_tokens);
    expect(Number(res.headers.get('x-gatehouse-cost-usd'))).toBeGreaterThan(0);
  });

  it('takes the key as Authorization: Bearer too, and the gate as its UUID in model', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request('/v1/messages', {
      method: 'POST',
      headers: { ...user.auth, 'anthropic-version': '2023-06-01' },
      json: { model: gate.id, max_tokens: 100, messages: say('by uuid') },
    });
    expect((await messageOf(res)).content).toEqual([{ type: 'text', text: 'Echo: by uuid' }]);
    // The gate's UUID as the model is no model override.
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBe('maxTokens');
  });

  it('applies temperature, top_p and max_tokens only where the gate allows overrides', async () => {
    const user = await signUpUser(app);
    const strict = await createGate(app, user, { temperature: 0.2 });
    const body = { messages: say('hi'), temperature: 0.9, top_p: 0.5, stop_sequences: ['END'] };
    const ignored = await messages(app, user, strict.id, body);
    expect(ignored.status).toBe(200);
    expect(ignored.headers.get('x-gatehouse-ignored-overrides')).toBe('temperature,maxTokens,topP');
    const strictEntry = await logEntryOf(app, ignored.headers.get('x-gatehouse-request-id'));
    expect(strictEntry.providerRequest).toMatchObject({ temperature: 0.2, stop: ['END'] });

    const open = await createGate(app, user, { allowOverrides: true });
    const applied = await messages(app, user, open.id, body);
    const entry = await logEntryOf(app, applied.headers.get('x-gatehouse-request-id'));
    expect(entry.providerRequest).toMatchObject({ temperature: 0.9, topP: 0.5, maxTokens: 256 });
  });

  it('passes a system prompt given as blocks, after the gate’s own', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { systemPrompt: 'Gate rules.' });
    const res = await messages(app, user, gate.id, {
      system: [
        { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Answer in English.' },
      ],
      messages: say('hi'),
    });
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    const sent = (entry.providerRequest as { messages: { role: string; content: unknown }[] }).messages;
    expect(sent.slice(0, 2)).toEqual([
      { role: 'system', content: 'Gate rules.' },
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Answer in English.' },
        ],
      },
    ]);
  });

  it('accepts image blocks with base64 and url sources', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await messages(app, user, gate.id, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'text', text: 'What are these?' },
          ],
        },
      ],
    });
    expect((await messageOf(res)).content).toEqual([{ type: 'text', text: 'Echo: What are these?' }]);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    const sent = (entry.providerRequest as { messages: { content: unknown }[] }).messages;
    expect(sent[0]?.content).toEqual([
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      { type: 'text', text: 'What are these?' },
    ]);
  });

  it('accepts anthropic-beta values and thinking the mock does not know, without an error', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { allowOverrides: true });
    const res = await messages(
      app,
      user,
      gate.id,
      { messages: say('think'), max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 } },
      { 'anthropic-beta': 'interleaved-thinking-2025-05-14, some-future-beta-2030-01-01' },
    );
    expect((await messageOf(res)).content).toEqual([{ type: 'text', text: 'Echo: think' }]);
  });
});

describe('a streamed message', () => {
  it('is the exact event sequence, and adds up to the message the plain call answers', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const body = { messages: say('stream these few words') };
    const plain = await messageOf(await messages(app, user, gate.id, body));
    const res = await messages(app, user, gate.id, { ...body, stream: true });
    const events = await namedEvents(res);
    expect(shapeOf(events)).toEqual([
      'message_start',
      'ping',
      'content_block_start:text',
      ...Array(5).fill('content_block_delta:text_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const start = events[0]?.data as unknown as { message: { usage: Record<string, number> } };
    expect(start.message.usage).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const streamed = assemble(events);
    expect(streamed.id).toBe(`msg_${res.headers.get('x-gatehouse-request-id')?.replaceAll('-', '')}`);
    expect({ ...streamed, id: plain.id }).toEqual(plain);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry).toMatchObject({ endpoint: '/v1/messages', stream: true, success: true });
  });
});

describe('tool use', () => {
  it('answers a tool_use block with stop_reason tool_use, streamed or not, alike', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const body = {
      messages: say('Weather in Oslo? [mock:tool=get_weather]'),
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'any' },
    };
    const plain = await messageOf(await messages(app, user, gate.id, body));
    expect(plain.stop_reason).toBe('tool_use');
    expect(plain.content).toEqual([
      { type: 'tool_use', id: 'call_mock_0', name: 'get_weather', input: { city: 'mock', unit: 'c' } },
    ]);
    const res = await messages(app, user, gate.id, { ...body, stream: true });
    const events = await namedEvents(res);
    expect(shapeOf(events)).toEqual([
      'message_start',
      'ping',
      'content_block_start:tool_use',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[2]?.data.content_block).toEqual({
      type: 'tool_use',
      id: 'call_mock_0',
      name: 'get_weather',
      input: {},
    });
    expect({ ...assemble(events), id: plain.id }).toEqual(plain);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry.providerRequest).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_TOOL.input_schema } }],
      toolChoice: 'required',
    });
  });

  it('takes tool_result blocks (string or blocks, is_error) and answers after them', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await messages(app, user, gate.id, {
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [
        { role: 'user', content: 'Weather in Oslo and Rome? [mock:tool=get_weather]' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo', unit: 'c' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome', unit: 'c' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '4 degrees' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: [{ type: 'text', text: 'station offline' }],
              is_error: true,
            },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    });
    const message = await messageOf(res);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: Summarise.' }]);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry.toolResults).toEqual([
      { tool_call_id: 'toolu_1', content: '4 degrees' },
      { tool_call_id: 'toolu_2', content: [{ type: 'text', text: 'station offline' }] },
    ]);
    const sent = (entry.providerRequest as { messages: unknown[]; toolChoice: unknown }).messages;
    expect(sent[1]).toEqual({
      role: 'assistant',
      content: 'Checking both.',
      tool_calls: [
        {
          id: 'toolu_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Oslo","unit":"c"}' },
        },
        {
          id: 'toolu_2',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Rome","unit":"c"}' },
        },
      ],
    });
    expect(sent[3]).toEqual({
      role: 'tool',
      tool_call_id: 'toolu_2',
      content: [{ type: 'text', text: 'station offline' }],
      is_error: true,
    });
  });
});

describe('errors in Anthropic’s shape', () => {
  it('names the bad field in a 400 invalid_request_error, never a 500', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const cases: [Record<string, unknown>, string][] = [
      [{ max_tokens: undefined, messages: say('hi') }, 'max_tokens'],
      [{ messages: [] }, 'messages'],
      [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role'],
      [{ messages: 'hi' }, 'messages'],
      [{ messages: say('hi'), max_tokens: 'many' }, 'max_tokens'],
      [
        {
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'user', content: '' },
          ],
        },
        'messages.1.content',
      ],
      [{ messages: say('hi'), system: [{ type: 'text' }] }, 'system.0.text'],
      [{ messages: say('hi'), temperature: 1.5 }, 'temperature'],
      [
        { messages: say('hi'), tools: [{ name: 'deep', input_schema: nested(1000) }] },
        'tools.0.input_schema',
      ],
      [{ messages: say('hi'), tool_choice: { type: 'sometimes' } }, 'tool_choice.type'],
      [{ messages: say('hi'), thinking: { type: 'enabled', budget_tokens: 10 } }, 'thinking.budget_tokens'],
    ];
    for (const [body, field] of cases) {
      const error = await errorOf(await messages(app, user, gate.id, body), 400);
      expect(error.type).toBe('invalid_request_error');
      expect(error.message, JSON.stringify(body)).toContain(field);
    }
    const notJson = await app.request('/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'x-gatehouse-gate-id': gate.id, 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect((await errorOf(notJson, 400)).type).toBe('invalid_request_error');
    const noGate = await messages(app, user, null, { messages: say('hi') });
    expect((await errorOf(noGate, 400)).message).toContain('x-gatehouse-gate-id');
  });

  it('answers 401 authentication_error, 404 not_found_error', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const wrongKey = await messages(app, user, gate.id, { messages: say('hi') }, { 'x-api-key': 'gh_nope' });
    expect((await errorOf(wrongKey, 401)).type).toBe('authentication_error');
    const noKey = await app.request('/v1/messages', {
      method: 'POST',
      headers: { 'x-gatehouse-gate-id': gate.id },
      json: { model: 'mock/echo', max_tokens: 10, messages: say('hi') },
    });
    expect((await errorOf(noKey, 401)).type).toBe('authentication_error');
    const other = await signUpUser(app);
    const theirs = await messages(app, other, gate.id, { messages: say('hi') });
    expect((await errorOf(theirs, 404)).type).toBe('not_found_error');
  });

  it('maps upstream failures: 429 rate_limit_error, 529 overloaded_error, 500 api_error, 400 passed on', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const cases: [string, number, string][] = [
      ['[mock:fail=429]', 429, 'rate_limit_error'],
      ['[mock:fail=503]', 529, 'overloaded_error'],
      ['[mock:fail=500]', 500, 'api_error'],
      ['[mock:fail=400]', 400, 'invalid_request_error'],
    ];
    for (const [directive, status, type] of cases) {
      for (const stream of [false, true]) {
        const res = await messages(app, user, gate.id, { messages: say(`hi ${directive}`), stream });
        expect((await errorOf(res, status)).type, `${directive} stream=${stream}`).toBe(type);
      }
    }
  });

  it('answers a body over the chat limit with 413 request_too_large', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const huge = 'x'.repeat(app.config.maxChatBodyBytes + 1);
    const error = await errorOf(await messages(app, user, gate.id, { messages: say(huge) }), 413);
    expect(error.type).toBe('request_too_large');
  });

  it('answers a block spending limit with 402 billing_error', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingLimit: 0, spendingEnforcement: 'block' });
    const error = await errorOf(await messages(app, user, gate.id, { messages: say('hi') }), 402);
    expect(error.type).toBe('billing_error');
    expect(error.message).toContain('spending limit');
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it('counts the input the gate would send, its system prompt included', async () => {
    const user = await signUpUser(app);
    const bare = await createGate(app, user);
    const prompted = await createGate(app, user, {
      systemPrompt: 'You are a careful assistant. '.repeat(20),
    });
    const body = {
      model: 'mock/echo',
      system: 'Be brief.',
      messages: say('How many tokens is this?'),
      tools: [WEATHER_TOOL],
    };
    const count = async (gateId: string) => {
      const res = await app.request('/v1/messages/count_tokens', {
        method: 'POST',
        headers: { 'x-api-key': user.key, 'x-gatehouse-gate-id': gateId },
        json: body,
      });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get('x-gatehouse-tokens-estimated')).toBe('true');
      return ((await res.json()) as { input_tokens: number }).input_tokens;
    };
    const plain = await count(bare.id);
    expect(plain).toBeGreaterThan(20);
    expect(await count(prompted.id)).toBeGreaterThan(plain + 100);
    // A conversation's tool calls are input too.
    const call = {
      type: 'tool_use',
      id: 'toolu_1',
      name: 'get_weather',
      input: { city: 'Oslo '.repeat(50) },
    };
    body.messages = [
      ...say('Weather?'),
      { role: 'assistant', content: [call] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'cold' }] },
    ] as never;
    expect(await count(bare.id)).toBeGreaterThan(plain + 50);

    const bad = await app.request('/v1/messages/count_tokens', {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'x-gatehouse-gate-id': bare.id },
      json: { model: 'mock/echo' },
    });
    expect((await errorOf(bad, 400)).message).toContain('messages');
  });
});
