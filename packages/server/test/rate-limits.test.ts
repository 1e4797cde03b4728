/**
 * Rate limits through HTTP: `rateLimitRpm` and `rateLimitTpm` on gates and on API keys, set and
 * validated in REST and GraphQL, and enforced on every route through a gate with a 429
 * `rate_limited` and Retry-After in that route's error shape, logged as a refused request. The
 * windows themselves (expiry, Redis) are rate-limit-windows.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { messages } from './support/anthropic.ts';
import { useTestApp } from './support/app.ts';
import { chat, completions, logEntriesOf, say } from './support/chat.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type Shape = 'native' | 'openai' | 'anthropic';
type Route = {
  name: string;
  shape: Shape;
  taskType?: 'embeddings';
  send(user: TestUser, gateId: string): Promise<Response>;
};

const gateHeader = (gateId: string) => ({ 'x-gatehouse-gate-id': gateId });

const ROUTES: Route[] = [
  { name: '/v3/chat', shape: 'native', send: (user, gateId) => chat(app, user, gateId) },
  {
    name: '/v3/chat streamed',
    shape: 'native',
    send: (user, gateId) => chat(app, user, gateId, { stream: true }),
  },
  { name: '/v1/chat/completions', shape: 'openai', send: (user, gateId) => completions(app, user, gateId) },
  {
    name: '/v1/chat/completions streamed',
    shape: 'openai',
    send: (user, gateId) => completions(app, user, gateId, { stream: true }),
  },
  {
    name: '/v1/responses',
    shape: 'openai',
    send: (user, gateId) =>
      app.request('/v1/responses', {
        method: 'POST',
        headers: { ...user.auth, ...gateHeader(gateId) },
        json: { model: 'mock/echo', input: 'hello' },
      }),
  },
  {
    name: '/v1/messages',
    shape: 'anthropic',
    send: (user, gateId) => messages(app, user, gateId, { messages: say('hello') }),
  },
  {
    name: '/v3/embeddings',
    shape: 'native',
    taskType: 'embeddings',
    send: (user, gateId) =>
      app.request('/v3/embeddings', {
        method: 'POST',
        headers: user.auth,
        json: { gateId, data: { input: ['hello'] } },
      }),
  },
  {
    name: '/v1/embeddings',
    shape: 'openai',
    taskType: 'embeddings',
    send: (user, gateId) =>
      app.request('/v1/embeddings', {
        method: 'POST',
        headers: { ...user.auth, ...gateHeader(gateId) },
        json: { model: 'mock/embed', input: 'hello' },
      }),
  },
];

/** The message of a 429 in the route's shape, checked to be that shape. */
async function refusalMessage(res: Response, shape: Shape): Promise<string> {
  expect(res.status, await res.clone().text()).toBe(429);
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
  const body = (await res.json()) as { error: { message: string } };
  if (shape === 'native') {
    expect(body).toMatchObject({
      error: { code: 'rate_limited', details: { retryAfterSeconds: Number(retryAfter) } },
    });
    return body.error.message;
  }
  if (shape === 'openai') {
    expect(body).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limited', param: null } });
    return body.error.message;
  }
  expect(body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  return body.error.message;
}

function gateFor(route: Route, user: TestUser, overrides: Record<string, unknown> = {}) {
  const model = route.taskType === 'embeddings' ? { taskType: 'embeddings', model: 'mock/embed' } : {};
  return createGate(app, user, { ...model, ...overrides });
}

/** A new key of the user's, with `fields` (its limits), as a user of its own to send requests with. */
async function keyOf(user: TestUser, fields: Record<string, unknown>): Promise<TestUser & { keyId: string }> {
  const res = await app.request('/v1/api-keys', {
    method: 'POST',
    headers: user.auth,
    json: { name: 'batch job', ...fields },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const created = (await res.json()) as { id: string; key: string };
  return { ...user, key: created.key, auth: { authorization: `Bearer ${created.key}` }, keyId: created.id };
}

async function sendAll(count: number, send: () => Promise<Response>) {
  const responses = await Promise.all(Array.from({ length: count }, send));
  // Streams are read to their end, so each request has settled before the next step.
  await Promise.all(responses.map((r) => r.clone().text()));
  return responses;
}

describe.each(ROUTES)('rate limits on $name', (route) => {
  it('admits 10 requests a minute on a gate with rateLimitRpm 10 and refuses the 11th', async () => {
    const user = await signUpUser(app);
    const gate = await gateFor(route, user, { rateLimitRpm: 10 });
    const answered = await sendAll(10, () => route.send(user, gate.id));
    expect(answered.map((r) => r.status)).toEqual(Array(10).fill(200));
    const message = await refusalMessage(await route.send(user, gate.id), route.shape);
    expect(message).toMatch(
      new RegExp(
        `^Gate "${gate.name}" allows 10 requests per minute \\(rateLimitRpm\\); try again in \\d+ seconds?$`,
      ),
    );
    // Logged as refused, as a spending refusal is.
    const entries = await logEntriesOf(app, gate.id);
    expect(entries.map((e) => e.statusCode).sort()).toEqual([...Array(10).fill(200), 429]);
    expect(entries.find((e) => e.statusCode === 429)).toMatchObject({
      success: false,
      errorCode: 'rate_limited',
      errorMessage: message,
      attempts: [],
    });
  });

  it("admits 10 requests a minute with a key whose rateLimitRpm is 10, over any of the account's gates", async () => {
    const user = await signUpUser(app);
    const key = await keyOf(user, { rateLimitRpm: 10 });
    const [one, two] = [await gateFor(route, user), await gateFor(route, user)];
    const answered = [
      ...(await sendAll(5, () => route.send(key, one.id))),
      ...(await sendAll(5, () => route.send(key, two.id))),
    ];
    expect(answered.map((r) => r.status)).toEqual(Array(10).fill(200));
    const message = await refusalMessage(await route.send(key, one.id), route.shape);
    expect(message).toMatch(/^API key "batch job" allows 10 requests per minute \(rateLimitRpm\)/);
    // The account's other keys are not held to it.
    expect((await route.send(user, one.id)).status).toBe(200);
  });
});

describe('tokens per minute', () => {
  it("refuses a prompt over the gate's limit at admission, before any provider call", async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { rateLimitTpm: 50 });
    const res = await chat(app, user, gate.id, { messages: say('word '.repeat(200)) });
    expect(await refusalMessage(res, 'native')).toMatch(
      new RegExp(
        `^Gate "${gate.name}" allows 50 tokens per minute \\(rateLimitTpm\\), and this request's prompt alone is ~\\d+ tokens`,
      ),
    );
    const [entry] = await logEntriesOf(app, gate.id);
    expect(entry).toMatchObject({ statusCode: 429, errorCode: 'rate_limited', attempts: [] });
  });

  it('counts what the provider reports once answered: the prompt and the completion', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { rateLimitTpm: 450 });
    const prompt = say('word '.repeat(150).trim());
    const first = await chat(app, user, gate.id, { messages: prompt });
    expect(first.status, await first.clone().text()).toBe(200);
    const { usage } = (await first.json()) as { usage: { promptTokens: number; completionTokens: number } };
    // ~154 prompt tokens each, but the first counts 188 + 189 once answered: the second does not fit.
    const second = await chat(app, user, gate.id, { messages: prompt });
    expect(second.status).toBe(429);
    const body = (await second.json()) as { error: { message: string; details: Record<string, unknown> } };
    expect(body.error.details).toMatchObject({
      limit: 'rateLimitTpm',
      usedInWindow: usage.promptTokens + usage.completionTokens,
    });
    expect(body.error.message).toMatch(/allows 450 tokens per minute \(rateLimitTpm\)/);
  });

  it("holds a key's tokens per minute beside the gate's", async () => {
    const user = await signUpUser(app);
    const key = await keyOf(user, { rateLimitTpm: 50 });
    const gate = await createGate(app, user, { rateLimitTpm: 100_000 });
    const res = await completions(app, key, gate.id, { messages: say('word '.repeat(200)) });
    expect(await refusalMessage(res, 'openai')).toMatch(/^API key "batch job" allows 50 tokens per minute/);
  });
});

describe('rate limit fields', () => {
  it('are set, read back and lifted on a gate through REST', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { rateLimitRpm: 600, rateLimitTpm: 90_000 });
    expect(gate).toMatchObject({ rateLimitRpm: 600, rateLimitTpm: 90_000 });
    const patched = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { rateLimitRpm: null },
    });
    expect(await patched.json()).toMatchObject({ rateLimitRpm: null, rateLimitTpm: 90_000 });
    const plain = await createGate(app, user);
    expect(plain).toMatchObject({ rateLimitRpm: null, rateLimitTpm: null });
  });

  it.each([
    [
      'zero',
      { rateLimitRpm: 0 },
      'rateLimitRpm',
      'must be at least 1 request per minute (null for no limit)',
    ],
    ['a fraction', { rateLimitRpm: 2.5 }, 'rateLimitRpm', 'must be a whole number of requests per minute'],
    [
      'a string',
      { rateLimitTpm: '1000' },
      'rateLimitTpm',
      'must be a whole number of tokens per minute, or null for no limit',
    ],
    [
      'too many requests',
      { rateLimitRpm: 1_000_001 },
      'rateLimitRpm',
      'must be at most 1,000,000 requests per minute',
    ],
    [
      'too many tokens',
      { rateLimitTpm: 2_000_000_000 },
      'rateLimitTpm',
      'must be at most 1,000,000,000 tokens per minute',
    ],
  ])(
    'refuse %s on a gate and on a key with a 400 naming the field',
    async (_label, fields, path, message) => {
      const user = await signUpUser(app);
      const gate = await app.request('/v1/gates', {
        method: 'POST',
        headers: user.auth,
        json: { name: 'limited', model: 'mock/echo', taskType: 'chat', ...fields },
      });
      expect(gate.status).toBe(400);
      expect(await gate.json()).toMatchObject({
        error: { code: 'invalid_request', details: { issues: [{ path, message }] } },
      });
      const key = await app.request('/v1/api-keys', {
        method: 'POST',
        headers: user.auth,
        json: { name: 'limited', ...fields },
      });
      expect(key.status).toBe(400);
      expect(await key.json()).toMatchObject({ error: { details: { issues: [{ path, message }] } } });
    },
  );

  it("are changed on a key with PATCH /v1/api-keys/:id, which refuses another account's key", async () => {
    const user = await signUpUser(app);
    const key = await keyOf(user, { rateLimitRpm: 10 });
    const patch = (who: TestUser, id: string, json: unknown) =>
      app.request(`/v1/api-keys/${id}`, { method: 'PATCH', headers: who.auth, json });
    const changed = await patch(user, key.keyId, { rateLimitRpm: null, rateLimitTpm: 5000 });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({
      id: key.keyId,
      name: 'batch job',
      rateLimitRpm: null,
      rateLimitTpm: 5000,
    });
    const listed = (await (await app.request('/v1/api-keys', { headers: user.auth })).json()) as {
      apiKeys: { id: string; rateLimitTpm: number | null }[];
    };
    expect(listed.apiKeys.find((k) => k.id === key.keyId)?.rateLimitTpm).toBe(5000);
    expect((await patch(user, key.keyId, {})).status).toBe(400);
    expect((await patch(user, key.keyId, { rateLimitTpm: 0 })).status).toBe(400);
    expect((await patch(user, key.keyId, { revokedAt: null })).status).toBe(400);
    const other = await signUpUser(app);
    expect((await patch(other, key.keyId, { rateLimitRpm: 1 })).status).toBe(404);
  });

  it('hold a key to its new limit at once after a change', async () => {
    const user = await signUpUser(app);
    const key = await keyOf(user, {});
    const gate = await createGate(app, user);
    expect((await chat(app, key, gate.id)).status).toBe(200);
    await app.request(`/v1/api-keys/${key.keyId}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { rateLimitRpm: 1 },
    });
    expect((await chat(app, key, gate.id)).status).toBe(200);
    expect((await chat(app, key, gate.id)).status).toBe(429);
  });

  it('are set and validated through GraphQL, on gates and on keys', async () => {
    const user = await signUpUser(app);
    const gateInput = { name: 'graphql limited', model: 'mock/echo', taskType: 'CHAT' };
    const createGateMutation = `mutation($input: GateInput!) { createGate(input: $input) {
      __typename
      ... on MutationCreateGateSuccess { data { id rateLimitRpm rateLimitTpm } }
      ... on ValidationError { code issues { path message } }
    } }`;
    const refused = await graphql(app, user, createGateMutation, {
      input: { ...gateInput, rateLimitRpm: 0 },
    });
    expect(refused.data?.createGate).toMatchObject({
      __typename: 'ValidationError',
      code: 'invalid_request',
      issues: [
        { path: 'rateLimitRpm', message: 'must be at least 1 request per minute (null for no limit)' },
      ],
    });
    const created = await graphql(app, user, createGateMutation, {
      input: { ...gateInput, rateLimitRpm: 60, rateLimitTpm: 1000 },
    });
    expect(created.data?.createGate).toMatchObject({ data: { rateLimitRpm: 60, rateLimitTpm: 1000 } });

    const createKey = await graphql<{
      createApiKey: { data: { apiKey: { id: string; rateLimitRpm: number } } };
    }>(
      app,
      user,
      `mutation { createApiKey(name: "graphql", rateLimitRpm: 30) {
        ... on MutationCreateApiKeySuccess { data { apiKey { id rateLimitRpm rateLimitTpm } } }
      } }`,
    );
    const keyId = createKey.data?.createApiKey.data.apiKey.id;
    expect(createKey.data?.createApiKey.data.apiKey).toMatchObject({ rateLimitRpm: 30, rateLimitTpm: null });
    const updateKey = `mutation($id: ID!, $input: ApiKeyInput!) { updateApiKey(id: $id, input: $input) {
      __typename
      ... on MutationUpdateApiKeySuccess { data { rateLimitRpm rateLimitTpm } }
      ... on ValidationError { issues { path message } }
    } }`;
    const badKey = await graphql(app, user, updateKey, { id: keyId, input: { rateLimitTpm: -5 } });
    expect(badKey.data?.updateApiKey).toMatchObject({
      __typename: 'ValidationError',
      issues: [{ path: 'rateLimitTpm', message: 'must be at least 1 token per minute (null for no limit)' }],
    });
    const goodKey = await graphql(app, user, updateKey, {
      id: keyId,
      input: { rateLimitRpm: null, rateLimitTpm: 800 },
    });
    expect(goodKey.data?.updateApiKey).toMatchObject({ data: { rateLimitRpm: null, rateLimitTpm: 800 } });
  });
});
