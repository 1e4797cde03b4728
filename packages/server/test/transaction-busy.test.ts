/**
 * A change whose transaction cannot finish in time (issue 24, item 9): here because another
 * connection holds the gate's row locked for longer than GATEHOUSE_TRANSACTION_TIMEOUT_MS. It is
 * tried once more, then answered 503 service_unavailable (REST) or ServiceUnavailableError
 * (GraphQL), never a 500; and once the row is free the same change goes through. PostgreSQL only:
 * PGlite has one connection, so nothing else can hold a lock while a request waits.
 */
import { describe, expect, it } from 'vitest';
import { databaseKind, useTestApp } from './support/app.ts';
import { createGate, graphql, signUpUser } from './support/factories.ts';
import { useGateRowLock } from './support/rowLock.ts';

const app = useTestApp({ GATEHOUSE_TRANSACTION_TIMEOUT_MS: '1000' });

const holdGateRow = useGateRowLock(app);

describe.skipIf(databaseKind !== 'postgres')('a transaction that cannot finish in time', () => {
  it('is answered 503 service_unavailable over REST, and the change goes through once the row is free', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const release = await holdGateRow(gate.id);
    const res = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { description: 'while locked' },
    });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status, JSON.stringify(body)).toBe(503);
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.message).toMatch(/busy.*nothing was changed/i);
    await release();
    const again = await app.request(`/v1/gates/${gate.id}`, {
      method: 'PATCH',
      headers: user.auth,
      json: { description: 'after the lock' },
    });
    expect(again.status, await again.clone().text()).toBe(200);
    expect(((await again.json()) as { description: string }).description).toBe('after the lock');
  });

  it('is a ServiceUnavailableError result in GraphQL, not a masked error', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const release = await holdGateRow(gate.id);
    const res = await graphql<{ updateGate: { __typename: string; code?: string; message?: string } }>(
      app,
      user,
      `mutation ($id: ID!, $input: GateInput!) {
        updateGate(id: $id, input: $input) { __typename ... on Error { code message } }
      }`,
      { id: gate.id, input: { description: 'while locked' } },
    );
    await release();
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data?.updateGate.__typename).toBe('ServiceUnavailableError');
    expect(res.data?.updateGate.code).toBe('service_unavailable');
  });
});
