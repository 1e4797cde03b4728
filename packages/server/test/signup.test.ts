import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { graphql, signUpUser } from './support/factories.ts';

// Sign-up as a fresh install has it: GATEHOUSE_OPEN_SIGNUP unset, so only the first account.
const app = useTestApp({ GATEHOUSE_OPEN_SIGNUP: '0' });

describe('sign-up without GATEHOUSE_OPEN_SIGNUP', () => {
  it('lets the first account in and closes behind it', async () => {
    expect((await graphql(app, null, 'query { signupOpen firstAccount }')).data).toEqual({
      signupOpen: true,
      firstAccount: true,
    });
    const first = await signUpUser(app);
    expect((await graphql(app, null, 'query { signupOpen firstAccount }')).data).toEqual({
      signupOpen: false,
      firstAccount: false,
    });

    const email = `second-${randomUUID()}@example.test`;
    const res = await app.request('/v1/auth/signup', {
      method: 'POST',
      json: { email, password: 'long enough password' },
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: 'forbidden' } });
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(await app.db.prisma.user.count({ where: { email } })).toBe(0);

    const viaGraphql = await graphql(
      app,
      null,
      `mutation($input: CredentialsInput!) { signUp(input: $input) { __typename ... on Error { code } } }`,
      { input: { email, password: 'long enough password' } },
    );
    expect(viaGraphql.data).toEqual({ signUp: { __typename: 'ForbiddenError', code: 'forbidden' } });

    // The first account keeps working: signing in is not signing up.
    const signin = await app.request('/v1/auth/signin', {
      method: 'POST',
      json: { email: first.email, password: first.password },
    });
    expect(signin.status).toBe(200);
  });
});

describe('sign-up with GATEHOUSE_OPEN_SIGNUP=1', () => {
  const open = useTestApp({ GATEHOUSE_OPEN_SIGNUP: '1' });

  it('stays open, and tells the dashboard the newcomer is not the first (so it does not say so)', async () => {
    await signUpUser(open);
    expect((await graphql(open, null, 'query { signupOpen firstAccount }')).data).toEqual({
      signupOpen: true,
      firstAccount: false,
    });
  });
});
