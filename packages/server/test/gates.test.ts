import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, gateInput, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type GateBody = Record<string, unknown> & { id: string; name: string };
type GatePage = {
  gates: GateBody[];
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
};
type ErrorBody = { error: { code: string; message: string; details?: { issues?: { path: string }[] } } };

async function readGate(user: TestUser, id: string) {
  return app.request(`/v1/gates/${id}`, { headers: user.auth });
}

async function patchGate(user: TestUser, id: string, json: unknown) {
  return app.request(`/v1/gates/${id}`, { method: 'PATCH', headers: user.auth, json });
}

async function listGates(user: TestUser, query = '') {
  const res = await app.request(`/v1/gates${query}`, { headers: user.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as GatePage;
}

function issuePaths(body: ErrorBody): string[] {
  return (body.error.details?.issues ?? []).map((i) => i.path);
}

/** Sets the spending counter directly: the data plane that normally moves it is not under test. */
async function setSpending(gateId: string, spendingCurrent: number) {
  await app.db.prisma.gate.update({ where: { id: gateId }, data: { spendingCurrent } });
}

describe('creating a gate', () => {
  it('answers 201 with the defaults filled in and the read-only fields set', async () => {
    const user = await signUpUser(app);
    const input = gateInput();
    const before = Date.now();
    const res = await app.request('/v1/gates', { method: 'POST', headers: user.auth, json: input });
    expect(res.status).toBe(201);
    const gate = (await res.json()) as GateBody;
    expect(gate).toMatchObject({
      name: input.name,
      model: 'mock/echo',
      taskType: 'chat',
      taskSubtype: null,
      description: null,
      tags: [],
      routingStrategy: 'single',
      fallbackModels: [],
      systemPrompt: null,
      temperature: null,
      maxTokens: null,
      topP: null,
      allowOverrides: false,
      reanalysisPeriod: 'never',
      autoApplyRecommendations: false,
      responseFormatEnabled: false,
      responseFormatType: 'text',
      responseFormatSchema: null,
      spendingLimit: null,
      spendingLimitPeriod: 'monthly',
      spendingEnforcement: 'alert_only',
      userId: user.id,
      spendingCurrent: 0,
      spendingStatus: 'active',
      taskAnalysis: null,
    });
    expect(gate.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    for (const field of ['createdAt', 'updatedAt', 'spendingPeriodStart'] as const) {
      expect(Number.isNaN(Date.parse(String(gate[field]))), field).toBe(false);
    }
    expect(Date.parse(String(gate.createdAt))).toBeGreaterThanOrEqual(before - 1000);
  });

  it('stores every setting it is given', async () => {
    const user = await signUpUser(app);
    const settings = {
      description: 'Answers support questions',
      tags: ['support', 'prod'],
      taskSubtype: 'reasoning',
      routingStrategy: 'fallback',
      fallbackModels: ['mock/fast', 'mock/smart'],
      systemPrompt: 'Be brief.',
      temperature: 0.7,
      maxTokens: 512,
      topP: 0.9,
      allowOverrides: { temperature: true },
      analysisMethod: 'custom',
      costWeight: 0.5,
      latencyWeight: 0.25,
      qualityWeight: 0.25,
      responseFormatEnabled: true,
      responseFormatType: 'json_schema',
      responseFormatSchema: { type: 'object', properties: { answer: { type: 'string' } } },
      spendingLimit: 12.5,
      spendingLimitPeriod: 'daily',
      spendingEnforcement: 'block',
    };
    const created = await createGate(app, user, settings);
    expect(created).toMatchObject(settings);
    const res = await readGate(user, created.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  it('trims the name it stores', async () => {
    const user = await signUpUser(app);
    const name = `trimmed-${randomUUID()}`;
    const gate = await createGate(app, user, { name: `  ${name}  ` });
    expect(gate.name).toBe(name);
  });
});

describe('reading a gate', () => {
  it('returns the gate as it was created', async () => {
    const user = await signUpUser(app);
    const created = await createGate(app, user);
    const res = await readGate(user, created.id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  it('answers 404 for an id that names no gate, and for one that is no UUID', async () => {
    const user = await signUpUser(app);
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await readGate(user, id);
      expect(res.status, id).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
    }
  });
});

describe('listing gates', () => {
  it('lists only the caller’s gates, newest first, with the pagination block', async () => {
    const user = await signUpUser(app);
    const first = await createGate(app, user);
    const second = await createGate(app, user);
    // Two creations can fall in the same millisecond; an hour apart, "newest" is unambiguous.
    await app.db.prisma.gate.update({
      where: { id: first.id },
      data: { createdAt: new Date(Date.now() - 3_600_000) },
    });
    await createGate(app, await signUpUser(app));
    const page = await listGates(user);
    expect(page.gates.map((g) => g.id)).toEqual([second.id, first.id]);
    expect(page.pagination).toEqual({ limit: 50, nextCursor: null, hasMore: false });
  });

  it('filters by tag', async () => {
    const user = await signUpUser(app);
    const tag = `team-${randomUUID().slice(0, 8)}`;
    const tagged = await createGate(app, user, { tags: [tag, 'other'] });
    await createGate(app, user, { tags: ['other'] });
    await createGate(app, user);
    const page = await listGates(user, `?tag=${tag}`);
    expect(page.gates.map((g) => g.id)).toEqual([tagged.id]);
  });

  it('filters by task type', async () => {
    const user = await signUpUser(app);
    const embeddings = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const chat = await createGate(app, user);
    expect((await listGates(user, '?taskType=embeddings')).gates.map((g) => g.id)).toEqual([embeddings.id]);
    expect((await listGates(user, '?taskType=chat')).gates.map((g) => g.id)).toEqual([chat.id]);
    expect((await listGates(user, '?taskType=image')).gates).toEqual([]);
  });

  async function pageThrough(user: TestUser, limit: number) {
    const seen: string[] = [];
    const pages: GatePage['pagination'][] = [];
    let cursor: string | null = null;
    do {
      const page = await listGates(user, `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.gates.length).toBeLessThanOrEqual(limit);
      seen.push(...page.gates.map((g) => g.id));
      pages.push(page.pagination);
      cursor = page.pagination.nextCursor;
    } while (cursor && pages.length < 20);
    return { seen, pages };
  }

  it('pages to the end without gaps or repeats', async () => {
    const user = await signUpUser(app);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await createGate(app, user)).id);
    const { seen, pages } = await pageThrough(user, 3);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...created].sort());
    expect(seen).toEqual((await listGates(user)).gates.map((g) => g.id));
    expect(pages).toEqual([
      { limit: 3, nextCursor: seen[2], hasMore: true },
      { limit: 3, nextCursor: seen[5], hasMore: true },
      { limit: 3, nextCursor: null, hasMore: false },
    ]);
  });

  it('pages without gaps or repeats through gates created in the same instant', async () => {
    const user = await signUpUser(app);
    const created: string[] = [];
    for (let i = 0; i < 6; i++) created.push((await createGate(app, user)).id);
    await app.db.prisma.gate.updateMany({
      where: { id: { in: created } },
      data: { createdAt: new Date('2026-01-01T00:00:00.000Z') },
    });
    const { seen, pages } = await pageThrough(user, 4);
    expect(seen).toEqual([...created].sort().reverse());
    expect(pages.map((p) => p.hasMore)).toEqual([true, false]);
  });

  it('ends with hasMore false when the last page is exactly full', async () => {
    const user = await signUpUser(app);
    for (let i = 0; i < 4; i++) await createGate(app, user);
    const { seen, pages } = await pageThrough(user, 2);
    expect(seen).toHaveLength(4);
    expect(pages.map((p) => p.hasMore)).toEqual([true, false]);
    expect(pages[1]?.nextCursor).toBeNull();
  });

  it('refuses a bad limit, an unknown filter and a cursor that is no gate of the caller', async () => {
    const user = await signUpUser(app);
    const other = await signUpUser(app);
    const othersGate = await createGate(app, other);
    const cases: [string, string][] = [
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=abc', 'limit'],
      ['?taskType=text', 'taskType'],
      ['?tag=a%00b', 'tag'],
      ['?cursor=nope', 'cursor'],
      [`?cursor=${randomUUID()}`, 'cursor'],
      [`?cursor=${othersGate.id}`, 'cursor'],
      ['?colour=red', 'colour'],
    ];
    for (const [query, path] of cases) {
      const res = await app.request(`/v1/gates${query}`, { headers: user.auth });
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as ErrorBody;
      expect(body.error.code).toBe('invalid_request');
      expect(issuePaths(body), query).toContain(path);
    }
  });
});

describe('updating a gate', () => {
  it('changes only the fields sent and keeps the rest', async () => {
    const user = await signUpUser(app);
    const created = await createGate(app, user, { systemPrompt: 'Be brief.', temperature: 0.3, tags: ['a'] });
    const res = await patchGate(user, created.id, { temperature: 1.2, description: 'Now described' });
    expect(res.status).toBe(200);
    const updated = (await res.json()) as GateBody;
    const { updatedAt: _before, temperature: _t, description: _d, ...unchanged } = created;
    expect(updated).toMatchObject({ ...unchanged, temperature: 1.2, description: 'Now described' });
    expect(Date.parse(String(updated.updatedAt))).toBeGreaterThanOrEqual(
      Date.parse(String(created.updatedAt)),
    );
    expect(await (await readGate(user, created.id)).json()).toEqual(updated);
  });

  it('clears optional fields sent as null', async () => {
    const user = await signUpUser(app);
    const created = await createGate(app, user, {
      description: 'to clear',
      systemPrompt: 'to clear',
      temperature: 0.5,
      maxTokens: 100,
      topP: 0.5,
      taskSubtype: 'code',
      spendingLimit: 5,
      responseFormatSchema: { type: 'object' },
    });
    const cleared = {
      description: null,
      systemPrompt: null,
      temperature: null,
      maxTokens: null,
      topP: null,
      taskSubtype: null,
      spendingLimit: null,
      responseFormatSchema: null,
    };
    const res = await patchGate(user, created.id, cleared);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject(cleared);
    expect(await (await readGate(user, created.id)).json()).toMatchObject(cleared);
  });

  it('re-checks the rules on the merged gate: embeddings with a chat model is refused on model', async () => {
    const user = await signUpUser(app);
    const created = await createGate(app, user);
    const res = await patchGate(user, created.id, { taskType: 'embeddings' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe('invalid_request');
    expect(issuePaths(body)).toContain('model');
    expect(await (await readGate(user, created.id)).json()).toEqual(created);
  });

  it('accepts a change of task type together with a model that serves it', async () => {
    const user = await signUpUser(app);
    const created = await createGate(app, user);
    const res = await patchGate(user, created.id, { taskType: 'embeddings', model: 'mock/embed' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ taskType: 'embeddings', model: 'mock/embed' });
  });

  it('refuses a fallback that duplicates the new primary model', async () => {
    const user = await signUpUser(app);
    const created = await createGate(app, user, { fallbackModels: ['mock/fast'] });
    const res = await patchGate(user, created.id, { model: 'mock/fast' });
    expect(res.status).toBe(400);
    expect(issuePaths((await res.json()) as ErrorBody)).toContain('fallbackModels.0');
  });

  it('refuses an empty update', async () => {
    const user = await signUpUser(app);
    const created = await createGate(app, user);
    const res = await patchGate(user, created.id, {});
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } });
  });

  it('answers 404 for a gate that does not exist', async () => {
    const user = await signUpUser(app);
    const res = await patchGate(user, randomUUID(), { temperature: 1 });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});

describe('deleting a gate', () => {
  it('answers 204, after which the gate is gone from reads, lists and deletes', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request(`/v1/gates/${gate.id}`, { method: 'DELETE', headers: user.auth });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect((await readGate(user, gate.id)).status).toBe(404);
    expect((await patchGate(user, gate.id, { temperature: 1 })).status).toBe(404);
    expect((await listGates(user)).gates.map((g) => g.id)).not.toContain(gate.id);
    const again = await app.request(`/v1/gates/${gate.id}`, { method: 'DELETE', headers: user.auth });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('frees the name for a new gate', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await app.request(`/v1/gates/${gate.id}`, { method: 'DELETE', headers: user.auth });
    await createGate(app, user, { name: gate.name });
  });
});

describe('gate names', () => {
  it('refuses a second gate with the same name for one user with 409 on name', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: user.auth,
      json: gateInput({ name: gate.name }),
    });
    expect(res.status).toBe(409);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe('conflict');
    expect(issuePaths(body)).toEqual(['name']);
    expect((await listGates(user)).gates).toHaveLength(1);
  });

  it('treats a name that differs only by surrounding spaces as the same name', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await app.request('/v1/gates', {
      method: 'POST',
      headers: user.auth,
      json: gateInput({ name: ` ${gate.name} ` }),
    });
    expect(res.status).toBe(409);
  });

  it('refuses a rename to a name the user has taken already', async () => {
    const user = await signUpUser(app);
    const taken = await createGate(app, user);
    const gate = await createGate(app, user);
    const res = await patchGate(user, gate.id, { name: taken.name });
    expect(res.status).toBe(409);
    expect(issuePaths((await res.json()) as ErrorBody)).toEqual(['name']);
    expect(await (await readGate(user, gate.id)).json()).toEqual(gate);
  });

  it('lets a gate keep its own name in an update', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const res = await patchGate(user, gate.id, { name: gate.name, temperature: 1 });
    expect(res.status).toBe(200);
  });

  it('leaves the same name free for another user', async () => {
    const alice = await signUpUser(app);
    const bob = await signUpUser(app);
    const gate = await createGate(app, alice);
    const bobs = await createGate(app, bob, { name: gate.name });
    expect(bobs.name).toBe(gate.name);
    expect(bobs.id).not.toBe(gate.id);
  });
});

describe('the plan limit', () => {
  it('lets a free account have 10 gates and refuses the 11th with 403 plan_limit_reached', async () => {
    const user = await signUpUser(app);
    for (let i = 0; i < 10; i++) await createGate(app, user);
    const res = await app.request('/v1/gates', { method: 'POST', headers: user.auth, json: gateInput() });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: 'plan_limit_reached', details: { limit: 10 } } });
    expect((await listGates(user)).gates).toHaveLength(10);
  });

  it('counts each account on its own and frees a place when a gate is deleted', async () => {
    const user = await signUpUser(app);
    const gates = [];
    for (let i = 0; i < 10; i++) gates.push(await createGate(app, user));
    await createGate(app, await signUpUser(app));
    const victim = gates[0]?.id;
    const del = await app.request(`/v1/gates/${victim}`, { method: 'DELETE', headers: user.auth });
    expect(del.status).toBe(204);
    await createGate(app, user);
  });
});

describe('spending limits', () => {
  it('suspends a blocking gate when its limit is set at or below this period’s spending', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingEnforcement: 'block' });
    await setSpending(gate.id, 5);
    const res = await patchGate(user, gate.id, { spendingLimit: 5 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      spendingCurrent: 5,
      spendingLimit: 5,
      spendingStatus: 'suspended',
    });
    expect(await (await readGate(user, gate.id)).json()).toMatchObject({ spendingStatus: 'suspended' });
    const stored = await app.db.prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
    expect(stored.spendingStatus).toBe('suspended');
  });

  it('keeps a blocking gate active while spending is under the limit', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingEnforcement: 'block' });
    await setSpending(gate.id, 4.99);
    const res = await patchGate(user, gate.id, { spendingLimit: 5 });
    expect(await res.json()).toMatchObject({ spendingCurrent: 4.99, spendingStatus: 'active' });
  });

  it('resumes a suspended gate when its limit is raised', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingEnforcement: 'block', spendingLimit: 10 });
    await setSpending(gate.id, 8);
    expect(await (await patchGate(user, gate.id, { spendingLimit: 3 })).json()).toMatchObject({
      spendingStatus: 'suspended',
    });
    const res = await patchGate(user, gate.id, { spendingLimit: 20 });
    expect(await res.json()).toMatchObject({ spendingLimit: 20, spendingStatus: 'active' });
    const stored = await app.db.prisma.gate.findUniqueOrThrow({ where: { id: gate.id } });
    expect(stored.spendingStatus).toBe('active');
  });

  it('resumes a suspended gate when its limit is lifted', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingEnforcement: 'block' });
    await setSpending(gate.id, 8);
    await patchGate(user, gate.id, { spendingLimit: 1 });
    const res = await patchGate(user, gate.id, { spendingLimit: null });
    expect(await res.json()).toMatchObject({ spendingLimit: null, spendingStatus: 'active' });
  });

  it('resumes a suspended gate switched to alert_only, and never suspends an alert_only gate', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingEnforcement: 'block' });
    await setSpending(gate.id, 8);
    await patchGate(user, gate.id, { spendingLimit: 1 });
    const res = await patchGate(user, gate.id, { spendingEnforcement: 'alert_only' });
    expect(await res.json()).toMatchObject({ spendingLimit: 1, spendingStatus: 'active' });
    const other = await createGate(app, user);
    await setSpending(other.id, 8);
    expect(await (await patchGate(user, other.id, { spendingLimit: 1 })).json()).toMatchObject({
      spendingStatus: 'active',
    });
  });

  it('refuses spendingCurrent and spendingStatus in an update, leaving spending as it was', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingEnforcement: 'block', spendingLimit: 1 });
    await setSpending(gate.id, 2);
    const res = await patchGate(user, gate.id, { spendingCurrent: 0, spendingStatus: 'active' });
    expect(res.status).toBe(400);
    expect(issuePaths((await res.json()) as ErrorBody).sort()).toEqual(['spendingCurrent', 'spendingStatus']);
    expect(await (await readGate(user, gate.id)).json()).toMatchObject({
      spendingCurrent: 2,
      spendingStatus: 'suspended',
    });
  });
});
