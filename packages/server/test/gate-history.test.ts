/**
 * Gate history and rollback (issue 14 item 5): every change of a gate is a version with who,
 * when and what changed; a rollback restores a version's settings exactly, as a new version.
 */
import { randomUUID } from 'node:crypto';
import { GATE_FIELDS } from '@gatehouse/rules/gate';
import { describe, expect, it } from 'vitest';
import { updateGate } from '../src/domain/gates.ts';
import { useTestApp } from './support/app.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type Version = {
  id: string;
  version: number;
  changedBy: string;
  actor: { id: string; email: string | null } | null;
  rolledBackTo: { id: string; version: number | null } | null;
  changedFields: string[];
  changes: Record<string, { from: unknown; to: unknown }>;
  settings: Record<string, unknown>;
  createdAt: string;
};
type HistoryPage = {
  versions: Version[];
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
};
type ErrorBody = { error: { code: string; message: string; details?: { issues?: { path: string }[] } } };

const patch = (user: TestUser, id: string, json: unknown) =>
  app.request(`/v1/gates/${id}`, { method: 'PATCH', headers: user.auth, json });
const rollback = (user: TestUser, id: string, json: unknown) =>
  app.request(`/v1/gates/${id}/rollback`, { method: 'POST', headers: user.auth, json });

async function history(user: TestUser, id: string, query = ''): Promise<HistoryPage> {
  const res = await app.request(`/v1/gates/${id}/history${query}`, { headers: user.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as HistoryPage;
}

async function patched(user: TestUser, id: string, json: unknown) {
  const res = await patch(user, id, json);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** The gate's settable fields as GET /v1/gates/:id shows them. */
async function settingsOf(user: TestUser, id: string) {
  const res = await app.request(`/v1/gates/${id}`, { headers: user.auth });
  expect(res.status).toBe(200);
  const gate = (await res.json()) as Record<string, unknown>;
  return Object.fromEntries(GATE_FIELDS.map((f) => [f, gate[f]]));
}

describe('gate history', () => {
  it('records the creation as version 1 and each change with only the fields it changed', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { temperature: 0.2, tags: ['a'] });
    await patched(user, gate.id, { temperature: 0.7, model: 'mock/fast' });
    await patched(user, gate.id, { systemPrompt: 'Be brief.', temperature: 0.7 });

    const { versions } = await history(user, gate.id);
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    const [third, second, first] = versions as [Version, Version, Version];
    expect(first.changedBy).toBe('user');
    expect(first.actor).toEqual({ id: user.id, email: user.email });
    expect(first.changedFields).toEqual(['taskType', 'tags', 'model', 'temperature', 'name'].sort(byField));
    expect(first.changes.temperature).toEqual({ from: null, to: 0.2 });
    expect(second.changedFields).toEqual(['model', 'temperature']);
    expect(second.changes).toEqual({
      model: { from: 'mock/echo', to: 'mock/fast' },
      temperature: { from: 0.2, to: 0.7 },
    });
    // temperature was sent again at its value: not a change.
    expect(third.changedFields).toEqual(['systemPrompt']);
    expect(third.changes).toEqual({ systemPrompt: { from: null, to: 'Be brief.' } });
    expect(third.settings).toEqual(await settingsOf(user, gate.id));
  });

  it('records nothing for a PATCH that changes nothing', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { temperature: 0.5 });
    await patched(user, gate.id, { temperature: 0.5, model: 'mock/echo', name: gate.name });
    const { versions } = await history(user, gate.id);
    expect(versions.map((v) => v.version)).toEqual([1]);
  });

  it('pages newest first with a cursor', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    for (const temperature of [0.1, 0.2, 0.3, 0.4]) await patched(user, gate.id, { temperature });
    const first = await history(user, gate.id, '?limit=3');
    expect(first.versions.map((v) => v.version)).toEqual([5, 4, 3]);
    expect(first.pagination).toMatchObject({ limit: 3, hasMore: true });
    const second = await history(user, gate.id, `?limit=3&cursor=${first.pagination.nextCursor}`);
    expect(second.versions.map((v) => v.version)).toEqual([2, 1]);
    expect(second.pagination).toEqual({ limit: 3, hasMore: false, nextCursor: null });
    // The last of a page still shows what it changed from the version before it.
    expect(first.versions[2]?.changes).toEqual({ temperature: { from: 0.1, to: 0.2 } });

    const bad = await app.request(`/v1/gates/${gate.id}/history?limit=500&cursor=nope`, {
      headers: user.auth,
    });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as ErrorBody;
    expect(body.error.details?.issues?.map((i) => i.path).sort()).toEqual(['limit']);
    const foreignCursor = await app.request(`/v1/gates/${gate.id}/history?cursor=${gate.id}`, {
      headers: user.auth,
    });
    expect(((await foreignCursor.json()) as ErrorBody).error.details?.issues?.[0]?.path).toBe('cursor');
  });

  it('rolls back to a version exactly, as a new version that can itself be undone', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      description: 'Answers support questions',
      allowOverrides: { model: true, temperature: false },
      responseFormatEnabled: true,
      responseFormatType: 'json_schema',
      responseFormatSchema: { type: 'object', properties: { z: { type: 'string' }, a: { type: 'number' } } },
      spendingLimit: 12.5,
      fallbackModels: ['mock/fast'],
      routingStrategy: 'fallback',
    });
    const v1 = await settingsOf(user, gate.id);
    await patched(user, gate.id, {
      model: 'mock/smart',
      fallbackModels: ['mock/echo', 'mock/fast'],
      allowOverrides: true,
      responseFormatEnabled: false,
      spendingLimit: null,
      description: null,
      tags: ['changed'],
    });
    const { versions } = await history(user, gate.id);
    const target = versions.find((v) => v.version === 1) as Version;

    const res = await rollback(user, gate.id, { versionId: target.id });
    expect(res.status, await res.clone().text()).toBe(200);
    const answered = (await res.json()) as Record<string, unknown>;
    expect(answered.id).toBe(gate.id);
    expect(await settingsOf(user, gate.id)).toEqual(v1);
    expect(await settingsOf(user, gate.id)).toEqual(target.settings);

    const after = await history(user, gate.id);
    const latest = after.versions[0] as Version;
    expect(latest).toMatchObject({
      version: 3,
      changedBy: 'rollback',
      actor: { id: user.id, email: user.email },
      rolledBackTo: { id: target.id, version: 1 },
    });
    expect(latest.changes.model).toEqual({ from: 'mock/smart', to: 'mock/echo' });
    expect(latest.changes.spendingLimit).toEqual({ from: null, to: 12.5 });

    // Undo the rollback: back to version 2's settings.
    const v2 = after.versions.find((v) => v.version === 2) as Version;
    expect((await rollback(user, gate.id, { versionId: v2.id })).status).toBe(200);
    expect(await settingsOf(user, gate.id)).toEqual(v2.settings);
  });

  it('keeps the settings of a gate made before history was kept as version 1, so its first change can be rolled back', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/smart', temperature: 0.3 });
    const original = await settingsOf(user, gate.id);
    // As the migration leaves a gate that existed before it: no versions.
    await app.db.driver.query('DELETE FROM gate_versions WHERE gate_id = $1', [gate.id]);
    await patched(user, gate.id, { model: 'mock/fast' });
    const { versions } = await history(user, gate.id);
    expect(versions.map((v) => [v.version, v.changedFields])).toEqual([
      [2, ['model']],
      [1, []],
    ]);
    const res = await rollback(user, gate.id, { versionId: versions[1]?.id });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await settingsOf(user, gate.id)).toEqual(original);
  });

  it('rolls an agent gate back to when it was standard', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const standard = await settingsOf(user, gate.id);
    await patched(user, gate.id, { gateType: 'agent', agentMode: 'orchestrated', sessionIdleMinutes: 5 });
    const { versions } = await history(user, gate.id);
    expect(versions[0]?.changedFields).toEqual([
      'gateType',
      'agentMode',
      'orchestration',
      'sessionIdleMinutes',
    ]);
    const res = await rollback(user, gate.id, { versionId: versions.at(-1)?.id });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await settingsOf(user, gate.id)).toEqual(standard);
  });

  it('restores the description exactly on a gate that enhances its description on save', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { autoEnhanceDescription: true, description: 'answers orders' });
    const v1 = await settingsOf(user, gate.id);
    await patched(user, gate.id, { description: 'writes code reviews in python', temperature: 1 });
    const { versions } = await history(user, gate.id);
    expect((await rollback(user, gate.id, { versionId: versions.at(-1)?.id })).status).toBe(200);
    expect(await settingsOf(user, gate.id)).toEqual(v1);
  });

  it('refuses a version it can no longer apply, and changes nothing', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { name: `first-${randomUUID()}` });
    await patched(user, gate.id, { name: `second-${randomUUID()}`, temperature: 1 });
    const before = await settingsOf(user, gate.id);
    // Another gate takes the first name meanwhile.
    await createGate(app, user, { name: gate.name });
    const { versions } = await history(user, gate.id);
    const res = await rollback(user, gate.id, { versionId: versions.at(-1)?.id });
    expect(res.status).toBe(409);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe('conflict');
    expect(body.error.message).toMatch(/Version 1 can no longer be applied/);
    expect(await settingsOf(user, gate.id)).toEqual(before);
    expect((await history(user, gate.id)).versions).toHaveLength(2);
  });

  it('answers 404 for another user’s gate or a version of another gate, and 400 without a versionId', async () => {
    const owner = await signUpUser(app);
    const other = await signUpUser(app);
    const gate = await createGate(app, owner);
    const otherGate = await createGate(app, owner);
    const [version] = (await history(owner, gate.id)).versions as [Version];
    const [otherVersion] = (await history(owner, otherGate.id)).versions as [Version];

    const foreignHistory = await app.request(`/v1/gates/${gate.id}/history`, { headers: other.auth });
    expect(foreignHistory.status).toBe(404);
    expect(((await foreignHistory.json()) as ErrorBody).error.code).toBe('not_found');
    expect((await rollback(other, gate.id, { versionId: version.id })).status).toBe(404);

    const wrongGate = await rollback(owner, gate.id, { versionId: otherVersion.id });
    expect(wrongGate.status).toBe(404);
    const body = (await wrongGate.json()) as ErrorBody;
    expect(body.error.code).toBe('not_found');
    expect(body.error.message).toContain(otherVersion.id);
    expect((await rollback(owner, gate.id, { versionId: 'v1' })).status).toBe(404);

    const missing = await rollback(owner, gate.id, {});
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as ErrorBody).error.details?.issues?.[0]?.path).toBe('versionId');
  });

  it('records an Architect change as changed by the Architect, with no actor', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await updateGate(user.id, gate.id, { model: 'mock/smart', fallbackModels: ['mock/fast'] }, app.runtime, {
      kind: 'architect',
    });
    const [latest] = (await history(user, gate.id)).versions as [Version];
    expect(latest).toMatchObject({
      version: 2,
      changedBy: 'architect',
      actor: null,
      changedFields: ['model', 'fallbackModels'],
      changes: {
        model: { from: 'mock/echo', to: 'mock/smart' },
        fallbackModels: { from: [], to: ['mock/fast'] },
      },
    });
  });

  it('numbers concurrent changes 1, 2, ... and compares each with the gate as the one before left it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    // Alternating values: a change compared with a stale gate would record a change that changes
    // nothing, or miss one that does.
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => patch(user, gate.id, { maxTokens: i % 2 === 0 ? 100 : 200 })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const { versions } = await history(user, gate.id);
    expect(versions.map((v) => v.version)).toEqual(
      Array.from({ length: versions.length }, (_, i) => versions.length - i),
    );
    expect(versions.length).toBeGreaterThan(1);
    for (const v of versions.slice(0, -1)) {
      expect(v.changedFields).toEqual(['maxTokens']);
      expect(v.changes.maxTokens?.from).not.toEqual(v.changes.maxTokens?.to);
    }
    expect(versions[0]?.settings.maxTokens).toBe((await settingsOf(user, gate.id)).maxTokens);
  });
  it('reads the history and rolls back through GraphQL, with typed errors', async () => {
    const user = await signUpUser(app);
    const other = await signUpUser(app);
    const gate = await createGate(app, user, { temperature: 0.3 });
    const original = await settingsOf(user, gate.id);
    await patched(user, gate.id, { temperature: 0.9, systemPrompt: 'Be terse.' });

    const HISTORY = `query ($id: ID!, $first: Int) { gate(id: $id) { history(first: $first) {
      edges { node { id version changedBy actorId actorEmail changedFields
        changes { field from to } rolledBackToVersion } }
      pageInfo { hasNextPage endCursor } } } }`;
    type Node = {
      id: string;
      version: number;
      changedBy: string;
      actorEmail: string | null;
      changes: { field: string; from: unknown; to: unknown }[];
      rolledBackToVersion: number | null;
    };
    type HistoryData = {
      gate: { history: { edges: { node: Node }[]; pageInfo: { hasNextPage: boolean } } };
    };
    const read = await graphql<HistoryData>(app, user, HISTORY, { id: gate.id, first: 1 });
    expect(read.errors).toBeUndefined();
    const [latest] = read.data?.gate.history.edges ?? [];
    expect(latest?.node).toMatchObject({ version: 2, changedBy: 'USER', actorEmail: user.email });
    expect(latest?.node.changes).toEqual([
      { field: 'systemPrompt', from: null, to: 'Be terse.' },
      { field: 'temperature', from: 0.3, to: 0.9 },
    ]);
    expect(read.data?.gate.history.pageInfo.hasNextPage).toBe(true);

    const ROLLBACK = `mutation ($id: ID!, $versionId: ID!) { rollbackGate(id: $id, versionId: $versionId) {
      __typename
      ... on MutationRollbackGateSuccess { data { id temperature systemPrompt } }
      ... on Error { code message } } }`;
    type RollbackData = {
      rollbackGate: { __typename: string; data?: Record<string, unknown>; code?: string; message?: string };
    };
    const first = (await history(user, gate.id)).versions.at(-1) as Version;
    const done = await graphql<RollbackData>(app, user, ROLLBACK, { id: gate.id, versionId: first.id });
    expect(done.data?.rollbackGate).toEqual({
      __typename: 'MutationRollbackGateSuccess',
      data: { id: gate.id, temperature: 0.3, systemPrompt: null },
    });
    expect(await settingsOf(user, gate.id)).toEqual(original);
    const after = await graphql<HistoryData>(app, user, HISTORY, { id: gate.id, first: 1 });
    expect(after.data?.gate.history.edges[0]?.node).toMatchObject({
      version: 3,
      changedBy: 'ROLLBACK',
      rolledBackToVersion: 1,
    });

    const missing = await graphql<RollbackData>(app, user, ROLLBACK, { id: gate.id, versionId: gate.id });
    expect(missing.data?.rollbackGate).toMatchObject({ __typename: 'NotFoundError', code: 'not_found' });
    expect(missing.data?.rollbackGate.message).toContain(gate.id);
    const foreign = await graphql<RollbackData>(app, other, ROLLBACK, { id: gate.id, versionId: first.id });
    expect(foreign.data?.rollbackGate.__typename).toBe('NotFoundError');
    expect(await settingsOf(user, gate.id)).toEqual(original);
  });
});

function byField(a: string, b: string) {
  return GATE_FIELDS.indexOf(a as never) - GATE_FIELDS.indexOf(b as never);
}
