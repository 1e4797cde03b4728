/**
 * Self-hosted accounts (issue 11, item 4): the first account administers the instance, sets each
 * account's plan and disables or enables it, over REST and GraphQL; nobody else may.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { useTestApp } from './support/app.ts';
import { createGate, gateInput, graphql, signUpUser, type TestUser } from './support/factories.ts';

// Every account after the first is on pro, so that setting one to free is a change.
const app = useTestApp({ GATEHOUSE_OPEN_SIGNUP: '1', GATEHOUSE_DEFAULT_PLAN: 'pro' });

type Account = {
  id: string;
  email: string;
  plan: string;
  isAdmin: boolean;
  disabled: boolean;
  disabledAt: string | null;
  createdAt: string;
};
type ErrorBody = { error: { code: string; message: string; details?: { issues?: { path: string }[] } } };

let admin: TestUser;
beforeAll(async () => {
  admin = await signUpUser(app); // the first account of this file's database
});

function patchAccount(caller: TestUser, id: string, json: unknown) {
  return app.request(`/v1/admin/accounts/${id}`, { method: 'PATCH', headers: caller.auth, json });
}

async function setAccount(id: string, json: unknown): Promise<Account> {
  const res = await patchAccount(admin, id, json);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Account;
}

async function listAccounts(caller: TestUser): Promise<Account[]> {
  const res = await app.request('/v1/admin/accounts', { headers: caller.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { accounts: Account[] }).accounts;
}

const UPDATE = `mutation($id: ID!, $input: AccountUpdateInput!) {
  updateAccount(id: $id, input: $input) {
    __typename
    ... on MutationUpdateAccountSuccess { data { id plan { id } disabled isAdmin } }
    ... on Error { code message }
    ... on ValidationError { issues { path message } }
  }
}`;
const ACCOUNTS = `query {
  accounts {
    __typename
    ... on QueryAccountsSuccess { data { id email isAdmin disabled disabledAt plan { id } createdAt } }
    ... on Error { code message }
  }
}`;

describe('the first account', () => {
  it('is the admin, on the enterprise plan; the next is on GATEHOUSE_DEFAULT_PLAN and no admin', async () => {
    const user = await signUpUser(app);
    const accounts = await listAccounts(admin);
    expect(accounts[0]).toMatchObject({ id: admin.id, isAdmin: true, plan: 'enterprise', disabled: false });
    expect(accounts.find((a) => a.id === user.id)).toMatchObject({
      email: user.email,
      isAdmin: false,
      plan: 'pro',
      disabled: false,
      disabledAt: null,
    });
    const me = await graphql(app, user, 'query { me { isAdmin disabled plan { id } } }');
    expect(me.data).toEqual({ me: { isAdmin: false, disabled: false, plan: { id: 'pro' } } });
    const adminMe = await graphql(app, admin, 'query { me { isAdmin plan { id maxGates } } }');
    expect(adminMe.data).toEqual({ me: { isAdmin: true, plan: { id: 'enterprise', maxGates: null } } });
  });
});

describe('GATEHOUSE_DEFAULT_PLAN', () => {
  it('takes a plan id, free when unset or empty, and stops the start on anything else', () => {
    expect(loadConfig({}).defaultPlan).toBe('free');
    expect(loadConfig({ GATEHOUSE_DEFAULT_PLAN: '' }).defaultPlan).toBe('free');
    expect(loadConfig({ GATEHOUSE_DEFAULT_PLAN: 'enterprise' }).defaultPlan).toBe('enterprise');
    expect(() => loadConfig({ GATEHOUSE_DEFAULT_PLAN: 'gold' })).toThrow(
      /GATEHOUSE_DEFAULT_PLAN: must be one of free, pro, enterprise/,
    );
  });
});

describe('listing accounts', () => {
  it('shows the admin every account over REST and GraphQL', async () => {
    const a = await signUpUser(app);
    const b = await signUpUser(app);
    const rest = await listAccounts(admin);
    expect(rest.map((x) => x.id)).toEqual(expect.arrayContaining([admin.id, a.id, b.id]));
    // Oldest first.
    expect(rest.indexOf(rest.find((x) => x.id === a.id) as Account)).toBeLessThan(
      rest.indexOf(rest.find((x) => x.id === b.id) as Account),
    );
    expect(rest.every((x) => !('passwordHash' in x))).toBe(true);

    const result = await graphql<{ accounts: { __typename: string; data: { id: string; email: string }[] } }>(
      app,
      admin,
      ACCOUNTS,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.accounts.__typename).toBe('QueryAccountsSuccess');
    expect(result.data?.accounts.data.map((x) => x.id)).toEqual(rest.map((x) => x.id));
  });

  it('refuses anyone else: 403 over REST, a ForbiddenError over GraphQL', async () => {
    const user = await signUpUser(app);
    const other = await signUpUser(app);
    const res = await app.request('/v1/admin/accounts', { headers: user.auth });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: 'forbidden' } });

    const patch = await patchAccount(user, other.id, { plan: 'enterprise' });
    expect(patch.status).toBe(403);
    const self = await patchAccount(user, user.id, { plan: 'enterprise' });
    expect(self.status).toBe(403);
    // The session cookie is no way around it either.
    const viaCookie = await app.request('/v1/admin/accounts', { headers: { cookie: user.cookie } });
    expect(viaCookie.status).toBe(403);

    const list = await graphql(app, user, ACCOUNTS);
    expect(list.data).toEqual({
      accounts: { __typename: 'ForbiddenError', code: 'forbidden', message: expect.any(String) },
    });
    const update = await graphql(app, user, UPDATE, { id: user.id, input: { plan: 'ENTERPRISE' } });
    expect(update.data).toMatchObject({ updateAccount: { __typename: 'ForbiddenError', code: 'forbidden' } });
    const row = await app.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.plan).toBe('pro');

    const anonymous = await app.request('/v1/admin/accounts');
    expect(anonymous.status).toBe(401);
  });
});

describe('setting a plan', () => {
  it('applies the new gate limit at once', async () => {
    const user = await signUpUser(app);
    for (let i = 0; i < 10; i++) await createGate(app, user); // the key is in the cache now
    expect(await setAccount(user.id, { plan: 'free' })).toMatchObject({ id: user.id, plan: 'free' });
    const refused = await app.request('/v1/gates', { method: 'POST', headers: user.auth, json: gateInput() });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      error: { code: 'plan_limit_reached', details: { limit: 10 } },
    });

    const viaGraphql = await graphql(app, admin, UPDATE, { id: user.id, input: { plan: 'PRO' } });
    expect(viaGraphql.data).toEqual({
      updateAccount: {
        __typename: 'MutationUpdateAccountSuccess',
        data: { id: user.id, plan: { id: 'pro' }, disabled: false, isAdmin: false },
      },
    });
    await createGate(app, user);
    const me = await graphql(app, user, 'query { me { gateCount plan { id maxGates } } }');
    expect(me.data).toEqual({ me: { gateCount: 11, plan: { id: 'pro', maxGates: 100 } } });
  });

  it('refuses a plan it does not know with 400 naming the field, and changes nothing', async () => {
    const user = await signUpUser(app);
    for (const plan of ['gold', 'FREE', '', 3, null]) {
      const res = await patchAccount(admin, user.id, { plan });
      expect(res.status).toBe(400);
      const body = (await res.json()) as ErrorBody;
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.details?.issues?.map((i) => i.path)).toEqual(['plan']);
      expect(body.error.message).toContain('free, pro, enterprise');
    }
    const unknownField = await patchAccount(admin, user.id, { plan: 'free', isAdmin: true });
    expect(unknownField.status).toBe(400);
    const nothing = await patchAccount(admin, user.id, {});
    expect(nothing.status).toBe(400);
    const notBoolean = await patchAccount(admin, user.id, { disabled: 'yes' });
    expect(notBoolean.status).toBe(400);
    expect(((await notBoolean.json()) as ErrorBody).error.details?.issues?.map((i) => i.path)).toEqual([
      'disabled',
    ]);
    const row = await app.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row).toMatchObject({ plan: 'pro', isAdmin: false, disabledAt: null });

    const viaGraphql = await graphql(app, admin, UPDATE, { id: user.id, input: { plan: 'GOLD' } });
    expect(viaGraphql.errors?.[0]?.message).toContain('PlanId');
    const empty = await graphql(app, admin, UPDATE, { id: user.id, input: {} });
    expect(empty.data).toMatchObject({ updateAccount: { __typename: 'ValidationError' } });
  });

  it('answers an unknown account with 404', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await patchAccount(admin, id, { plan: 'free' });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
    }
    const viaGraphql = await graphql(app, admin, UPDATE, { id: randomUUID(), input: { plan: 'FREE' } });
    expect(viaGraphql.data).toMatchObject({
      updateAccount: { __typename: 'NotFoundError', code: 'not_found' },
    });
  });
});

describe("the admin's own account", () => {
  it('cannot be disabled or leave the enterprise plan (400 with the reason)', async () => {
    const disable = await patchAccount(admin, admin.id, { disabled: true });
    expect(disable.status).toBe(400);
    const body = (await disable.json()) as ErrorBody;
    expect(body.error.details?.issues?.map((i) => i.path)).toEqual(['disabled']);
    expect(body.error.message).toContain('admin account cannot be disabled');

    const downgrade = await patchAccount(admin, admin.id, { plan: 'free' });
    expect(downgrade.status).toBe(400);
    expect(((await downgrade.json()) as ErrorBody).error.details?.issues?.map((i) => i.path)).toEqual([
      'plan',
    ]);
    const viaGraphql = await graphql(app, admin, UPDATE, { id: admin.id, input: { disabled: true } });
    expect(viaGraphql.data).toMatchObject({ updateAccount: { __typename: 'ValidationError' } });

    // What changes nothing is allowed.
    expect(await setAccount(admin.id, { plan: 'enterprise', disabled: false })).toMatchObject({
      isAdmin: true,
      plan: 'enterprise',
      disabled: false,
    });
    expect((await app.request('/v1/gates', { headers: admin.auth })).status).toBe(200);
  });
});

describe('disabling an account', () => {
  it('refuses its key and session at once (401), keeps its data, and enabling lets them in again', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const chat = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: gate.id, data: { messages: [{ role: 'user', content: 'hi' }] } },
    });
    expect(chat.status, await chat.clone().text()).toBe(200);
    await app.runtime.logs.drain();
    // Key and session used just now: both are warm in whatever this process keeps.
    expect((await app.request('/v1/gates', { headers: user.auth })).status).toBe(200);
    expect((await app.request('/v1/gates', { headers: { cookie: user.cookie } })).status).toBe(200);

    const disabled = await setAccount(user.id, { disabled: true });
    expect(disabled).toMatchObject({ id: user.id, disabled: true, disabledAt: expect.any(String) });

    const byKey = await app.request('/v1/gates', { headers: user.auth });
    expect(byKey.status).toBe(401);
    expect(await byKey.json()).toMatchObject({
      error: { code: 'unauthorized', message: expect.stringContaining('disabled') },
    });
    const byCookie = await app.request('/v1/gates', { headers: { cookie: user.cookie } });
    expect(byCookie.status).toBe(401);
    const chatAfter = await app.request('/v3/chat', {
      method: 'POST',
      headers: user.auth,
      json: { gateId: gate.id, data: { messages: [{ role: 'user', content: 'hi' }] } },
    });
    expect(chatAfter.status).toBe(401);
    const openai = await app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { ...user.auth, 'x-gatehouse-gate-id': gate.id },
      json: { model: 'gate', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(openai.status).toBe(401);
    const me = await graphql(app, user, 'query { me { id } }');
    expect(me.data).toEqual({ me: null });
    const gql = await graphql(app, user, 'query { apiKeys { id } }');
    expect(gql.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const signIn = await app.request('/v1/auth/signin', {
      method: 'POST',
      json: { email: user.email, password: user.password },
    });
    expect(signIn.status).toBe(401);
    expect(signIn.headers.getSetCookie()).toEqual([]);

    // Its data stays, and the admin sees the account as disabled.
    expect(await app.db.prisma.gate.count({ where: { userId: user.id } })).toBe(1);
    expect(await app.db.prisma.logEntry.count({ where: { userId: user.id } })).toBe(1);
    expect(await app.db.prisma.apiKey.count({ where: { userId: user.id, revokedAt: null } })).toBe(1);
    expect((await listAccounts(admin)).find((a) => a.id === user.id)).toMatchObject({ disabled: true });
    // Disabling again keeps the first time.
    expect((await setAccount(user.id, { disabled: true })).disabledAt).toBe(disabled.disabledAt);

    const enabled = await graphql(app, admin, UPDATE, { id: user.id, input: { disabled: false } });
    expect(enabled.data).toMatchObject({ updateAccount: { data: { disabled: false } } });
    expect((await app.request('/v1/gates', { headers: user.auth })).status).toBe(200);
    expect((await app.request('/v1/gates', { headers: { cookie: user.cookie } })).status).toBe(200);
    const again = await app.request('/v1/auth/signin', {
      method: 'POST',
      json: { email: user.email, password: user.password },
    });
    expect(again.status).toBe(200);
  });

  it('leaves the other accounts alone', async () => {
    const user = await signUpUser(app);
    const other = await signUpUser(app);
    await setAccount(user.id, { disabled: true });
    expect((await app.request('/v1/gates', { headers: other.auth })).status).toBe(200);
    expect((await app.request('/v1/gates', { headers: admin.auth })).status).toBe(200);
  });
});

// Last in the file: a second app takes over the database client (as in signup.test.ts).
describe('GATEHOUSE_DEFAULT_PLAN unset', () => {
  const plain = useTestApp({ GATEHOUSE_OPEN_SIGNUP: '1' });

  it('puts the first account on enterprise as the admin, and the others on free', async () => {
    const first = await signUpUser(plain);
    const second = await signUpUser(plain);
    const rows = await plain.db.prisma.user.findMany({ where: { id: { in: [first.id, second.id] } } });
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId[first.id]).toMatchObject({ isAdmin: true, plan: 'enterprise', disabledAt: null });
    expect(byId[second.id]).toMatchObject({ isAdmin: false, plan: 'free', disabledAt: null });
  });
});
