/**
 * Signing in and up under attack (issue 9): guessing passwords, cross-site forms (login CSRF),
 * and passwords anyone could guess.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { signInCounts } from '../src/domain/signInLimits.ts';
import { useTestApp } from './support/app.ts';
import { graphql, signUpUser, type TestUser } from './support/factories.ts';

// Small limits keep the tests short; each test signs in from addresses of its own.
const app = useTestApp({
  GATEHOUSE_TRUST_PROXY: '1',
  GATEHOUSE_SIGNIN_ACCOUNT_LIMIT: '3',
  GATEHOUSE_SIGNIN_ADDRESS_LIMIT: '6',
  GATEHOUSE_SIGNIN_WINDOW_SECONDS: '600',
});

let lastOctet = 0;
const newAddress = () => `203.0.113.${++lastOctet}`;

function signIn(email: string, password: string, address: string) {
  return app.request('/v1/auth/signin', {
    method: 'POST',
    headers: { 'x-forwarded-for': `198.51.100.7, ${address}` },
    json: { email, password },
  });
}

const SIGN_IN = `mutation($input: CredentialsInput!) {
  signIn(input: $input) {
    __typename
    ... on Error { code message }
    ... on RateLimitedError { retryAfterSeconds }
  }
}`;

async function signInViaGraphQL(email: string, password: string, address: string) {
  const res = await app.request('/graphql', {
    method: 'POST',
    headers: { 'x-forwarded-for': address },
    json: { query: SIGN_IN, variables: { input: { email, password } } },
  });
  const body = (await res.json()) as { data?: { signIn: Record<string, unknown> } };
  return body.data?.signIn;
}

async function expectRateLimited(res: Response) {
  expect(res.status).toBe(429);
  expect(await res.json()).toMatchObject({ error: { code: 'rate_limited' } });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(600);
  expect(res.headers.getSetCookie()).toEqual([]);
}

const wrong = (user: TestUser) => `${user.password}-wrong`;

describe('sign-in rate limits', () => {
  it('refuse an account from an address after its limit of failures there, with 429 and Retry-After, right password or not', async () => {
    const user = await signUpUser(app);
    const address = newAddress();
    for (let i = 0; i < 3; i++) expect((await signIn(user.email, wrong(user), address)).status).toBe(401);
    await expectRateLimited(await signIn(user.email, wrong(user), address));
    await expectRateLimited(await signIn(user.email, user.password, address));
    // Keys and live sessions are not sign-ins: the owner keeps working.
    expect((await app.request('/v1/gates', { headers: user.auth })).status).toBe(200);
    expect((await app.request('/v1/gates', { headers: { cookie: user.cookie } })).status).toBe(200);
  });

  it('never lock the owner out from one attacker’s address: the owner signs in from another', async () => {
    const user = await signUpUser(app);
    const attacker = newAddress();
    for (let i = 0; i < 12; i++) {
      const res = await signIn(user.email, wrong(user), attacker);
      expect(res.status).toBe(i < 3 ? 401 : 429);
    }
    expect((await signIn(user.email, user.password, newAddress())).status).toBe(200);
    await expectRateLimited(await signIn(user.email, user.password, attacker));
  });

  it('refuse an account from every address once many addresses failed it (10 times the limit)', async () => {
    expect(app.config.signInLimits.accountWideFailures).toBe(30);
    const user = await signUpUser(app);
    for (let a = 0; a < 10; a++) {
      const address = newAddress();
      for (let i = 0; i < 3; i++) expect((await signIn(user.email, wrong(user), address)).status).toBe(401);
    }
    const limited = await signIn(user.email, user.password, newAddress());
    await expectRateLimited(limited);
  });

  it('keep no counter for the accounts a refused address names', async () => {
    const address = newAddress();
    for (let i = 0; i < 6; i++) {
      expect((await signIn(`nobody-${randomUUID()}@example.test`, 'some password', address)).status).toBe(
        401,
      );
    }
    for (let i = 0; i < 20; i++) {
      const email = `nobody-${randomUUID()}@example.test`;
      await expectRateLimited(await signIn(email, 'some password', address));
      const counts = await signInCounts(app.config.signInLimits, { email, address });
      expect(counts).toMatchObject({ pair: null, account: null });
      expect(counts.address).toBeGreaterThanOrEqual(6);
    }
  });

  it('count REST and GraphQL failures together', async () => {
    const user = await signUpUser(app);
    const address = newAddress();
    expect((await signIn(user.email, wrong(user), address)).status).toBe(401);
    expect(await signInViaGraphQL(user.email, wrong(user), address)).toMatchObject({
      __typename: 'UnauthorizedError',
    });
    expect((await signIn(user.email.toUpperCase(), wrong(user), address)).status).toBe(401);
    const limited = await signInViaGraphQL(user.email, user.password, address);
    expect(limited).toMatchObject({ __typename: 'RateLimitedError', code: 'rate_limited' });
    expect(limited?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    await expectRateLimited(await signIn(user.email, user.password, address));
  });

  it('start counting again after a successful sign-in', async () => {
    const user = await signUpUser(app);
    const address = newAddress();
    for (let i = 0; i < 2; i++) expect((await signIn(user.email, wrong(user), address)).status).toBe(401);
    expect((await signIn(user.email, user.password, address)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await signIn(user.email, wrong(user), address)).status).toBe(401);
    await expectRateLimited(await signIn(user.email, wrong(user), address));
  });

  it('refuse an address after its limit of failures over many accounts, and only that address', async () => {
    const user = await signUpUser(app);
    const address = newAddress();
    for (let i = 0; i < 6; i++) {
      const res = await signIn(`nobody-${randomUUID()}@example.test`, 'some password', address);
      expect(res.status).toBe(401);
    }
    await expectRateLimited(await signIn(user.email, user.password, address));
    expect((await signIn(user.email, user.password, newAddress())).status).toBe(200);
  });

  it('count the addresses of one IPv6 /64 as one address', async () => {
    const user = await signUpUser(app);
    const prefix = `2001:db8:${++lastOctet}:1`;
    for (let i = 1; i <= 6; i++) {
      const res = await signIn(`nobody-${randomUUID()}@example.test`, 'some password', `${prefix}::${i}`);
      expect(res.status).toBe(401);
    }
    await expectRateLimited(await signIn(user.email, user.password, `${prefix}:abcd::7`));
    expect((await signIn(user.email, user.password, `2001:db8:${lastOctet}:2::1`)).status).toBe(200);
  });

  it('do not count a sign-in whose input is invalid', async () => {
    const user = await signUpUser(app);
    const address = newAddress();
    for (let i = 0; i < 5; i++) {
      expect((await signIn(user.email, 'short', address)).status).toBe(400);
    }
    expect((await signIn(user.email, user.password, address)).status).toBe(200);
  });

  it('take the limit over all addresses from GATEHOUSE_SIGNIN_ACCOUNT_WIDE_LIMIT, 10 times the account limit unless set', () => {
    const limits = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env }).signInLimits;
    expect(limits({}).accountWideFailures).toBe(100);
    expect(limits({ GATEHOUSE_SIGNIN_ACCOUNT_LIMIT: '5' }).accountWideFailures).toBe(50);
    expect(limits({ GATEHOUSE_SIGNIN_ACCOUNT_WIDE_LIMIT: '40' }).accountWideFailures).toBe(40);
  });

  it('ignore X-Forwarded-For unless GATEHOUSE_TRUST_PROXY is set', async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      GATEHOUSE_SIGNIN_ADDRESS_LIMIT: '2',
      GATEHOUSE_SIGNIN_WINDOW_SECONDS: '600',
    });
    const direct = createApp(config, app.runtime);
    const attempt = (address: string) =>
      direct.request('/v1/auth/signin', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify({ email: `nobody-${randomUUID()}@example.test`, password: 'some password' }),
      });
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect((await attempt(newAddress())).status).toBe(401);
      expect((await attempt(newAddress())).status).toBe(401);
      await expectRateLimited(await attempt(newAddress()));
      // The operator is told once that the limits count what may be a proxy's address.
      const hints = printed.mock.calls.filter((call) => String(call[0]).includes('GATEHOUSE_TRUST_PROXY=1'));
      expect(hints).toHaveLength(1);
    } finally {
      printed.mockRestore();
    }
  });
});

describe('sign-in and sign-up bodies', () => {
  const bodies = (email: string, password: string): [string, string][] => [
    ['text/plain', JSON.stringify({ email, password })],
    ['application/x-www-form-urlencoded', new URLSearchParams({ email, password }).toString()],
    [
      'multipart/form-data; boundary=x',
      `--x\r\nContent-Disposition: form-data; name="email"\r\n\r\n${email}\r\n--x--\r\n`,
    ],
  ];

  it('must be application/json: a cross-site form cannot sign anyone in (400 naming the type)', async () => {
    const user = await signUpUser(app);
    for (const [contentType, body] of bodies(user.email, user.password)) {
      const res = await app.request('/v1/auth/signin', {
        method: 'POST',
        headers: { 'content-type': contentType, 'x-forwarded-for': newAddress() },
        body,
      });
      expect(res.status, contentType).toBe(400);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('invalid_request');
      expect(error.message).toContain('application/json');
      expect(error.message).toContain(contentType.split(';')[0]);
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it('must be application/json to sign up, too', async () => {
    const email = `user-${randomUUID()}@example.test`;
    for (const [contentType, body] of bodies(email, 'long enough password')) {
      const res = await app.request('/v1/auth/signup', {
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      expect(res.status, contentType).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    expect(await app.db.prisma.user.count({ where: { email } })).toBe(0);
  });

  it('may say application/json with a charset', async () => {
    const user = await signUpUser(app);
    const res = await app.request('/v1/auth/signin', {
      method: 'POST',
      headers: { 'content-type': 'Application/JSON; charset=utf-8', 'x-forwarded-for': newAddress() },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    expect(res.status).toBe(200);
  });
});

describe('a password equal to the email address', () => {
  it('is refused at sign-up over REST, on password, whatever its case', async () => {
    const email = `user-${randomUUID()}@example.test`;
    for (const password of [email, email.toUpperCase()]) {
      const res = await app.request('/v1/auth/signup', { method: 'POST', json: { email, password } });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { details: { issues: { path: string }[] } } };
      expect(body.error.details.issues.map((i) => i.path)).toEqual(['password']);
    }
    expect(await app.db.prisma.user.count({ where: { email } })).toBe(0);
  });

  it('is refused at sign-up over GraphQL, on password', async () => {
    const email = `user-${randomUUID()}@example.test`;
    const res = await graphql(
      app,
      null,
      `mutation($input: CredentialsInput!) {
        signUp(input: $input) { __typename ... on ValidationError { issues { path } } }
      }`,
      { input: { email, password: email } },
    );
    expect(res.data).toEqual({ signUp: { __typename: 'ValidationError', issues: [{ path: 'password' }] } });
  });
});
