import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

/** Alice with a gate and a second API key; Bob, a stranger to both. */
async function aliceAndBob() {
  const alice = await signUpUser(app);
  const bob = await signUpUser(app);
  const gate = await createGate(app, alice, { tags: ['shared-tag'], systemPrompt: 'Alice only' });
  const keyRes = await app.request('/v1/api-keys', {
    method: 'POST',
    headers: alice.auth,
    json: { name: 'ci' },
  });
  const key = (await keyRes.json()) as { id: string; key: string };
  return { alice, bob, gate, key };
}

async function expectUnchanged(alice: TestUser, gate: Record<string, unknown> & { id: string }) {
  const res = await app.request(`/v1/gates/${gate.id}`, { headers: alice.auth });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual(gate);
}

const NOT_FOUND = { error: { code: 'not_found', message: 'Gate not found' } };

describe('another user’s gate over REST', () => {
  it('reads as not found', async () => {
    const { alice, bob, gate } = await aliceAndBob();
    const res = await app.request(`/v1/gates/${gate.id}`, { headers: bob.auth });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(NOT_FOUND);
    await expectUnchanged(alice, gate);
  });

  it('cannot be updated: 404, and the gate is unchanged', async () => {
    const { alice, bob, gate } = await aliceAndBob();
    for (const json of [{ systemPrompt: 'Bob was here' }, { name: 'taken over' }, { temperature: 'bad' }]) {
      const res = await app.request(`/v1/gates/${gate.id}`, { method: 'PATCH', headers: bob.auth, json });
      expect(res.status, JSON.stringify(json)).toBe(404);
      expect(await res.json()).toEqual(NOT_FOUND);
    }
    await expectUnchanged(alice, gate);
  });

  it('cannot be deleted: 404, and the gate is still there', async () => {
    const { alice, bob, gate } = await aliceAndBob();
    const res = await app.request(`/v1/gates/${gate.id}`, { method: 'DELETE', headers: bob.auth });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(NOT_FOUND);
    await expectUnchanged(alice, gate);
  });

  it('never appears in the other user’s lists, whatever the filter', async () => {
    const { bob, gate } = await aliceAndBob();
    const own = await createGate(app, bob, { tags: ['shared-tag'] });
    for (const query of ['', '?tag=shared-tag', '?taskType=chat', '?limit=1']) {
      const res = await app.request(`/v1/gates${query}`, { headers: bob.auth });
      const body = (await res.json()) as { gates: { id: string }[] };
      expect(
        body.gates.map((g) => g.id),
        query,
      ).toEqual([own.id]);
    }
    const cursor = await app.request(`/v1/gates?cursor=${gate.id}`, { headers: bob.auth });
    expect(cursor.status).toBe(400);
  });
});

describe('another user’s gate over GraphQL', () => {
  const GATE = 'query($id: ID!) { gate(id: $id) { id name systemPrompt } }';
  const UPDATE = `mutation($id: ID!, $input: GateInput!) {
    updateGate(id: $id, input: $input) {
      __typename
      ... on MutationUpdateGateSuccess { data { id systemPrompt } }
      ... on Error { code message }
    }
  }`;
  const DELETE = `mutation($id: ID!) {
    deleteGate(id: $id) {
      __typename
      ... on MutationDeleteGateSuccess { data }
      ... on Error { code message }
    }
  }`;

  it('reads as null', async () => {
    const { alice, bob, gate } = await aliceAndBob();
    const result = await graphql(app, bob, GATE, { id: gate.id });
    expect(result).toEqual({ data: { gate: null } });
    expect((await graphql(app, alice, GATE, { id: gate.id })).data).toEqual({
      gate: { id: gate.id, name: gate.name, systemPrompt: 'Alice only' },
    });
  });

  it('cannot be updated: NotFoundError, and the gate is unchanged', async () => {
    const { alice, bob, gate } = await aliceAndBob();
    const result = await graphql(app, bob, UPDATE, { id: gate.id, input: { systemPrompt: 'Bob was here' } });
    expect(result).toEqual({
      data: { updateGate: { __typename: 'NotFoundError', code: 'not_found', message: 'Gate not found' } },
    });
    await expectUnchanged(alice, gate);
  });

  it('cannot be deleted: NotFoundError, and the gate is still there', async () => {
    const { alice, bob, gate } = await aliceAndBob();
    const result = await graphql(app, bob, DELETE, { id: gate.id });
    expect(result).toEqual({
      data: { deleteGate: { __typename: 'NotFoundError', code: 'not_found', message: 'Gate not found' } },
    });
    await expectUnchanged(alice, gate);
  });

  it('never appears in the other user’s gates connection', async () => {
    const { bob } = await aliceAndBob();
    const own = await createGate(app, bob, { tags: ['shared-tag'] });
    const result = await graphql<{ gates: { edges: { node: { id: string } }[] } }>(
      app,
      bob,
      'query { all: gates { edges { node { id } } } tagged: gates(tag: "shared-tag") { edges { node { id } } } }',
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      all: { edges: [{ node: { id: own.id } }] },
      tagged: { edges: [{ node: { id: own.id } }] },
    });
  });

  it('counts only the caller’s own gates in me.gateCount', async () => {
    const { bob } = await aliceAndBob();
    const result = await graphql(app, bob, 'query { me { gateCount } }');
    expect(result.data).toEqual({ me: { gateCount: 0 } });
  });
});

describe('another user’s API key', () => {
  it('cannot be revoked over REST (404), and keeps working', async () => {
    const { alice, bob, key } = await aliceAndBob();
    const res = await app.request(`/v1/api-keys/${key.id}`, { method: 'DELETE', headers: bob.auth });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
    const stillWorks = await app.request('/v1/gates', { headers: { authorization: `Bearer ${key.key}` } });
    expect(stillWorks.status).toBe(200);
    const list = await app.request('/v1/api-keys', { headers: alice.auth });
    const { apiKeys } = (await list.json()) as { apiKeys: { id: string; revokedAt: string | null }[] };
    expect(apiKeys.find((k) => k.id === key.id)?.revokedAt).toBeNull();
  });

  it('cannot be revoked over GraphQL (NotFoundError), and keeps working', async () => {
    const { bob, key } = await aliceAndBob();
    const result = await graphql(
      app,
      bob,
      'mutation($id: ID!) { revokeApiKey(id: $id) { __typename ... on Error { code } } }',
      { id: key.id },
    );
    expect(result.data).toEqual({ revokeApiKey: { __typename: 'NotFoundError', code: 'not_found' } });
    const stillWorks = await app.request('/v1/gates', { headers: { authorization: `Bearer ${key.key}` } });
    expect(stillWorks.status).toBe(200);
  });

  it('never appears in the other user’s key list', async () => {
    const { bob, key } = await aliceAndBob();
    const rest = await app.request('/v1/api-keys', { headers: bob.auth });
    const { apiKeys } = (await rest.json()) as { apiKeys: { id: string }[] };
    expect(apiKeys).toHaveLength(1);
    expect(apiKeys.map((k) => k.id)).not.toContain(key.id);
    const gql = await graphql<{ apiKeys: { id: string }[] }>(app, bob, 'query { apiKeys { id } }');
    expect(gql.data?.apiKeys.map((k) => k.id)).toEqual(apiKeys.map((k) => k.id));
  });
});
