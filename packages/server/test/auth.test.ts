import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, gateInput, signUpUser } from './support/factories.ts';

const app = useTestApp();

describe('API keys', () => {
  it('authenticates with the key issued at sign-up', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', { headers: user.auth });
    expect(res.status).toBe(200);
  });

  it('stops a revoked key at once', async () => {
    const user = await signUpUser(app);
    const created = await app.request('/v1/api-keys', {
      method: 'POST',
      headers: user.auth,
      json: { name: 'ci' },
    });
    expect(created.status).toBe(201);
    const { id, key } = (await created.json()) as { id: string; key: string };
    expect((await app.request('/v1/gates', { headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
    expect((await app.request(`/v1/api-keys/${id}`, { method: 'DELETE', headers: user.auth })).status).toBe(
      204,
    );
    const after = await app.request('/v1/gates', { headers: { authorization: `Bearer ${key}` } });
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: { code: 'unauthorized' } });
  });
});

describe('requests without a valid API key', () => {
  const cases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['a Basic header', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['"Basic x"', { authorization: 'Basic x' }],
    ['"Bearer" alone', { authorization: 'Bearer' }],
    ['"Bearer" and spaces', { authorization: 'Bearer   ' }],
    ['two tokens after Bearer', { authorization: 'Bearer a b' }],
    ['an unknown key of the right shape', { authorization: `Bearer gh_${'A'.repeat(43)}` }],
    ['a key of the wrong shape', { authorization: 'Bearer sk-not-a-gatehouse-key' }],
  ];

  it.each(cases)('answers 401 unauthorized to %s', async (_label, headers) => {
    for (const [method, path] of [
      ['GET', '/v1/gates'],
      ['POST', '/v1/gates'],
      ['GET', `/v1/gates/${randomUUID()}`],
      ['GET', '/v1/api-keys'],
    ] as const) {
      const res = await app.request(path, {
        method,
        headers,
        ...(method === 'POST' && { json: gateInput() }),
      });
      expect(res.status, `${method} ${path}`).toBe(401);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('unauthorized');
      expect(body.error.message.length).toBeGreaterThan(0);
    }
  });

  it('refuses a wrong Authorization header even when a valid session cookie comes with it', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', {
      headers: { cookie: user.cookie, authorization: 'Bearer wrong' },
    });
    expect(res.status).toBe(401);
  });

  it('creates nothing for an unauthenticated request', async () => {
    const user = await signUpUser(app);
    const input = gateInput();
    await app.request('/v1/gates', { method: 'POST', json: input });
    const list = await app.request('/v1/gates', { headers: user.auth });
    expect(((await list.json()) as { gates: unknown[] }).gates).toEqual([]);
    expect(await app.db.prisma.gate.count({ where: { name: input.name } })).toBe(0);
  });
});

describe('dashboard sessions', () => {
  it('let a signed-in browser read over REST with the cookie alone', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request(`/v1/gates/${gate.id}`, { headers: { cookie: user.cookie } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: gate.id });
  });

  it('refuse a cookie-authenticated POST without the x-csrf-token header (403)', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: { cookie: user.cookie },
      json: gateInput(),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: 'forbidden' } });
    expect(await app.db.prisma.gate.count({ where: { userId: user.id } })).toBe(0);
  });

  it('refuse a cookie-authenticated change with a wrong x-csrf-token, and DELETE and PATCH too', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const other = await signUpUser(app);
    for (const [method, json] of [
      ['PATCH', { temperature: 1 }],
      ['DELETE', undefined],
    ] as const) {
      for (const token of [undefined, 'wrong', other.csrfToken]) {
        const res = await app.request(`/v1/gates/${gate.id}`, {
          method,
          headers: { cookie: user.cookie, ...(token && { 'x-csrf-token': token }) },
          ...(json && { json }),
        });
        expect(res.status, `${method} with ${token}`).toBe(403);
      }
    }
    const after = await app.request(`/v1/gates/${gate.id}`, { headers: user.auth });
    expect(await after.json()).toEqual(gate);
  });

  it('accept a cookie-authenticated POST that carries the session’s x-csrf-token', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: { cookie: user.cookie, 'x-csrf-token': user.csrfToken },
      json: gateInput(),
    });
    expect(res.status).toBe(201);
  });

  it('need the x-csrf-token header for GraphQL, even to read', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const query = { query: 'query($id: ID!) { gate(id: $id) { id } }', variables: { id: gate.id } };
    const without = await app.request('/graphql', {
      method: 'POST',
      headers: { cookie: user.cookie },
      json: query,
    });
    const body = (await without.json()) as {
      data?: { gate: unknown } | null;
      errors?: { extensions?: { code?: string } }[];
    };
    expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(body.data?.gate ?? null).toBeNull();
    const withToken = await app.request('/graphql', {
      method: 'POST',
      headers: { cookie: user.cookie, 'x-csrf-token': user.csrfToken },
      json: query,
    });
    expect(await withToken.json()).toEqual({ data: { gate: { id: gate.id } } });
  });

  it('are not started by a wrong password (401) nor an unknown email (401)', async () => {
    const user = await signUpUser(app);
    for (const json of [
      { email: user.email, password: `${user.password}x` },
      { email: `nobody-${randomUUID()}@example.test`, password: user.password },
    ]) {
      const res = await app.request('/v1/auth/signin', { method: 'POST', json });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: 'unauthorized' } });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it('start on sign-in with the right password, whatever the email’s case', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/auth/signin', {
      method: 'POST',
      json: { email: user.email.toUpperCase(), password: user.password },
    });
    expect(res.status).toBe(200);
    const { csrfToken } = (await res.json()) as { csrfToken: string };
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const created = await app.request('/v1/gates', {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrfToken },
      json: gateInput(),
    });
    expect(created.status).toBe(201);
  });

  it('set the session cookie httpOnly', async () => {
    const res = await app.request('/v1/auth/signup', {
      method: 'POST',
      json: { email: `user-${randomUUID()}@example.test`, password: 'long enough password' },
    });
    const session = res.headers.getSetCookie().find((c) => c.startsWith('gh_session='));
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
  });

  it('end on sign-out: the old cookie no longer works, other sessions and keys do', async () => {
    const user = await signUpUser(app);
    const second = await app.request('/v1/auth/signin', {
      method: 'POST',
      json: { email: user.email, password: user.password },
    });
    const secondCookie = second.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    expect((await app.request('/v1/gates', { headers: { cookie: user.cookie } })).status).toBe(200);
    // A cross-site form cannot end the session: without the CSRF header it is refused.
    const forged = await app.request('/v1/auth/signout', {
      method: 'POST',
      headers: { cookie: user.cookie },
    });
    expect(forged.status).toBe(403);
    expect((await app.request('/v1/gates', { headers: { cookie: user.cookie } })).status).toBe(200);
    const out = await app.request('/v1/auth/signout', {
      method: 'POST',
      headers: { cookie: user.cookie, 'x-csrf-token': user.csrfToken },
    });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie().find((c) => c.startsWith('gh_session='))).toMatch(/Max-Age=0/i);
    const after = await app.request('/v1/gates', { headers: { cookie: user.cookie } });
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: { code: 'unauthorized' } });
    expect((await app.request('/v1/gates', { headers: { cookie: secondCookie } })).status).toBe(200);
    expect((await app.request('/v1/gates', { headers: user.auth })).status).toBe(200);
  });
});

describe('sign-up', () => {
  it('refuses an email that has an account already (409 on email), in any case', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/auth/signup', {
      method: 'POST',
      json: { email: user.email.toUpperCase(), password: 'another password' },
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      error: { code: 'conflict', details: { issues: [{ path: 'email' }] } },
    });
  });

  it('refuses a bad email or a short password with the field named', async () => {
    for (const [json, path] of [
      [{ email: 'not-an-email', password: 'long enough password' }, 'email'],
      [{ email: `user-${randomUUID()}@example.test`, password: 'short' }, 'password'],
      [{ email: `user-${randomUUID()}@example.test` }, 'password'],
    ] as const) {
      const res = await app.request('/v1/auth/signup', { method: 'POST', json });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { details: { issues: { path: string }[] } } };
      expect(body.error.details.issues.map((i) => i.path)).toContain(path);
    }
  });
});

describe('health checks', () => {
  it('answer 200 without authentication', async () => {
    const health = await app.request('/healthz');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await app.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready' });
  });
});

describe('the API key list', () => {
  it('shows names and prefixes but never a secret or its hash', async () => {
    const user = await signUpUser(app);
    const created = await app.request('/v1/api-keys', {
      method: 'POST',
      headers: user.auth,
      json: { name: 'ci' },
    });
    const { key } = (await created.json()) as { key: string };
    const res = await app.request('/v1/api-keys', { headers: user.auth });
    expect(res.status).toBe(200);
    const text = await res.text();
    const { apiKeys } = JSON.parse(text) as { apiKeys: Record<string, unknown>[] };
    expect(apiKeys.map((k) => k.name).sort()).toEqual(['Default key', 'ci']);
    for (const apiKey of apiKeys) {
      expect(Object.keys(apiKey).sort()).toEqual([
        'allowedGates',
        'allowedTaskTypes',
        'createdAt',
        'expiresAt',
        'id',
        'lastUsedAt',
        'metadata',
        'name',
        'prefix',
        'previousKeyExpiresAt',
        'rateLimitRpm',
        'rateLimitTpm',
        'revokedAt',
        'spendingCurrent',
        'spendingEnforcement',
        'spendingLimit',
        'spendingLimitPeriod',
        'spendingResetsAt',
        'spendingStatus',
      ]);
      expect(String(apiKey.prefix)).toMatch(/^gh_/);
    }
    expect(key.startsWith(String(apiKeys.find((k) => k.name === 'ci')?.prefix))).toBe(true);
    const stored = await app.db.prisma.apiKey.findMany({ where: { userId: user.id } });
    for (const secret of [key, user.key, ...stored.map((k) => k.keyHash)]) {
      expect(text).not.toContain(secret);
    }
  });

  it('records when a key was last used', async () => {
    const user = await signUpUser(app);
    const created = await app.request('/v1/api-keys', {
      method: 'POST',
      headers: user.auth,
      json: { name: 'ci' },
    });
    const { id, key, lastUsedAt } = (await created.json()) as { id: string; key: string; lastUsedAt: null };
    expect(lastUsedAt).toBeNull();
    const before = Date.now();
    expect((await app.request('/v1/gates', { headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
    await expect
      .poll(async () => {
        const res = await app.request('/v1/api-keys', { headers: { cookie: user.cookie } });
        const { apiKeys } = (await res.json()) as { apiKeys: { id: string; lastUsedAt: string | null }[] };
        return apiKeys.find((k) => k.id === id)?.lastUsedAt ?? null;
      })
      .not.toBeNull();
    const stored = await app.db.prisma.apiKey.findUniqueOrThrow({ where: { id } });
    expect(stored.lastUsedAt?.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });
});

describe('creating an API key', () => {
  it.each([
    ['an empty name', { name: ' ' }],
    ['a name with a NUL character', { name: 'ci\u0000' }],
    ['a 101-character name', { name: 'k'.repeat(101) }],
    ['an unknown field', { name: 'ci', scope: 'all' }],
  ])('refuses %s with 400 on that field', async (_label, json) => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/api-keys', { method: 'POST', headers: user.auth, json });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { issues: { path: string }[] } } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details.issues.length).toBeGreaterThan(0);
  });
});
