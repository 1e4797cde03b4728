/** Agent gates (issue 13): the gate type, its agent fields and their rules, and sub-gates. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, gateInput, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type ErrorBody = {
  error: { code: string; message: string; details?: { issues?: { path: string; message: string }[] } };
};
type SubGateBody = {
  subGateId: string;
  role: string;
  description: string | null;
  visibleTools: string[] | null;
  gate: { id: string; name: string; gateType: string };
  createdAt: string;
};

async function issuePaths(res: Response): Promise<string[]> {
  expect(res.status, 'status').toBe(400);
  const body = (await res.json()) as ErrorBody;
  expect(body.error.code).toBe('invalid_request');
  return (body.error.details?.issues ?? []).map((i) => i.path);
}

const post = (user: TestUser, path: string, json: unknown) =>
  app.request(path, { method: 'POST', headers: user.auth, json });
const patch = (user: TestUser, path: string, json: unknown) =>
  app.request(path, { method: 'PATCH', headers: user.auth, json });
const get = (user: TestUser, path: string) => app.request(path, { headers: user.auth });
const del = (user: TestUser, path: string) => app.request(path, { method: 'DELETE', headers: user.auth });

const agentGate = (user: TestUser, fields: Record<string, unknown> = {}) =>
  createGate(app, user, { gateType: 'agent', ...fields });

describe('the gate type and the agent fields', () => {
  it('makes standard gates by default, with the agent fields at their standard values', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    expect(gate).toMatchObject({
      gateType: 'standard',
      agentMode: null,
      orchestration: null,
      sessionSpendingLimit: null,
      sessionIdleMinutes: 30,
      maxRequestsPerSession: null,
      visibleTools: null,
    });
  });

  it('makes an agent gate with its defaults: observability, 30 idle minutes, no limits, every tool', async () => {
    const user = await signUpUser(app);
    expect(await agentGate(user)).toMatchObject({
      gateType: 'agent',
      agentMode: 'observability',
      orchestration: null,
      sessionSpendingLimit: null,
      sessionIdleMinutes: 30,
      maxRequestsPerSession: null,
      visibleTools: null,
    });
    expect(await agentGate(user, { agentMode: 'orchestrated' })).toMatchObject({
      agentMode: 'orchestrated',
      orchestration: 'static',
    });
  });

  it('stores every agent field it is given, and reads them back', async () => {
    const user = await signUpUser(app);
    const fields = {
      agentMode: 'orchestrated',
      orchestration: 'dynamic',
      sessionSpendingLimit: 2.5,
      sessionIdleMinutes: 10_080,
      maxRequestsPerSession: 40,
      visibleTools: ['search', 'read_file'],
    };
    const gate = await agentGate(user, fields);
    expect(gate).toMatchObject({ gateType: 'agent', ...fields });
    expect(await (await get(user, `/v1/gates/${gate.id}`)).json()).toMatchObject(fields);
    const cleared = await patch(user, `/v1/gates/${gate.id}`, {
      visibleTools: null,
      sessionSpendingLimit: null,
      maxRequestsPerSession: null,
    });
    expect(cleared.status).toBe(200);
    expect(await cleared.json()).toMatchObject({
      visibleTools: null,
      sessionSpendingLimit: null,
      maxRequestsPerSession: null,
    });
    const empty = await patch(user, `/v1/gates/${gate.id}`, { visibleTools: [] });
    expect(await empty.json()).toMatchObject({ visibleTools: [] });
  });

  it('refuses each agent field on a standard gate, naming it, even at its standard value', async () => {
    const user = await signUpUser(app);
    const fields = {
      agentMode: 'observability',
      orchestration: 'static',
      sessionSpendingLimit: 1,
      sessionIdleMinutes: 30,
      maxRequestsPerSession: 5,
      visibleTools: ['search'],
    };
    const created = await post(user, '/v1/gates', gateInput(fields));
    expect((await issuePaths(created)).sort()).toEqual(Object.keys(fields).sort());
    const gate = await createGate(app, user);
    for (const [field, value] of Object.entries(fields)) {
      expect(await issuePaths(await patch(user, `/v1/gates/${gate.id}`, { [field]: value })), field).toEqual([
        field,
      ]);
      expect(
        await issuePaths(await post(user, '/v1/gates', gateInput({ gateType: 'standard', [field]: value }))),
        field,
      ).toEqual([field]);
    }
  });

  it('refuses orchestration on an observability gate, on create and on update', async () => {
    const user = await signUpUser(app);
    expect(
      await issuePaths(
        await post(user, '/v1/gates', gateInput({ gateType: 'agent', orchestration: 'static' })),
      ),
    ).toEqual(['orchestration']);
    const gate = await agentGate(user);
    expect(await issuePaths(await patch(user, `/v1/gates/${gate.id}`, { orchestration: 'dynamic' }))).toEqual(
      ['orchestration'],
    );
    // Becoming observability drops the orchestration it no longer has.
    const orchestrated = await agentGate(user, { agentMode: 'orchestrated', orchestration: 'dynamic' });
    const res = await patch(user, `/v1/gates/${orchestrated.id}`, { agentMode: 'observability' });
    expect(await res.json()).toMatchObject({ agentMode: 'observability', orchestration: null });
  });

  it.each([
    ['sessionIdleMinutes', 0],
    ['sessionIdleMinutes', 10_081],
    ['sessionIdleMinutes', 1.5],
    ['sessionSpendingLimit', -0.01],
    ['maxRequestsPerSession', 0],
    ['visibleTools', ['a'.repeat(129)]],
    ['visibleTools', ['search', 'search']],
    ['visibleTools', ['']],
    ['agentMode', 'auto'],
  ])('refuses an agent gate with %s %j', async (field, value) => {
    const user = await signUpUser(app);
    const paths = await issuePaths(
      await post(user, '/v1/gates', gateInput({ gateType: 'agent', [field]: value })),
    );
    expect(
      paths.some((p) => p === field || p.startsWith(`${field}.`)),
      JSON.stringify(paths),
    ).toBe(true);
  });

  it('turns an agent gate standard, dropping its agent fields, unless it has sub-gates', async () => {
    const user = await signUpUser(app);
    const gate = await agentGate(user, {
      sessionIdleMinutes: 5,
      visibleTools: ['x'],
      agentMode: 'orchestrated',
    });
    const res = await patch(user, `/v1/gates/${gate.id}`, { gateType: 'standard' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      gateType: 'standard',
      agentMode: null,
      orchestration: null,
      sessionIdleMinutes: 30,
      visibleTools: null,
    });
    expect(
      await issuePaths(
        await patch(user, `/v1/gates/${gate.id}`, { gateType: 'standard', sessionIdleMinutes: 5 }),
      ),
    ).toEqual(['sessionIdleMinutes']);

    const withSub = await agentGate(user);
    const sub = await createGate(app, user);
    expect(
      (await post(user, `/v1/gates/${withSub.id}/sub-gates`, { subGateId: sub.id, role: 'search' })).status,
    ).toBe(201);
    expect(await issuePaths(await patch(user, `/v1/gates/${withSub.id}`, { gateType: 'standard' }))).toEqual([
      'gateType',
    ]);
  });

  it('shows and takes the agent fields through GraphQL, refusing them on a standard gate', async () => {
    const user = await signUpUser(app);
    const fields = `id gateType agentMode orchestration sessionSpendingLimit sessionIdleMinutes maxRequestsPerSession visibleTools`;
    const created = await graphql<{ createGate: { data?: Record<string, unknown> } }>(
      app,
      user,
      `mutation($input: GateInput!) { createGate(input: $input) {
         ... on MutationCreateGateSuccess { data { ${fields} } }
         ... on ValidationError { issues { path message } } } }`,
      {
        input: {
          name: `g-${randomUUID()}`,
          model: 'mock/echo',
          taskType: 'CHAT',
          gateType: 'AGENT',
          agentMode: 'ORCHESTRATED',
          orchestration: 'DYNAMIC',
          sessionSpendingLimit: 1.25,
          visibleTools: ['search'],
        },
      },
    );
    expect(created.errors).toBeUndefined();
    expect(created.data?.createGate.data).toMatchObject({
      gateType: 'AGENT',
      agentMode: 'ORCHESTRATED',
      orchestration: 'DYNAMIC',
      sessionSpendingLimit: 1.25,
      sessionIdleMinutes: 30,
      maxRequestsPerSession: null,
      visibleTools: ['search'],
    });
    const refused = await graphql<{ createGate: { issues?: { path: string }[] } }>(
      app,
      user,
      `mutation($input: GateInput!) { createGate(input: $input) {
         ... on ValidationError { issues { path message } } } }`,
      {
        input: { name: `g-${randomUUID()}`, model: 'mock/echo', taskType: 'CHAT', maxRequestsPerSession: 3 },
      },
    );
    expect(refused.data?.createGate.issues?.map((i) => i.path)).toEqual(['maxRequestsPerSession']);
  });
});

describe('sub-gates', () => {
  const subGates = async (user: TestUser, gateId: string) => {
    const res = await get(user, `/v1/gates/${gateId}/sub-gates`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { subGates: SubGateBody[] }).subGates;
  };
  const attach = (user: TestUser, gateId: string, json: Record<string, unknown>) =>
    post(user, `/v1/gates/${gateId}/sub-gates`, json);

  it('attaches gates of any task type and gate type under roles, lists them in order, and detaches them', async () => {
    const user = await signUpUser(app);
    const agent = await agentGate(user, { agentMode: 'orchestrated' });
    const search = await createGate(app, user);
    const embed = await createGate(app, user, { taskType: 'embeddings', model: 'mock/embed' });
    const nested = await agentGate(user);
    const res = await attach(user, agent.id, {
      subGateId: search.id,
      role: 'search',
      description: 'Finds things',
      visibleTools: ['web_search'],
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      subGateId: search.id,
      role: 'search',
      description: 'Finds things',
      visibleTools: ['web_search'],
      gate: { id: search.id, name: search.name, gateType: 'standard', taskType: 'chat' },
    });
    expect((await attach(user, agent.id, { subGateId: embed.id, role: 'embed_2' })).status).toBe(201);
    expect((await attach(user, agent.id, { subGateId: nested.id, role: 'sub-agent' })).status).toBe(201);
    const listed = await subGates(user, agent.id);
    expect(listed.map((s) => [s.role, s.subGateId, s.description, s.visibleTools])).toEqual([
      ['search', search.id, 'Finds things', ['web_search']],
      ['embed_2', embed.id, null, null],
      ['sub-agent', nested.id, null, null],
    ]);
    expect((await del(user, `/v1/gates/${agent.id}/sub-gates/${embed.id}`)).status).toBe(204);
    expect((await subGates(user, agent.id)).map((s) => s.role)).toEqual(['search', 'sub-agent']);
    // Detached already, or never attached: a 404.
    expect((await del(user, `/v1/gates/${agent.id}/sub-gates/${embed.id}`)).status).toBe(404);
    expect((await del(user, `/v1/gates/${agent.id}/sub-gates/not-a-uuid`)).status).toBe(404);
  });

  it('refuses a standard agent gate, a missing or foreign sub-gate, itself, a taken role, the same gate twice', async () => {
    const user = await signUpUser(app);
    const other = await signUpUser(app);
    const agent = await agentGate(user);
    const standard = await createGate(app, user);
    const foreign = await createGate(app, other);
    const sub = await createGate(app, user);
    const sub2 = await createGate(app, user);
    expect(await issuePaths(await attach(user, standard.id, { subGateId: sub.id, role: 'x' }))).toEqual([
      'gateId',
    ]);
    expect(await issuePaths(await attach(user, agent.id, { subGateId: foreign.id, role: 'x' }))).toEqual([
      'subGateId',
    ]);
    expect(await issuePaths(await attach(user, agent.id, { subGateId: randomUUID(), role: 'x' }))).toEqual([
      'subGateId',
    ]);
    expect(await issuePaths(await attach(user, agent.id, { subGateId: agent.id, role: 'x' }))).toEqual([
      'subGateId',
    ]);
    expect((await attach(user, agent.id, { subGateId: sub.id, role: 'x' })).status).toBe(201);
    expect(await issuePaths(await attach(user, agent.id, { subGateId: sub2.id, role: 'x' }))).toEqual([
      'role',
    ]);
    expect(await issuePaths(await attach(user, agent.id, { subGateId: sub.id, role: 'y' }))).toEqual([
      'subGateId',
    ]);
    for (const role of ['', 'Upper', 'with space', 'a'.repeat(65), 'dot.ted']) {
      expect(await issuePaths(await attach(user, agent.id, { subGateId: sub2.id, role })), role).toEqual([
        'role',
      ]);
    }
    expect(
      await issuePaths(await attach(user, agent.id, { subGateId: sub2.id, role: 'ok', extra: 1 })),
    ).toEqual(['extra']);
    expect((await subGates(user, agent.id)).map((s) => s.role)).toEqual(['x']);
  });

  it('refuses a cycle, direct or through other agent gates', async () => {
    const user = await signUpUser(app);
    const a = await agentGate(user);
    const b = await agentGate(user);
    const c = await agentGate(user);
    expect((await attach(user, a.id, { subGateId: b.id, role: 'b' })).status).toBe(201);
    expect((await attach(user, b.id, { subGateId: c.id, role: 'c' })).status).toBe(201);
    expect(await issuePaths(await attach(user, b.id, { subGateId: a.id, role: 'a' }))).toEqual(['subGateId']);
    expect(await issuePaths(await attach(user, c.id, { subGateId: a.id, role: 'a' }))).toEqual(['subGateId']);
    // Not a cycle: two paths to the same gate.
    expect((await attach(user, a.id, { subGateId: c.id, role: 'c' })).status).toBe(201);
  });

  it('keeps another user out: their agent gate is a 404 on every sub-gate route', async () => {
    const owner = await signUpUser(app);
    const stranger = await signUpUser(app);
    const agent = await agentGate(owner);
    const sub = await createGate(app, owner);
    expect((await attach(owner, agent.id, { subGateId: sub.id, role: 'x' })).status).toBe(201);
    const mine = await createGate(app, stranger);
    expect((await get(stranger, `/v1/gates/${agent.id}/sub-gates`)).status).toBe(404);
    expect((await attach(stranger, agent.id, { subGateId: mine.id, role: 'y' })).status).toBe(404);
    expect((await del(stranger, `/v1/gates/${agent.id}/sub-gates/${sub.id}`)).status).toBe(404);
    expect((await subGates(owner, agent.id)).map((s) => s.role)).toEqual(['x']);
  });

  it('detaches a deleted gate from every agent gate, which can then give its role to another', async () => {
    const user = await signUpUser(app);
    const a = await agentGate(user);
    const b = await agentGate(user);
    const shared = await createGate(app, user);
    const keep = await createGate(app, user);
    expect((await attach(user, a.id, { subGateId: shared.id, role: 'search' })).status).toBe(201);
    expect((await attach(user, b.id, { subGateId: shared.id, role: 'lookup' })).status).toBe(201);
    expect((await attach(user, b.id, { subGateId: keep.id, role: 'keep' })).status).toBe(201);

    const connections = `query($id: ID!) { gate(id: $id) { connections { role agentGate { id } } subGates { role gate { id } } } }`;
    type Conn = { gate: { connections: { role: string; agentGate: { id: string } }[]; subGates: unknown[] } };
    const before = await graphql<Conn>(app, user, connections, { id: shared.id });
    expect(before.data?.gate.connections.map((c) => [c.role, c.agentGate.id]).sort()).toEqual(
      [
        ['lookup', b.id],
        ['search', a.id],
      ].sort(),
    );

    expect((await del(user, `/v1/gates/${shared.id}`)).status).toBe(204);
    expect(await subGates(user, a.id)).toEqual([]);
    expect((await subGates(user, b.id)).map((s) => s.role)).toEqual(['keep']);
    const keepConnections = await graphql<Conn>(app, user, connections, { id: keep.id });
    expect(keepConnections.data?.gate.connections.map((c) => c.role)).toEqual(['keep']);
    expect(await app.db.prisma.subGate.count({ where: { subGateId: shared.id } })).toBe(0);
    // The role is free again.
    const replacement = await createGate(app, user);
    expect((await attach(user, a.id, { subGateId: replacement.id, role: 'search' })).status).toBe(201);
    // Deleting the agent gate takes its own attachments with it.
    expect((await del(user, `/v1/gates/${b.id}`)).status).toBe(204);
    expect(await app.db.prisma.subGate.count({ where: { agentGateId: b.id } })).toBe(0);
  });

  it('attaches, lists and detaches through GraphQL, with typed errors', async () => {
    const user = await signUpUser(app);
    const stranger = await signUpUser(app);
    const agent = await agentGate(user);
    const sub = await createGate(app, user);
    const attachMutation = `mutation($gateId: ID!, $input: SubGateInput!) { attachSubGate(gateId: $gateId, input: $input) {
        __typename
        ... on MutationAttachSubGateSuccess { data { role description visibleTools gate { id } } }
        ... on ValidationError { issues { path message } }
        ... on NotFoundError { message } } }`;
    type Attach = {
      attachSubGate: { __typename: string; data?: Record<string, unknown>; issues?: { path: string }[] };
    };
    const ok = await graphql<Attach>(app, user, attachMutation, {
      gateId: agent.id,
      input: { subGateId: sub.id, role: 'search', description: 'd', visibleTools: ['t'] },
    });
    expect(ok.errors).toBeUndefined();
    expect(ok.data?.attachSubGate.data).toEqual({
      role: 'search',
      description: 'd',
      visibleTools: ['t'],
      gate: { id: sub.id },
    });
    const dup = await graphql<Attach>(app, user, attachMutation, {
      gateId: agent.id,
      input: { subGateId: (await createGate(app, user)).id, role: 'search' },
    });
    expect(dup.data?.attachSubGate.issues?.map((i) => i.path)).toEqual(['role']);
    const foreign = await graphql<Attach>(app, stranger, attachMutation, {
      gateId: agent.id,
      input: { subGateId: sub.id, role: 'other' },
    });
    expect(foreign.data?.attachSubGate.__typename).toBe('NotFoundError');

    const listed = await graphql<{ gate: { subGates: { role: string }[] } }>(
      app,
      user,
      `query($id: ID!) { gate(id: $id) { subGates { role } } }`,
      { id: agent.id },
    );
    expect(listed.data?.gate.subGates).toEqual([{ role: 'search' }]);
    const detach = `mutation($gateId: ID!, $subGateId: ID!) { detachSubGate(gateId: $gateId, subGateId: $subGateId) {
        __typename ... on MutationDetachSubGateSuccess { data } } }`;
    const strangerDetach = await graphql<{ detachSubGate: { __typename: string } }>(app, stranger, detach, {
      gateId: agent.id,
      subGateId: sub.id,
    });
    expect(strangerDetach.data?.detachSubGate.__typename).toBe('NotFoundError');
    const detached = await graphql<{ detachSubGate: { data?: string } }>(app, user, detach, {
      gateId: agent.id,
      subGateId: sub.id,
    });
    expect(detached.data?.detachSubGate.data).toBe(sub.id);
  });
});
