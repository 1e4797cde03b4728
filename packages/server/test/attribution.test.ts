/**
 * Attribution: every log entry records the API key a request came with (its id, and its name as
 * it was) and the end user it named (x-gatehouse-user on any route, OpenAI's `user`, Anthropic's
 * `metadata.user_id`); the log filters by both in REST and GraphQL, only ever within its owner's
 * entries; the overview sums spending by key and by end user.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { logEntryOf, type NativeError, type OpenAIError, say } from './support/chat.ts';
import { completion } from './support/emulators/openai.ts';
import { useEmulators } from './support/emulators/useEmulators.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';
import { allPages, at, expectBadParam, HOUR_MS, type LogRow, writeEntries } from './support/logs.ts';

const { openai, env } = await useEmulators({ openai: { apiKey: 'sk-openai-upstream' } });
const app = useTestApp(env);

type Attributed = LogRow & {
  api_key_id: string | null;
  api_key_name: string | null;
  end_user: string | null;
};

/** A new API key of `user`'s, named `name`: its id and the headers that send it. */
async function newKey(user: TestUser, name: string) {
  const res = await app.request('/v1/api-keys', { method: 'POST', headers: user.auth, json: { name } });
  expect(res.status, await res.clone().text()).toBe(201);
  const { id, key } = (await res.json()) as { id: string; key: string };
  return { id, name, auth: { authorization: `Bearer ${key}` } };
}

describe('the end user a request names', () => {
  it('is logged from OpenAI’s user, Anthropic’s metadata.user_id and the header, with the key', async () => {
    const user = await signUpUser(app);
    const key = await newKey(user, 'batch job');
    const chatGate = await createGate(app, user);
    const embedGate = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const headers = { ...key.auth, 'x-gatehouse-gate-id': chatGate.id };
    const calls: [string, Record<string, string>, unknown, string][] = [
      [
        '/v1/chat/completions',
        headers,
        { model: 'mock/echo', messages: say('hi'), user: 'u-chat' },
        'u-chat',
      ],
      ['/v1/responses', headers, { model: 'mock/echo', input: 'hi', user: 'u-responses' }, 'u-responses'],
      [
        '/v1/messages',
        headers,
        { model: 'mock/echo', max_tokens: 50, messages: say('hi'), metadata: { user_id: 'u-claude' } },
        'u-claude',
      ],
      [
        '/v1/embeddings',
        { ...key.auth, 'x-gatehouse-gate-id': embedGate.id },
        { model: 'mock/embed', input: 'hi', user: 'u-embed' },
        'u-embed',
      ],
      [
        '/v3/chat',
        { ...key.auth, 'x-gatehouse-user': 'u-native' },
        { gateId: chatGate.id, data: { messages: say('hi') } },
        'u-native',
      ],
      // The header wins over the body.
      [
        '/v1/chat/completions',
        { ...headers, 'x-gatehouse-user': 'u-header' },
        { model: 'mock/echo', messages: say('hi'), user: 'u-body' },
        'u-header',
      ],
    ];
    for (const [path, h, json, endUser] of calls) {
      const res = await app.request(path, { method: 'POST', headers: h, json });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
      const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
      expect(entry, path).toMatchObject({ endUser, apiKeyId: key.id, apiKeyName: 'batch job' });
    }
    // None named: no end user; the account's first key is a key like any other.
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: chatGate.id, data: { messages: say('hi') } },
    });
    const entry = await logEntryOf(app, res.headers.get('x-gatehouse-request-id'));
    expect(entry.endUser).toBeNull();
    expect(entry.apiKeyId).not.toBe(key.id);
    expect(entry.apiKeyId).not.toBeNull();
  });

  it('keeps the key’s name as it was when the request was made', async () => {
    const user = await signUpUser(app);
    const key = await newKey(user, 'before');
    const gate = await createGate(app, user);
    const send = () =>
      app.request('/v3/chat', {
        method: 'POST',
        headers: key.auth,
        json: { gateId: gate.id, data: { messages: say('hi') } },
      });
    const first = await logEntryOf(app, (await send()).headers.get('x-gatehouse-request-id'));
    await app.db.prisma.apiKey.update({ where: { id: key.id }, data: { name: 'after' } });
    const { rows } = await allPages(app, user, { apiKeyId: key.id });
    expect(rows.map((r) => [r.id, (r as Attributed).api_key_name])).toEqual([[first.id, 'before']]);
  });

  it('refuses one longer than 256 characters with a 400 in each route’s shape', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const long = 'u'.repeat(257);
    const native = await app.request('/v3/chat', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-user': long },
      json: { gateId: gate.id, data: { messages: say('hi') } },
    });
    expect(native.status).toBe(400);
    const nativeBody = (await native.json()) as NativeError;
    expect(nativeBody.error.code).toBe('invalid_request');
    expect(nativeBody.error.message).toContain('x-gatehouse-user');

    const oa = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'mock/echo', messages: say('hi'), user: long },
    });
    expect(oa.status).toBe(400);
    const oaBody = (await oa.json()) as OpenAIError;
    expect(oaBody.error.type).toBe('invalid_request_error');
    expect(oaBody.error.message).toContain('user');

    const an = await app.request('/v1/messages', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'mock/echo', max_tokens: 50, messages: say('hi'), metadata: { user_id: long } },
    });
    expect(an.status).toBe(400);
    const anBody = (await an.json()) as { type: string; error: { type: string; message: string } };
    expect(anBody).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(anBody.error.message).toContain('metadata.user_id');

    // 256 is still fine.
    const ok = await app.request('/v3/chat', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-user': 'u'.repeat(256) },
      json: { gateId: gate.id, data: { messages: say('hi') } },
    });
    expect(ok.status).toBe(200);
  });

  it('still reaches OpenAI in the user field of a forwarded body', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'openai/gpt-4o-mini' });
    openai.upstream.reply({ type: 'json', body: completion('openai', { content: 'Hi.' }) });
    const res = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'gpt-4o-mini', messages: say('hi'), user: 'customer-7' },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((openai.upstream.last().body as { user?: string }).user).toBe('customer-7');
    expect((await logEntryOf(app, res.headers.get('x-gatehouse-request-id'))).endUser).toBe('customer-7');
  });
});

/** Alice's four requests: two keys by two end users, and one with no end user. */
async function aliceTraffic() {
  const alice = await signUpUser(app);
  const gate = await createGate(app, alice);
  const ci = await newKey(alice, 'ci');
  const web = await newKey(alice, 'web');
  const ids: Record<string, string> = {};
  const send = async (name: string, key: typeof ci, endUser?: string) => {
    const res = await app.request('/v3/chat', {
      method: 'POST',
      headers: { ...key.auth, ...(endUser && { 'x-gatehouse-user': endUser }) },
      json: { gateId: gate.id, data: { messages: say(`hi from ${name}`) } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    ids[name] = res.headers.get('x-gatehouse-request-id') as string;
  };
  await send('ci-ann', ci, 'ann');
  await send('ci-bob', ci, 'bob');
  await send('web-ann', web, 'ann');
  await send('web-none', web);
  await app.runtime.logs.drain();
  return { alice, ci, web, ids };
}

describe('the log filtered by key and end user', () => {
  it('returns exactly the entries of that key and end user over REST', async () => {
    const { alice, ci, web, ids } = await aliceTraffic();
    const only = async (query: Record<string, string>) =>
      (await allPages(app, alice, query)).rows.map((r) => r.id).sort();
    expect(await only({ apiKeyId: ci.id, endUser: 'ann' })).toEqual([ids['ci-ann']]);
    expect(await only({ apiKeyId: ci.id })).toEqual([ids['ci-ann'], ids['ci-bob']].sort());
    expect(await only({ endUser: 'ann' })).toEqual([ids['ci-ann'], ids['web-ann']].sort());
    expect(await only({ apiKeyId: web.id, endUser: 'bob' })).toEqual([]);
    const [row] = (await allPages(app, alice, { apiKeyId: web.id, endUser: 'ann' })).rows as Attributed[];
    expect(row).toMatchObject({
      id: ids['web-ann'],
      api_key_id: web.id,
      api_key_name: 'web',
      end_user: 'ann',
    });
  });

  it('returns the same entries over GraphQL, with key and end user on each', async () => {
    const { alice, ci, ids } = await aliceTraffic();
    const query = `query ($k: ID, $u: String) { logs(apiKeyId: $k, endUser: $u, first: 50) {
      edges { node { id apiKeyId apiKeyName endUser } } } }`;
    const res = await graphql<{ logs: { edges: { node: Record<string, string> }[] } }>(app, alice, query, {
      k: ci.id,
      u: 'bob',
    });
    expect(res.errors).toBeUndefined();
    expect(res.data?.logs.edges.map((e) => e.node)).toEqual([
      { id: ids['ci-bob'], apiKeyId: ci.id, apiKeyName: 'ci', endUser: 'bob' },
    ]);
    const bad = await graphql(app, alice, query, { k: 'not-a-uuid' });
    expect(bad.errors?.[0]?.message).toContain('apiKeyId');
  });

  it('finds nothing of another account’s by its key id or end user', async () => {
    const { ci } = await aliceTraffic();
    const mallory = await signUpUser(app);
    expect((await allPages(app, mallory, { apiKeyId: ci.id })).rows).toEqual([]);
    expect((await allPages(app, mallory, { endUser: 'ann' })).rows).toEqual([]);
    const res = await graphql<{ logs: { edges: unknown[] } }>(
      app,
      mallory,
      'query ($k: ID) { logs(apiKeyId: $k) { edges { node { id } } } }',
      { k: ci.id },
    );
    expect(res.data?.logs.edges).toEqual([]);
  });

  it('refuses a key id that is no UUID and an end user past 256 characters', async () => {
    const user = await signUpUser(app);
    await expectBadParam(app, user, '/v1/logs?apiKeyId=nope', 'apiKeyId');
    await expectBadParam(app, user, `/v1/logs?endUser=${'x'.repeat(257)}`, 'endUser');
  });
});

type Breakdown = {
  top: { id: string | null; name: string | null; requests: number; costUsd: number }[];
  other: { count: number; requests: number; costUsd: number };
};

describe('the overview’s spending by key and by end user', () => {
  it('sums the entries of the window, the most expensive first, the rest as other', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const ci = { id: crypto.randomUUID(), name: 'ci' };
    const web = { id: crypto.randomUUID(), name: 'web' };
    // Twelve end users: e0 spends most, e11 least; ci makes the even ones' requests.
    const specs = Array.from({ length: 12 }, (_, i) => ({
      gate,
      createdAt: at(HOUR_MS + i * 1000),
      costUsd: (12 - i) / 100,
      apiKey: i % 2 === 0 ? ci : web,
      endUser: `e${i}`,
    }));
    // One dashboard request with no key and no end user, and one outside the window.
    specs.push({ gate, createdAt: at(HOUR_MS + 20_000), costUsd: 0.5 } as (typeof specs)[number]);
    specs.push({ ...specs[0], createdAt: at(5 * HOUR_MS) } as (typeof specs)[number]);
    await writeEntries(app, user, specs);
    const res = await app.request(
      `/v1/logs/overview?since=${at(0).toISOString()}&until=${at(2 * HOUR_MS).toISOString()}`,
      { headers: user.auth },
    );
    expect(res.status, await res.clone().text()).toBe(200);
    const o = (await res.json()) as { spendingByKey: Breakdown; spendingByEndUser: Breakdown };
    const even = [0, 2, 4, 6, 8, 10].reduce((n, i) => n + (12 - i) / 100, 0);
    const odd = [1, 3, 5, 7, 9, 11].reduce((n, i) => n + (12 - i) / 100, 0);
    // Each share also has its errors and p50/p95 latency (logs-numbers.test.ts checks those).
    expect(o.spendingByKey.top).toMatchObject([
      { id: null, name: null, requests: 1, costUsd: 0.5 },
      { id: ci.id, name: 'ci', requests: 6, costUsd: expect.closeTo(even, 8) },
      { id: web.id, name: 'web', requests: 6, costUsd: expect.closeTo(odd, 8) },
    ]);
    expect(o.spendingByKey.other).toMatchObject({ count: 0, requests: 0, costUsd: 0 });
    // e0..e9 by cost, after the no-end-user 0.5 (which outspends e0's 0.12).
    expect(o.spendingByEndUser.top.map((s) => s.id)).toEqual([
      null,
      'e0',
      'e1',
      'e2',
      'e3',
      'e4',
      'e5',
      'e6',
      'e7',
      'e8',
    ]);
    expect(o.spendingByEndUser.top[1]).toMatchObject({ id: 'e0', name: null, requests: 1, costUsd: 0.12 });
    expect(o.spendingByEndUser.other).toMatchObject({
      count: 3,
      requests: 3,
      costUsd: expect.closeTo(0.03 + 0.02 + 0.01, 8),
    });

    // GraphQL says the same; another account sees none of it.
    const query = `query ($s: DateTime, $u: DateTime) { overview(since: $s, until: $u) {
      spendingByKey { top { id name requests errors costUsd p50LatencyMs p95LatencyMs } other { count requests errors costUsd } }
      spendingByEndUser { other { count } } } }`;
    const vars = { s: at(0).toISOString(), u: at(2 * HOUR_MS).toISOString() };
    const gql = await graphql<{ overview: { spendingByKey: Breakdown; spendingByEndUser: Breakdown } }>(
      app,
      user,
      query,
      vars,
    );
    expect(gql.data?.overview.spendingByKey).toEqual(o.spendingByKey);
    expect(gql.data?.overview.spendingByEndUser.other.count).toBe(3);
    const other = await graphql<{ overview: { spendingByKey: Breakdown } }>(
      app,
      await signUpUser(app),
      query,
      vars,
    );
    expect(other.data?.overview.spendingByKey.top).toEqual([]);
  });
});

describe('a gate’s end-user spending limit', () => {
  it('holds the end user each source names, and not a request that names none', async () => {
    const user = await signUpUser(app);
    // Less than any request's worst case: every request that names an end user is refused.
    const gate = await createGate(app, user, { endUserSpendingLimit: 1e-8 });
    const headers = { ...user.auth, 'x-gatehouse-gate-id': gate.id };
    const named: [string, Record<string, string>, unknown][] = [
      [
        '/v3/chat',
        { ...user.auth, 'x-gatehouse-user': 'ann' },
        { gateId: gate.id, data: { messages: say('hi') } },
      ],
      ['/v1/chat/completions', headers, { model: 'mock/echo', messages: say('hi'), user: 'ann' }],
      [
        '/v1/messages',
        headers,
        { model: 'mock/echo', max_tokens: 50, messages: say('hi'), metadata: { user_id: 'ann' } },
      ],
    ];
    for (const [path, h, json] of named) {
      const res = await app.request(path, { method: 'POST', headers: h, json });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(402);
      // Each route's own error shape, all with error.message.
      expect(((await res.json()) as { error: { message: string } }).error.message, path).toContain(
        'End user "ann"',
      );
    }
    const unnamed = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: gate.id, data: { messages: say('hi') } },
    });
    expect(unnamed.status).toBe(200);
  });

  it('is null or a positive amount, with a daily or monthly period, in REST and GraphQL', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      endUserSpendingLimit: 2.5,
      endUserSpendingLimitPeriod: 'daily',
    });
    expect(gate).toMatchObject({ endUserSpendingLimit: 2.5, endUserSpendingLimitPeriod: 'daily' });
    const plain = await createGate(app, user);
    expect(plain).toMatchObject({ endUserSpendingLimit: null, endUserSpendingLimitPeriod: 'monthly' });

    for (const [field, value] of [
      ['endUserSpendingLimit', 0],
      ['endUserSpendingLimit', -1],
      ['endUserSpendingLimit', 'ten'],
      ['endUserSpendingLimitPeriod', 'total'],
    ] as const) {
      const res = await app.request(`/v1/gates/${gate.id}`, {
        method: 'PATCH',
        headers: user.auth,
        json: { [field]: value },
      });
      expect(res.status, `${field}=${value}`).toBe(400);
      const body = (await res.json()) as NativeError & {
        error: { details: { issues: { path: string }[] } };
      };
      expect(body.error.details.issues.map((i) => i.path)).toEqual([field]);
    }

    const update = `mutation ($id: ID!, $input: GateInput!) { updateGate(id: $id, input: $input) {
      __typename
      ... on MutationUpdateGateSuccess { data { endUserSpendingLimit endUserSpendingLimitPeriod } }
      ... on ValidationError { issues { path } } } }`;
    const set = await graphql<{ updateGate: Record<string, unknown> }>(app, user, update, {
      id: gate.id,
      input: { endUserSpendingLimit: null, endUserSpendingLimitPeriod: 'MONTHLY' },
    });
    expect(set.data?.updateGate).toEqual({
      __typename: 'MutationUpdateGateSuccess',
      data: { endUserSpendingLimit: null, endUserSpendingLimitPeriod: 'MONTHLY' },
    });
    const refused = await graphql<{ updateGate: Record<string, unknown> }>(app, user, update, {
      id: gate.id,
      input: { endUserSpendingLimit: 0 },
    });
    expect(refused.data?.updateGate).toEqual({
      __typename: 'ValidationError',
      issues: [{ path: 'endUserSpendingLimit' }],
    });
  });
});
