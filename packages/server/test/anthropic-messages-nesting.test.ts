/**
 * Structures of the client's on /v1/messages nested past their bound (64) though within the
 * body's (512): a tool call's input and a tool's input_schema, 400 objects deep. Each is a 400
 * invalid_request_error naming it, on /v1/messages (plain and streamed) and count_tokens alike,
 * never a stack overflow in the translation, the token estimate or the log row of a paid answer.
 */
import { RESPONSE_SCHEMA_LIMITS } from '@gatehouse/rules/jsonLimits';
import { describe, expect, it } from 'vitest';
import type { AnthropicErrorBody } from './support/anthropic.ts';
import { useTestApp } from './support/app.ts';
import { logEntryOf } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

const DEPTH = 400;
/** Where the nested object goes in a body. */
const DEEP = '"__deep__"';

/** `{"a":{"a":…{}…}}`, `depth` objects deep, as text. */
const nestedText = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

const WEATHER_SCHEMA = { type: 'object', properties: { city: { type: 'string' } } };

const calledTool = (input: unknown) => ({
  messages: [
    { role: 'user', content: 'weather in Paris?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
  ],
  tools: [{ name: 'get_weather', input_schema: WEATHER_SCHEMA }],
});

const offeredTool = (inputSchema: unknown) => ({
  messages: [{ role: 'user', content: 'weather in Paris?' }],
  tools: [{ name: 'get_weather', input_schema: inputSchema }],
});

/** Each body with the field its deep object sits in. */
const CASES: [string, Record<string, unknown>, string][] = [
  ['a tool call’s input', calledTool(DEEP.slice(1, -1)), 'messages.1.content.0.input'],
  ['a tool’s input_schema', offeredTool(DEEP.slice(1, -1)), 'tools.0.input_schema'],
];

const ENDPOINTS: [string, string, Record<string, unknown>][] = [
  ['/v1/messages', '/v1/messages', { max_tokens: 64 }],
  ['/v1/messages, streamed', '/v1/messages', { max_tokens: 64, stream: true }],
  ['/v1/messages/count_tokens', '/v1/messages/count_tokens', {}],
];

function post(user: TestUser, gateId: string, path: string, body: Record<string, unknown>, deep: string) {
  const text = JSON.stringify({ model: 'mock/echo', ...body }).replace(DEEP, deep);
  return app.request(path, {
    method: 'POST',
    headers: {
      'x-api-key': user.key,
      'anthropic-version': '2023-06-01',
      'x-gatehouse-gate-id': gateId,
      'content-type': 'application/json',
    },
    body: text,
  });
}

describe.each(CASES)('%s nested 400 deep', (_name, body, field) => {
  it.each(ENDPOINTS)('is a 400 invalid_request_error naming it on %s', async (_e, path, extra) => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await post(user, gate.id, path, { ...body, ...extra }, nestedText(DEPTH));
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(400);
    const { error } = JSON.parse(text) as AnthropicErrorBody;
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain(field);
    expect(error.message).toMatch(/nest/);
    expect((await app.request('/readyz')).status).toBe(200);
  });

  it('is answered and logged when exactly as deep as allowed', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const deep = nestedText(RESPONSE_SCHEMA_LIMITS.maxDepth);
    const res = await post(user, gate.id, '/v1/messages', { ...body, max_tokens: 64 }, deep);
    expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(200);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry.success).toBe(true);
    // In the tool call's arguments the input is JSON text, its quotes escaped.
    expect(JSON.stringify(entry.providerRequest)).toMatch(/\{\\*"a\\*":\{\}\}/);
  });
});

describe('metadata nested 400 deep', () => {
  it('is answered and logged: only metadata.user_id is read, the rest is dropped unwalked', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const body = {
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 64,
      metadata: { user_id: 'u-1', extra: DEEP.slice(1, -1) },
    };
    const res = await post(user, gate.id, '/v1/messages', body, nestedText(DEPTH));
    expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(200);
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry.metadata).toEqual({ user_id: 'u-1' });
  });
});
