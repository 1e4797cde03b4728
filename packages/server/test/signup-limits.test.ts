/**
 * Sign-ups are limited per client address (GATEHOUSE_SIGNUP_ADDRESS_LIMIT per
 * GATEHOUSE_SIGNUP_WINDOW_SECONDS), on REST and GraphQL alike: one address can neither make
 * accounts by the thousand, nor test which emails have one, nor keep the server hashing passwords.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';

const app = useTestApp({
  GATEHOUSE_TRUST_PROXY: '1',
  GATEHOUSE_SIGNUP_ADDRESS_LIMIT: '3',
  GATEHOUSE_SIGNUP_WINDOW_SECONDS: '3600',
});

let lastOctet = 0;
const newAddress = () => `203.0.113.${++lastOctet}`;
const newEmail = () => `limit-${randomUUID().slice(0, 8)}@example.test`;
const PASSWORD = 'a long enough password';

function signUp(email: string, address: string, password = PASSWORD) {
  return app.request('/v1/auth/signup', {
    method: 'POST',
    headers: { 'x-forwarded-for': address },
    json: { email, password },
  });
}

const SIGN_UP = `mutation($input: CredentialsInput!) {
  signUp(input: $input) {
    __typename
    ... on Error { code message }
    ... on RateLimitedError { retryAfterSeconds }
  }
}`;

async function signUpViaGraphQL(email: string, address: string) {
  const res = await app.request('/graphql', {
    method: 'POST',
    headers: { 'x-forwarded-for': address },
    json: { query: SIGN_UP, variables: { input: { email, password: PASSWORD } } },
  });
  return ((await res.json()) as { data?: { signUp: Record<string, unknown> } }).data?.signUp;
}

const accountsWith = (email: string) => app.db.prisma.user.count({ where: { email } });

it('counts every sign-up from an address, a taken email too, and refuses the next with 429 and Retry-After', async () => {
  const address = newAddress();
  const taken = newEmail();
  expect((await signUp(taken, address)).status).toBe(201);
  expect((await signUp(newEmail(), address)).status).toBe(201);
  // Trying an email that has an account counts: otherwise one address could test emails freely.
  expect((await signUp(taken, address)).status).toBe(409);

  const refusedEmail = newEmail();
  const refused = await signUp(refusedEmail, address);
  expect(refused.status).toBe(429);
  expect(await refused.json()).toMatchObject({
    error: { code: 'rate_limited', message: expect.stringMatching(/Too many sign-ups from your address/) },
  });
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(3000);
  expect(retryAfter).toBeLessThanOrEqual(3600);
  expect(refused.headers.getSetCookie()).toEqual([]);
  expect(await accountsWith(refusedEmail)).toBe(0);

  // Another address is not affected.
  expect((await signUp(refusedEmail, newAddress())).status).toBe(201);
});

it('does not count input refused as invalid', async () => {
  const address = newAddress();
  for (let i = 0; i < 5; i++) expect((await signUp('not an email', address)).status).toBe(400);
  for (let i = 0; i < 3; i++) expect((await signUp(newEmail(), address)).status).toBe(201);
  expect((await signUp(newEmail(), address)).status).toBe(429);
});

it('shares the count between REST and GraphQL', async () => {
  const address = newAddress();
  expect((await signUp(newEmail(), address)).status).toBe(201);
  expect(await signUpViaGraphQL(newEmail(), address)).toMatchObject({ __typename: 'MutationSignUpSuccess' });
  expect((await signUp(newEmail(), address)).status).toBe(201);
  const email = newEmail();
  const refused = await signUpViaGraphQL(email, address);
  expect(refused).toMatchObject({ __typename: 'RateLimitedError', code: 'rate_limited' });
  expect(refused?.retryAfterSeconds).toBeGreaterThan(3000);
  expect(await accountsWith(email)).toBe(0);
});
