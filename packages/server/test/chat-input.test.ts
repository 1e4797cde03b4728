import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { logCountOf, logEntriesOf, type NativeError, type OpenAIError, say } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

const ELEVEN_MB = 11 * 1024 * 1024;

function post(path: string, user: TestUser | null, body: string, headers: Record<string, string> = {}) {
  return app.request(path, {
    method: 'POST',
    headers: { ...(user?.auth ?? {}), 'content-type': 'application/json', ...headers },
    body,
  });
}

async function nativeError(res: Response, status: number, code: string) {
  expect(res.status, await res.clone().text()).toBe(status);
  const body = (await res.json()) as NativeError;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ code, message: expect.any(String) });
  return body;
}

async function openAIError(res: Response, status: number, type: string) {
  expect(res.status, await res.clone().text()).toBe(status);
  const body = (await res.json()) as OpenAIError;
  expect(Object.keys(body)).toEqual(['error']);
  // request_id names the log entry a failure left, as x-gatehouse-request-id does; none without one.
  const { request_id: requestId, ...rest } = body.error as OpenAIError['error'] & { request_id?: string };
  expect(Object.keys(rest).sort()).toEqual(['code', 'message', 'param', 'type']);
  if (requestId !== undefined) expect(requestId).toBe(res.headers.get('x-gatehouse-request-id'));
  expect(body.error).toMatchObject({ type, message: expect.any(String) });
  return body;
}

const paths = (body: NativeError) => body.error.details?.issues?.map((i) => i.path) ?? [];

/** The one log entry a refused request left on `gateId`, which must exist. */
async function loggedFailure(gateId: string, statusCode: number) {
  const entries = await logEntriesOf(app, gateId);
  expect(entries).toHaveLength(1);
  const [entry] = entries;
  expect(entry).toMatchObject({ success: false, statusCode, gateId });
  expect(entry?.errorMessage).toBeTruthy();
  return entry;
}

const BAD_MESSAGES: [string, unknown, string][] = [
  ['missing', undefined, 'messages'],
  ['empty', [], 'messages'],
  ['a role no chat has', [{ role: 'robot', content: 'beep' }], 'messages.0.role'],
  ['content that is a number', [{ role: 'user', content: 42 }], 'messages.0.content'],
  ['a message that is a string', ['hello'], 'messages.0'],
  ['a tool message without tool_call_id', [{ role: 'tool', content: 'x' }], 'messages.0.tool_call_id'],
];

describe('bad input on /v3/chat', () => {
  it('answers 400 naming gateId when the body names no gate, and logs nothing', async () => {
    const user = await signUpUser(app);
    const body = await nativeError(
      await post('/v3/chat', user, JSON.stringify({ data: { messages: say('hi') } })),
      400,
      'invalid_request',
    );
    expect(paths(body)).toEqual(['gateId']);
    expect(await logCountOf(app, user)).toBe(0);
  });

  it('answers 400 for a gate id that is not a UUID, and logs nothing', async () => {
    const user = await signUpUser(app);
    const res = await post(
      '/v3/chat',
      user,
      JSON.stringify({ gateId: 'my-gate', data: { messages: say('hi') } }),
    );
    expect(paths(await nativeError(res, 400, 'invalid_request'))).toEqual(['gateId']);
    expect(await logCountOf(app, user)).toBe(0);
  });

  it('answers 404 for a gate that does not exist, and logs nothing', async () => {
    const user = await signUpUser(app);
    const res = await post(
      '/v3/chat',
      user,
      JSON.stringify({ gateId: randomUUID(), data: { messages: say('hi') } }),
    );
    await nativeError(res, 404, 'not_found');
    expect(await logCountOf(app, user)).toBe(0);
  });

  it('answers 404 for another user gate, as for one that does not exist, and logs nothing', async () => {
    const owner = await signUpUser(app);
    const other = await signUpUser(app);
    const gate = await createGate(app, owner);
    const res = await post(
      '/v3/chat',
      other,
      JSON.stringify({ gateId: gate.id, data: { messages: say('hi') } }),
    );
    const body = await nativeError(res, 404, 'not_found');
    expect(body.error.message).not.toContain(gate.name);
    expect(await logCountOf(app, other)).toBe(0);
    expect(await logCountOf(app, owner)).toBe(0);
  });

  it('answers 401 without an API key', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await nativeError(
      await post('/v3/chat', null, JSON.stringify({ gateId: gate.id, data: { messages: say('hi') } })),
      401,
      'unauthorized',
    );
  });

  it('answers 400 for a gate whose task type is not chat, and logs the failure against it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const res = await post(
      '/v3/chat',
      user,
      JSON.stringify({ gateId: gate.id, data: { messages: say('hi') } }),
    );
    const body = await nativeError(res, 400, 'invalid_request');
    expect(body.error.message).toMatch(/embeddings gate/);
    const entry = await loggedFailure(gate.id, 400);
    expect(entry?.errorMessage).toMatch(/embeddings/);
  });

  it('answers 400 when data is missing, and logs the failure against the gate', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const body = await nativeError(
      await post('/v3/chat', user, JSON.stringify({ gateId: gate.id })),
      400,
      'invalid_request',
    );
    expect(paths(body)).toEqual(['data']);
    await loggedFailure(gate.id, 400);
  });

  it.each(BAD_MESSAGES)(
    'answers 400 for messages %s, and logs the failure against the gate',
    async (_what, messages, path) => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user);
      const res = await post('/v3/chat', user, JSON.stringify({ gateId: gate.id, data: { messages } }));
      const body = await nativeError(res, 400, 'invalid_request');
      expect(paths(body)).toContain(`data.${path}`);
      const entry = await loggedFailure(gate.id, 400);
      expect(entry).toMatchObject({ errorCode: 'invalid_request', modelUsed: null });
    },
  );

  it('answers 413 payload_too_large for a body of 11 MB, before it resolves the gate', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const huge = JSON.stringify({ gateId: gate.id, data: { messages: say('x'.repeat(ELEVEN_MB)) } });
    await nativeError(await post('/v3/chat', user, huge), 413, 'payload_too_large');
    expect(await logCountOf(app, user)).toBe(0);
  });

  it('answers 400 for a body that is not JSON, and logs nothing', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const body = await nativeError(
      await post('/v3/chat', user, `{"gateId": "${gate.id}", "data": {`),
      400,
      'invalid_request',
    );
    expect(body.error.message).toMatch(/not valid JSON/);
    expect(await logCountOf(app, user)).toBe(0);
  });
});

describe('bad input on /v1/chat/completions', () => {
  const completion = (gateId: string | null, body: Record<string, unknown>, user: TestUser) =>
    post('/v1/chat/completions', user, JSON.stringify({ model: 'mock/echo', ...body }), {
      ...(gateId && { 'x-gatehouse-gate-id': gateId }),
    });

  it('answers 400 with param gateId when no gate is named, and logs nothing', async () => {
    const user = await signUpUser(app);
    const body = await openAIError(
      await completion(null, { messages: say('hi') }, user),
      400,
      'invalid_request_error',
    );
    expect(body.error).toMatchObject({ param: 'gateId', code: 'invalid_request' });
    expect(body.error.message).toMatch(/x-gatehouse-gate-id/);
    expect(await logCountOf(app, user)).toBe(0);
  });

  it('answers 400 for a gate header that is not a UUID', async () => {
    const user = await signUpUser(app);
    const body = await openAIError(
      await completion('not-a-uuid', { messages: say('hi') }, user),
      400,
      'invalid_request_error',
    );
    expect(body.error.param).toBe('gateId');
  });

  it('answers 404 not_found_error for an unknown gate and for another user gate, logging nothing', async () => {
    const owner = await signUpUser(app);
    const other = await signUpUser(app);
    const gate = await createGate(app, owner);
    await openAIError(await completion(randomUUID(), { messages: say('hi') }, other), 404, 'not_found_error');
    await openAIError(await completion(gate.id, { messages: say('hi') }, other), 404, 'not_found_error');
    // The gate as the model, or in the body, is resolved for its owner only, too.
    await openAIError(
      await completion(null, { model: gate.id, messages: say('hi') }, other),
      404,
      'not_found_error',
    );
    await openAIError(
      await completion(null, { gateId: gate.id, messages: say('hi') }, other),
      404,
      'not_found_error',
    );
    expect(await logCountOf(app, other)).toBe(0);
    expect(await logCountOf(app, owner)).toBe(0);
  });

  it('answers 401 authentication_error without an API key', async () => {
    const res = await post(
      '/v1/chat/completions',
      null,
      JSON.stringify({ model: 'mock/echo', messages: say('hi') }),
      {
        'x-gatehouse-gate-id': randomUUID(),
      },
    );
    await openAIError(res, 401, 'authentication_error');
  });

  it('answers 400 for a gate whose task type is not chat, and logs the failure against it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    await openAIError(await completion(gate.id, { messages: say('hi') }, user), 400, 'invalid_request_error');
    await loggedFailure(gate.id, 400);
  });

  it.each(BAD_MESSAGES)(
    'answers 400 for messages %s, and logs the failure against the gate',
    async (_what, messages, path) => {
      const user = await signUpUser(app);
      const gate = await createGate(app, user);
      const body = await openAIError(
        await completion(gate.id, { messages }, user),
        400,
        'invalid_request_error',
      );
      expect(body.error.param).toBe(path);
      const entry = await loggedFailure(gate.id, 400);
      expect(entry?.endpoint).toBe('/v1/chat/completions');
    },
  );

  it('answers 400 for a body that is not JSON, and logs nothing', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await openAIError(
      await post('/v1/chat/completions', user, '{"model":', { 'x-gatehouse-gate-id': gate.id }),
      400,
      'invalid_request_error',
    );
    expect(await logCountOf(app, user)).toBe(0);
  });

  it('answers 413 for a body of 11 MB, before it resolves the gate', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completion(gate.id, { messages: say('x'.repeat(ELEVEN_MB)) }, user);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/exceeds/);
    expect(await logCountOf(app, user)).toBe(0);
  });

  it('answers that 413 in the OpenAI error shape', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await completion(gate.id, { messages: say('x'.repeat(ELEVEN_MB)) }, user);
    await openAIError(res, 413, 'invalid_request_error');
  });
});

describe('naming the gate on /v1/chat/completions', () => {
  type Placement = (id: string) => [headers: Record<string, string>, body: Record<string, string>];
  it.each<[string, Placement]>([
    ['the x-gatehouse-gate-id header', (id) => [{ 'x-gatehouse-gate-id': id }, {}]],
    ['a gateId in the body', (id) => [{}, { gateId: id }]],
    ['the gate UUID as the model', (id) => [{}, { model: id }]],
  ])('finds the gate by %s', async (_how, where) => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/fast' });
    const [headers, body] = where(gate.id);
    const res = await post(
      '/v1/chat/completions',
      user,
      JSON.stringify({ model: 'mock/fast', messages: say('hi'), ...body }),
      headers,
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('mock/fast');
    expect(res.headers.get('x-gatehouse-ignored-overrides')).toBeNull();
  });

  it('lists the caller gates and their models on GET /v1/models', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { routingStrategy: 'fallback', fallbackModels: ['mock/smart'] });
    await createGate(app, await signUpUser(app), { model: 'mock/fast' });
    const res = await app.request('/v1/models', { headers: user.auth });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; data: { id: string; object: string }[] };
    expect(body.object).toBe('list');
    expect(body.data.map((m) => m.id)).toEqual([gate.id, 'mock/echo', 'mock/smart']);
  });
});
