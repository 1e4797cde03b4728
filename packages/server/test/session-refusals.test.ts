/**
 * Issue 29: a session shows every request, refused ones included, its status follows its
 * requests, and its timeline says what went in and came out of each step.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { say } from './support/chat.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type Step = {
  id: string;
  success: boolean;
  status_code: number;
  cost_usd: number;
  latency_ms: number;
  input: string | null;
  output: string | null;
};
type SessionRequests = {
  session: { status: string; requestCount: number; refusedCount: number };
  requests: Step[];
};

function completions(user: TestUser, gateId: string, key: string, body: unknown, headers = {}) {
  return app.request('/v1/chat/completions', {
    method: 'POST',
    headers: { ...user.auth, 'x-gatehouse-gate-id': gateId, 'x-gatehouse-session-id': key, ...headers },
    json: body,
  });
}

async function requestsOf(user: TestUser, gateId: string, key: string) {
  await app.runtime.logs.drain();
  const res = await app.request(`/v1/sessions/${encodeURIComponent(key)}/requests?gateId=${gateId}`, {
    headers: user.auth,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as SessionRequests;
}

async function orchestrated(user: TestUser) {
  const agent = await createGate(app, user, {
    gateType: 'agent',
    agentMode: 'orchestrated',
    orchestration: 'static',
  });
  const writer = await createGate(app, user, { name: `writer-${crypto.randomUUID()}`, model: 'mock/smart' });
  const res = await app.request(`/v1/gates/${agent.id}/sub-gates`, {
    method: 'POST',
    headers: user.auth,
    json: { subGateId: writer.id, role: 'writer', description: 'writes' },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return agent;
}

describe('a session of refused requests', () => {
  it('shows them, counts them as refused and is FAILING until a request succeeds', async () => {
    const user = await signUpUser(app);
    const agent = await orchestrated(user);
    // Eight requests naming no step: each a 400 after the session opened.
    for (let i = 0; i < 8; i++) {
      const res = await completions(user, agent.id, 'refused-run', {
        model: 'mock/echo',
        messages: say(`try ${i}`),
      });
      expect(res.status).toBe(400);
    }
    let page = await requestsOf(user, agent.id, 'refused-run');
    expect(page.session).toMatchObject({ status: 'failing', requestCount: 0, refusedCount: 8 });
    expect(page.requests).toHaveLength(8);
    expect(page.requests.every((r) => !r.success && r.status_code === 400)).toBe(true);
    // What each refused step sent, from the client's body.
    expect(page.requests[0]?.input).toBe('user: try 0');

    // A body refused before routing belongs to the session too.
    const bad = await completions(user, agent.id, 'refused-run', {
      model: 'mock/echo',
      messages: 'not a list',
    });
    expect(bad.status).toBe(400);
    page = await requestsOf(user, agent.id, 'refused-run');
    expect(page.requests).toHaveLength(9);
    expect(page.session.refusedCount).toBe(9);

    // An answered step: the status follows it, and the timeline shows its input and output.
    const ok = await completions(
      user,
      agent.id,
      'refused-run',
      { model: 'mock/echo', messages: say('write a haiku') },
      { 'x-gatehouse-action': 'writer' },
    );
    expect(ok.status, await ok.clone().text()).toBe(200);
    page = await requestsOf(user, agent.id, 'refused-run');
    expect(page.session).toMatchObject({ status: 'active', requestCount: 1, refusedCount: 9 });
    const last = page.requests.at(-1) as Step;
    expect(last).toMatchObject({ success: true, input: 'user: write a haiku' });
    expect(last.output).toEqual(expect.any(String));
    expect(last.output?.length).toBeGreaterThan(0);
    expect(last.cost_usd).toBeGreaterThan(0);
  });

  it('is found among the FAILING sessions and shows its refused steps in GraphQL', async () => {
    const user = await signUpUser(app);
    const agent = await orchestrated(user);
    for (let i = 0; i < 2; i++) {
      expect(
        (await completions(user, agent.id, 'gql-run', { model: 'mock/echo', messages: say('x') })).status,
      ).toBe(400);
    }
    await app.runtime.logs.drain();
    const res = await graphql(
      app,
      user,
      `query($gateId: ID!) {
        failing: sessions(gateId: $gateId, status: FAILING, first: 5) { edges { node { key } } }
        active: sessions(gateId: $gateId, status: ACTIVE, first: 5) { edges { node { key } } }
        session(gateId: $gateId, key: "gql-run") {
          status refusedCount
          requests(first: 10) { edges { node { success statusCode stepInput stepOutput } } }
        }
      }`,
      { gateId: agent.id },
    );
    expect(res.errors).toBeUndefined();
    const data = res.data as {
      failing: { edges: { node: { key: string } }[] };
      active: { edges: unknown[] };
      session: { status: string; refusedCount: number; requests: { edges: { node: unknown }[] } };
    };
    expect(data.failing.edges.map((e) => e.node.key)).toEqual(['gql-run']);
    expect(data.active.edges).toEqual([]);
    expect(data.session.status).toBe('FAILING');
    expect(data.session.refusedCount).toBe(2);
    expect(data.session.requests.edges.map((e) => e.node)).toEqual([
      { success: false, statusCode: 400, stepInput: 'user: x', stepOutput: null },
      { success: false, statusCode: 400, stepInput: 'user: x', stepOutput: null },
    ]);
  });
});
