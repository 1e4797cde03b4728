/** Factories that make unique data per test through the public API, so tests never share rows. */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

export type TestUser = {
  id: string;
  email: string;
  password: string;
  key: string;
  /** Cookie header value for the dashboard session. */
  cookie: string;
  csrfToken: string;
  auth: { authorization: string };
};

export async function signUpUser(
  app: TestApp,
  email = `user-${randomUUID()}@example.test`,
): Promise<TestUser> {
  const password = `pw-${randomUUID()}`;
  const res = await app.request('/v1/auth/signup', { method: 'POST', json: { email, password } });
  expect(res.status, await res.clone().text()).toBe(201);
  const body = (await res.json()) as {
    user: { id: string };
    csrfToken: string;
    apiKey: { key: string };
  };
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return {
    id: body.user.id,
    email,
    password,
    key: body.apiKey.key,
    cookie,
    csrfToken: body.csrfToken,
    auth: { authorization: `Bearer ${body.apiKey.key}` },
  };
}

export function gateInput(overrides: Record<string, unknown> = {}) {
  return { name: `gate-${randomUUID()}`, model: 'mock/echo', taskType: 'chat', ...overrides };
}

export async function createGate(app: TestApp, user: TestUser, overrides: Record<string, unknown> = {}) {
  const res = await app.request('/v1/gates', {
    method: 'POST',
    headers: user.auth,
    json: gateInput(overrides),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Record<string, unknown> & { id: string; name: string };
}

/** A GraphQL call as an API-key client. */
export async function graphql<T = Record<string, unknown>>(
  app: TestApp,
  user: TestUser | null,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }> {
  const res = await app.request('/graphql', {
    method: 'POST',
    headers: user ? user.auth : {},
    json: { query, variables },
  });
  return (await res.json()) as never;
}
