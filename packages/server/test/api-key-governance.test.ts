/**
 * Keys that govern, through HTTP: a key's spending fields, scope (gates, task types), expiry,
 * name and metadata, set and validated in REST and GraphQL and read back; the scope enforced on
 * every route through a gate (403 key_scope in that route's error shape, logged), expiry on
 * every authenticated route (401 key_expired), rolling a key's secret with a grace period, and
 * no account reaching another's keys.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { messages } from './support/anthropic.ts';
import { useTestApp } from './support/app.ts';
import { chat, completions, logEntriesOf, say } from './support/chat.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type Shape = 'native' | 'openai' | 'anthropic';
type KeyUser = TestUser & { keyId: string };

/** A new key of the user's with `fields`, as a user of its own to send requests with. */
async function keyOf(user: TestUser, fields: Record<string, unknown> = {}): Promise<KeyUser> {
  const res = await app.request('/v1/api-keys', {
    method: 'POST',
    headers: user.auth,
    json: { name: 'batch job', ...fields },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const created = (await res.json()) as { id: string; key: string };
  return as(user, created.key, created.id);
}

const as = (user: TestUser, key: string, keyId: string): KeyUser => ({
  ...user,
  key,
  keyId,
  auth: { authorization: `Bearer ${key}` },
});

const embeddings = (user: TestUser, gateId: string) =>
  app.request('/v3/embeddings', {
    method: 'POST',
    headers: user.auth,
    json: { gateId, data: { input: ['hi'] } },
  });

const ROUTES: { name: string; shape: Shape; send(user: TestUser, gateId: string): Promise<Response> }[] = [
  { name: '/v3/chat', shape: 'native', send: (user, gateId) => chat(app, user, gateId) },
  { name: '/v1/chat/completions', shape: 'openai', send: (user, gateId) => completions(app, user, gateId) },
  {
    name: '/v1/messages',
    shape: 'anthropic',
    send: (user, gateId) => messages(app, user, gateId, { messages: say('hello') }),
  },
  {
    name: '/v1/responses',
    shape: 'openai',
    send: (user, gateId) =>
      app.request('/v1/responses', {
        method: 'POST',
        headers: { ...user.auth, 'x-gatehouse-gate-id': gateId },
        json: { model: 'mock/echo', input: 'hello' },
      }),
  },
];

/** The refusal's code and message, checked to be in the route's error shape. */
async function refusal(res: Response, status: number, shape: Shape, code: string) {
  expect(res.status, await res.clone().text()).toBe(status);
  const body = (await res.json()) as { error: { message: string; details?: unknown } };
  if (shape === 'native') expect(body).toMatchObject({ error: { code } });
  const openAIType = status === 401 ? 'authentication_error' : 'permission_error';
  if (shape === 'openai') expect(body).toMatchObject({ error: { type: openAIType, code } });
  if (shape === 'anthropic') {
    expect(body).toMatchObject({ type: 'error', error: { type: openAIType } });
  }
  return body.error;
}

describe.each(ROUTES)('a key scoped to one gate, on $name', (route) => {
  it('answers on its gate and refuses any other with 403 key_scope naming it, logged', async () => {
    const user = await signUpUser(app);
    const [a, b] = [await createGate(app, user), await createGate(app, user)];
    const key = await keyOf(user, { allowedGates: [a.id] });
    expect((await route.send(key, a.id)).status).toBe(200);
    const error = await refusal(await route.send(key, b.id), 403, route.shape, 'key_scope');
    expect(error.message).toBe(`The API key "batch job" may not use gate ${b.id}`);
    // The account's unscoped key still reaches gate B.
    expect((await route.send(user, b.id)).status).toBe(200);
    const [entry] = await logEntriesOf(app, b.id);
    expect(entry).toMatchObject({ statusCode: 403, success: false, errorCode: 'key_scope', attempts: [] });
  });

  it('refuses an expired key with 401 key_expired', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const key = await keyOf(user, { expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    // Moved into the past in the database: the API takes only a future time.
    await app.db.prisma.apiKey.update({
      where: { id: key.keyId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const error = await refusal(await route.send(key, gate.id), 401, route.shape, 'key_expired');
    expect(error.message).toMatch(/^This API key expired at \d{4}-/);
  });
});

describe('scope on the task routes', () => {
  it('refuses a gate outside the scope on /v3/embeddings and /v1/embeddings', async () => {
    const user = await signUpUser(app);
    const a = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const b = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const key = await keyOf(user, { allowedGates: [a.id] });
    expect((await embeddings(key, a.id)).status).toBe(200);
    const native = await refusal(await embeddings(key, b.id), 403, 'native', 'key_scope');
    expect(native).toMatchObject({ details: { gateId: b.id } });
    const res = await app.request('/v1/embeddings', {
      method: 'POST',
      headers: { ...key.auth, 'x-gatehouse-gate-id': b.id },
      json: { model: 'mock/embed', input: 'hello' },
    });
    expect((await refusal(res, 403, 'openai', 'key_scope')).message).toContain(b.id);
  });

  it('refuses a task type outside allowedTaskTypes, naming it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const key = await keyOf(user, { allowedTaskTypes: ['chat'] });
    const error = await refusal(await embeddings(key, gate.id), 403, 'native', 'key_scope');
    expect(error).toMatchObject({
      message: 'The API key "batch job" may not make embeddings requests',
      details: { taskType: 'embeddings' },
    });
    const chatGate = await createGate(app, user);
    expect((await chat(app, key, chatGate.id)).status).toBe(200);
  });
});

describe('scope on /v3/video', () => {
  it('refuses a video gate outside the scope, and a key limited to chat, with 403 key_scope', async () => {
    const user = await signUpUser(app);
    const [a, b] = [
      await createGate(app, user, { taskType: 'video', model: 'mock/video' }),
      await createGate(app, user, { taskType: 'video', model: 'mock/video' }),
    ];
    const send = (key: TestUser, gateId: string) =>
      app.request('/v3/video', {
        method: 'POST',
        headers: key.auth,
        json: { gateId, data: { prompt: 'clouds' } },
      });
    const scoped = await keyOf(user, { allowedGates: [a.id] });
    expect(await refusal(await send(scoped, b.id), 403, 'native', 'key_scope')).toMatchObject({
      details: { gateId: b.id },
    });
    const chatOnly = await keyOf(user, { allowedTaskTypes: ['chat'] });
    expect(await refusal(await send(chatOnly, a.id), 403, 'native', 'key_scope')).toMatchObject({
      details: { taskType: 'video' },
    });
  });
});

describe('expiry', () => {
  it('refuses an expired key on the control plane and GraphQL too', async () => {
    const user = await signUpUser(app);
    const key = await keyOf(user, { expiresAt: '2999-01-01T00:00:00Z' });
    expect((await app.request('/v1/gates', { headers: key.auth })).status).toBe(200);
    await app.db.prisma.apiKey.update({
      where: { id: key.keyId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    // A change of the key's name publishes it, so the cached key is read again.
    await patch(user, key.keyId, { name: 'batch job' });
    await refusal(await app.request('/v1/gates', { headers: key.auth }), 401, 'native', 'key_expired');
    const { errors } = await graphql(app, key, '{ apiKeys { id } }');
    expect(errors?.[0]?.message).toMatch(/^This API key expired at/);
    // Lifting the expiry (null) lets it in again.
    await patch(user, key.keyId, { expiresAt: null });
    expect((await app.request('/v1/gates', { headers: key.auth })).status).toBe(200);
  });
});

async function patch(user: TestUser, id: string, json: unknown) {
  const res = await app.request(`/v1/api-keys/${id}`, { method: 'PATCH', headers: user.auth, json });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const roll = (user: TestUser, id: string, json: unknown) =>
  app.request(`/v1/api-keys/${id}/roll`, { method: 'POST', headers: user.auth, json });

describe('rolling a key', () => {
  it('gives the same key a new secret; the old one works during its grace and is refused after', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const old = await keyOf(user, {
      allowedGates: [gate.id],
      rateLimitRpm: 100,
      metadata: { team: 'batch' },
    });
    expect((await chat(app, old, gate.id)).status).toBe(200);
    const res = await roll(user, old.keyId, { graceSeconds: 3600 });
    expect(res.status, await res.clone().text()).toBe(200);
    const rolled = (await res.json()) as { id: string; key: string; prefix: string } & Record<
      string,
      unknown
    >;
    expect(rolled).toMatchObject({
      id: old.keyId,
      name: 'batch job',
      allowedGates: [gate.id],
      rateLimitRpm: 100,
      metadata: { team: 'batch' },
    });
    expect(rolled.key).not.toBe(old.key);
    expect(rolled.key.startsWith(rolled.prefix)).toBe(true);
    expect(Date.parse(rolled.previousKeyExpiresAt as string)).toBeGreaterThan(Date.now());
    const fresh = as(user, rolled.key, rolled.id);
    expect((await chat(app, fresh, gate.id)).status).toBe(200);
    expect((await chat(app, old, gate.id)).status).toBe(200);
    // The grace ends (moved in the database rather than waited for), and the change is published.
    await app.db.prisma.apiKey.update({
      where: { id: old.keyId },
      data: { previousKeyExpiresAt: new Date(Date.now() - 1000) },
    });
    await patch(user, old.keyId, { name: 'batch job' });
    await refusal(await chat(app, old, gate.id), 401, 'native', 'unauthorized');
    expect((await chat(app, fresh, gate.id)).status).toBe(200);
    // Requests made with either secret are the same key's.
    const entries = await logEntriesOf(app, gate.id);
    expect(entries.filter((e) => e.statusCode === 200)).toHaveLength(4);
  });

  it('with no grace, refuses the old secret at once', async () => {
    const user = await signUpUser(app);
    const old = await keyOf(user);
    expect((await app.request('/v1/gates', { headers: old.auth })).status).toBe(200);
    const res = await roll(user, old.keyId, { graceSeconds: 0 });
    const { key } = (await res.json()) as { key: string };
    await refusal(await app.request('/v1/gates', { headers: old.auth }), 401, 'native', 'unauthorized');
    expect((await app.request('/v1/gates', { headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
  });

  it('rolls through GraphQL, and refuses a revoked key', async () => {
    const user = await signUpUser(app);
    const old = await keyOf(user);
    const { data } = await graphql<{
      rollApiKey: { __typename: string; data: { key: string; apiKey: { id: string } } };
    }>(
      app,
      user,
      `mutation($id: ID!) { rollApiKey(id: $id, graceSeconds: 60) { __typename
        ... on MutationRollApiKeySuccess { data { key apiKey { id previousKeyExpiresAt } } } } }`,
      { id: old.keyId },
    );
    expect(data?.rollApiKey.data.apiKey.id).toBe(old.keyId);
    expect((await app.request('/v1/gates', { headers: old.auth })).status).toBe(200);
    await app.request(`/v1/api-keys/${old.keyId}`, { method: 'DELETE', headers: user.auth });
    const res = await roll(user, old.keyId, { graceSeconds: 0 });
    expect(res.status).toBe(409);
  });
});

describe('settings read back', () => {
  it('stores every field and answers it in REST and GraphQL', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const expiresAt = '2999-06-01T00:00:00.000Z';
    const key = await keyOf(user, {
      name: 'customer app',
      spendingLimit: 25,
      spendingLimitPeriod: 'total',
      spendingEnforcement: 'alert_only',
      allowedGates: [gate.id],
      allowedTaskTypes: ['chat', 'embeddings'],
      expiresAt,
      metadata: { owner: 'ana', tier: 2, paid: true },
    });
    const expected = {
      id: key.keyId,
      name: 'customer app',
      spendingLimit: 25,
      spendingLimitPeriod: 'total',
      spendingEnforcement: 'alert_only',
      spendingCurrent: 0,
      spendingResetsAt: null,
      spendingStatus: 'active',
      allowedGates: [gate.id],
      allowedTaskTypes: ['chat', 'embeddings'],
      expiresAt,
      metadata: { owner: 'ana', tier: 2, paid: true },
    };
    const list = await app.request('/v1/api-keys', { headers: user.auth });
    const { apiKeys } = (await list.json()) as { apiKeys: { id: string }[] };
    expect(apiKeys.find((k) => k.id === key.keyId)).toMatchObject(expected);
    const { data } = await graphql<{ apiKeys: Record<string, unknown>[] }>(
      app,
      user,
      `{ apiKeys { id spendingLimit spendingLimitPeriod spendingEnforcement spendingCurrent spendingStatus
         allowedGates allowedTaskTypes expiresAt metadata } }`,
    );
    expect(data?.apiKeys.find((k) => k.id === key.keyId)).toMatchObject({
      spendingLimitPeriod: 'TOTAL',
      spendingEnforcement: 'ALERT_ONLY',
      allowedTaskTypes: ['CHAT', 'EMBEDDINGS'],
      allowedGates: [gate.id],
      expiresAt,
      metadata: expected.metadata,
    });
    // The defaults of a key created with a name alone.
    const plain = await keyOf(user);
    const { apiKeys: again } = (await (await app.request('/v1/api-keys', { headers: user.auth })).json()) as {
      apiKeys: { id: string }[];
    };
    expect(again.find((k) => k.id === plain.keyId)).toMatchObject({
      spendingLimit: null,
      spendingLimitPeriod: 'monthly',
      spendingEnforcement: 'block',
      allowedGates: [],
      allowedTaskTypes: [],
      expiresAt: null,
      metadata: {},
      previousKeyExpiresAt: null,
    });
  });

  it("reads spendingCurrent as of now: a 'total' never resets, a day past is zero", async () => {
    const user = await signUpUser(app);
    const total = await keyOf(user, { spendingLimit: 10, spendingLimitPeriod: 'total' });
    const daily = await keyOf(user, { spendingLimit: 10, spendingLimitPeriod: 'daily' });
    const longAgo = new Date('2020-01-01T00:00:00Z');
    for (const id of [total.keyId, daily.keyId]) {
      await app.db.prisma.apiKey.update({
        where: { id },
        data: { spendingCurrent: 12.5, spendingPeriodStart: longAgo },
      });
    }
    const { apiKeys } = (await (await app.request('/v1/api-keys', { headers: user.auth })).json()) as {
      apiKeys: Record<string, unknown>[];
    };
    expect(apiKeys.find((k) => k.id === total.keyId)).toMatchObject({
      spendingCurrent: 12.5,
      spendingStatus: 'suspended',
      spendingResetsAt: null,
    });
    expect(apiKeys.find((k) => k.id === daily.keyId)).toMatchObject({
      spendingCurrent: 0,
      spendingStatus: 'active',
    });
  });
});

describe('validation', () => {
  const CASES: [string, Record<string, unknown>, string][] = [
    ['a negative spending limit', { spendingLimit: -1 }, 'spendingLimit'],
    ['a spending limit that is text', { spendingLimit: 'ten' }, 'spendingLimit'],
    ['a weekly period', { spendingLimitPeriod: 'weekly' }, 'spendingLimitPeriod'],
    ['an unknown enforcement', { spendingEnforcement: 'stop' }, 'spendingEnforcement'],
    ['a gate id that is no id', { allowedGates: ['gate-a'] }, 'allowedGates.0'],
    [
      'a gate named twice',
      { allowedGates: [randomUUID(), randomUUID()].flatMap((id) => [id, id]) },
      'allowedGates',
    ],
    ['an unknown task type', { allowedTaskTypes: ['painting'] }, 'allowedTaskTypes.0'],
    ['allowedGates that is no list', { allowedGates: 'all' }, 'allowedGates'],
    ['an expiry that is no time', { expiresAt: 'tomorrow' }, 'expiresAt'],
    ['an expiry in the past', { expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
    ['metadata that is a list', { metadata: ['a'] }, 'metadata'],
    ['metadata with a nested object', { metadata: { a: { b: 1 } } }, 'metadata.a'],
    [
      'metadata with 65 keys',
      { metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])) },
      'metadata',
    ],
    ['an empty name', { name: ' ' }, 'name'],
    ['an unknown field', { budget: 5 }, 'budget'],
  ];

  it.each(CASES)(
    'refuses %s on create and on update with a 400 naming the field',
    async (_what, fields, path) => {
      const user = await signUpUser(app);
      const create = await app.request('/v1/api-keys', {
        method: 'POST',
        headers: user.auth,
        json: { name: 'k', ...fields },
      });
      expect(create.status, await create.clone().text()).toBe(400);
      const body = (await create.json()) as {
        error: { code: string; details: { issues: { path: string }[] } };
      };
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.details.issues.map((i) => i.path)).toContain(path);
      const key = await keyOf(user);
      const update = await app.request(`/v1/api-keys/${key.keyId}`, {
        method: 'PATCH',
        headers: user.auth,
        json: fields,
      });
      expect(update.status).toBe(400);
    },
  );

  it('refuses a gate of another account, or one that does not exist, naming it', async () => {
    const [owner, other] = [await signUpUser(app), await signUpUser(app)];
    const mine = await createGate(app, owner);
    const theirs = await createGate(app, other);
    const missing = randomUUID();
    const res = await app.request('/v1/api-keys', {
      method: 'POST',
      headers: owner.auth,
      json: { name: 'k', allowedGates: [mine.id, theirs.id, missing] },
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { details: { issues: unknown[] } } };
    expect(error.details.issues).toEqual([
      { path: 'allowedGates.1', message: `no gate of yours has id ${theirs.id}` },
      { path: 'allowedGates.2', message: `no gate of yours has id ${missing}` },
    ]);
    const { data } = await graphql<{ createApiKey: { __typename: string; issues: { path: string }[] } }>(
      app,
      owner,
      `mutation($input: ApiKeyInput) { createApiKey(name: "k", input: $input) { __typename
        ... on ValidationError { issues { path message } } } }`,
      { input: { allowedGates: [theirs.id] } },
    );
    expect(data?.createApiKey).toMatchObject({
      __typename: 'ValidationError',
      issues: [{ path: 'allowedGates.0' }],
    });
  });

  it.each([
    [{ graceSeconds: -1 }],
    [{ graceSeconds: 86_401 }],
    [{ graceSeconds: 1.5 }],
    [{ graceSeconds: 'an hour' }],
    [{ grace: 60 }],
  ])('refuses a roll with %o, and the key keeps its secret', async (json) => {
    const user = await signUpUser(app);
    const key = await keyOf(user);
    const res = await roll(user, key.keyId, json);
    expect(res.status, await res.clone().text()).toBe(400);
    expect((await app.request('/v1/gates', { headers: key.auth })).status).toBe(200);
  });

  it('refuses bad fields in GraphQL as a ValidationError on the field', async () => {
    const user = await signUpUser(app);
    const key = await keyOf(user);
    const { data } = await graphql<{ updateApiKey: { __typename: string; issues: { path: string }[] } }>(
      app,
      user,
      `mutation($id: ID!, $input: ApiKeyInput!) { updateApiKey(id: $id, input: $input) { __typename
        ... on ValidationError { issues { path message } } } }`,
      {
        id: key.keyId,
        input: { spendingLimit: -5, expiresAt: '2001-01-01T00:00:00Z', metadata: { a: [1] } },
      },
    );
    expect(data?.updateApiKey.__typename).toBe('ValidationError');
    expect(data?.updateApiKey.issues.map((i) => i.path).sort()).toEqual([
      'expiresAt',
      'metadata.a',
      'spendingLimit',
    ]);
  });
});

describe('isolation', () => {
  it("no account reads, changes, rolls, revokes or sees the spending of another account's keys", async () => {
    const [owner, intruder] = [await signUpUser(app), await signUpUser(app)];
    const key = await keyOf(owner, { spendingLimit: 5 });
    await app.db.prisma.apiKey.update({ where: { id: key.keyId }, data: { spendingCurrent: 1.25 } });
    const list = (await (await app.request('/v1/api-keys', { headers: intruder.auth })).json()) as {
      apiKeys: { id: string }[];
    };
    expect(list.apiKeys.map((k) => k.id)).not.toContain(key.keyId);
    for (const [method, path, json] of [
      ['PATCH', `/v1/api-keys/${key.keyId}`, { spendingLimit: 1000, allowedGates: [] }],
      ['POST', `/v1/api-keys/${key.keyId}/roll`, { graceSeconds: 0 }],
      ['DELETE', `/v1/api-keys/${key.keyId}`, undefined],
    ] as const) {
      const res = await app.request(path, { method, headers: intruder.auth, ...(json && { json }) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const gql = await graphql<Record<string, { __typename: string } | { id: string }[]>>(
      app,
      intruder,
      `mutation($id: ID!) {
        updateApiKey(id: $id, input: { spendingLimit: 1000 }) { __typename }
        rollApiKey(id: $id, graceSeconds: 0) { __typename }
        revokeApiKey(id: $id) { __typename }
      }`,
      { id: key.keyId },
    );
    expect(gql.data).toEqual({
      updateApiKey: { __typename: 'NotFoundError' },
      rollApiKey: { __typename: 'NotFoundError' },
      revokeApiKey: { __typename: 'NotFoundError' },
    });
    const seen = await graphql<{ apiKeys: { id: string }[] }>(
      app,
      intruder,
      '{ apiKeys { id spendingCurrent } }',
    );
    expect(seen.data?.apiKeys.map((k) => k.id)).not.toContain(key.keyId);
    // The owner's key is as it was: its secret, its limit, its spending.
    expect((await app.request('/v1/gates', { headers: key.auth })).status).toBe(200);
    const mine = (await (await app.request('/v1/api-keys', { headers: owner.auth })).json()) as {
      apiKeys: { id: string }[];
    };
    expect(mine.apiKeys.find((k) => k.id === key.keyId)).toMatchObject({
      spendingLimit: 5,
      spendingCurrent: 1.25,
      revokedAt: null,
    });
  });
});
