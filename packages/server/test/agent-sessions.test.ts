/**
 * The session API of agent gates (issue 13) against session rows and log entries written directly:
 * the data plane that creates them is not under test here.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sessionStatus } from '../src/domain/agentSessions.ts';
import { useTestApp } from './support/app.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';

const app = useTestApp();

type SessionBody = {
  id: string;
  key: string;
  gateId: string;
  status: string;
  requestCount: number;
  spendingCurrent: number;
  sessionSpendingLimit: number | null;
  promptTokens: number;
  completionTokens: number;
  topic: string | null;
  toolsCalled: string[];
  subGatesUsed: string[];
  firstRequestAt: string;
  lastRequestAt: string;
  endedAt: string | null;
};
type SessionPage = {
  sessions: SessionBody[];
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
};
type ErrorBody = { error: { code: string; details?: { issues?: { path: string }[] } } };

const MINUTE = 60_000;
const get = (user: TestUser, path: string) => app.request(path, { headers: user.auth });
const post = (user: TestUser, path: string) => app.request(path, { method: 'POST', headers: user.auth });

async function insertSession(
  user: TestUser,
  gateId: string,
  fields: { key?: string; status?: string; lastRequestAt?: Date; [k: string]: unknown } = {},
) {
  const { key, lastRequestAt, ...rest } = fields;
  const last = lastRequestAt ?? new Date();
  return app.db.prisma.agentSession.create({
    data: {
      gateId,
      userId: user.id,
      sessionKey: key ?? `run-${randomUUID()}`,
      firstRequestAt: new Date(last.getTime() - MINUTE),
      lastRequestAt: last,
      ...rest,
    },
  });
}

async function insertEntry(
  user: TestUser,
  gateId: string,
  sessionId: string,
  key: string,
  at: Date,
  extra = {},
) {
  return app.db.prisma.logEntry.create({
    data: {
      userId: user.id,
      gateId,
      gateSessionId: sessionId,
      sessionId: key,
      endpoint: '/v3/chat',
      success: true,
      statusCode: 200,
      createdAt: at,
      ...extra,
    },
  });
}

async function expect400(res: Response, path: string) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as ErrorBody;
  expect(body.error.code).toBe('invalid_request');
  expect(body.error.details?.issues?.map((i) => i.path)).toEqual([path]);
}

describe('sessionStatus', () => {
  it('computes idle from the last request and the gate’s idle minutes; other statuses stay', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * MINUTE);
    expect(sessionStatus({ status: 'active', lastRequestAt: at(29) }, { sessionIdleMinutes: 30 }, now)).toBe(
      'active',
    );
    expect(sessionStatus({ status: 'active', lastRequestAt: at(30) }, { sessionIdleMinutes: 30 }, now)).toBe(
      'idle',
    );
    expect(
      sessionStatus({ status: 'runaway', lastRequestAt: at(300) }, { sessionIdleMinutes: 30 }, now),
    ).toBe('runaway');
    expect(
      sessionStatus({ status: 'completed', lastRequestAt: at(300) }, { sessionIdleMinutes: 1 }, now),
    ).toBe('completed');
  });
});

describe('listing a gate’s sessions', () => {
  it('pages newest activity first with a keyset cursor, and filters by status, idle computed', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      gateType: 'agent',
      sessionIdleMinutes: 10,
      sessionSpendingLimit: 2,
    });
    const now = Date.now();
    const same = new Date(now - 2 * MINUTE);
    const rows = [
      await insertSession(user, gate.id, { lastRequestAt: new Date(now - 1 * MINUTE) }),
      await insertSession(user, gate.id, { lastRequestAt: same }),
      await insertSession(user, gate.id, { lastRequestAt: same }),
      await insertSession(user, gate.id, { lastRequestAt: new Date(now - 30 * MINUTE) }), // idle
      await insertSession(user, gate.id, {
        lastRequestAt: new Date(now - 60 * MINUTE),
        status: 'completed',
        endedAt: new Date(now - 50 * MINUTE),
      }),
      await insertSession(user, gate.id, { lastRequestAt: new Date(now - 90 * MINUTE), status: 'runaway' }),
      await insertSession(user, gate.id, {
        lastRequestAt: new Date(now - 120 * MINUTE),
        status: 'budget_exceeded',
      }),
    ];
    // Ties on last_request_at go by id, descending.
    const ids = rows.map((r) => r.id);
    const expected = [ids[0], ...ids.slice(1, 3).sort().reverse(), ...ids.slice(3)];
    // Another gate's session never shows.
    const otherGate = await createGate(app, user, { gateType: 'agent' });
    await insertSession(user, otherGate.id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await get(user, `/v1/gates/${gate.id}/sessions${query}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as SessionPage;
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.pagination.nextCursor;
      expect(page.pagination.hasMore).toBe(cursor !== null);
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(expected);

    const byStatus = async (status: string) => {
      const res = await get(user, `/v1/gates/${gate.id}/sessions?status=${status}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as SessionPage).sessions;
    };
    expect((await byStatus('active')).map((s) => s.id)).toEqual(expected.slice(0, 3));
    const idle = await byStatus('idle');
    expect(idle.map((s) => [s.id, s.status])).toEqual([[ids[3], 'idle']]);
    expect((await byStatus('completed')).map((s) => s.id)).toEqual([ids[4]]);
    expect((await byStatus('runaway')).map((s) => s.id)).toEqual([ids[5]]);
    expect((await byStatus('budget_exceeded')).map((s) => s.id)).toEqual([ids[6]]);
    const all = (await (await get(user, `/v1/gates/${gate.id}/sessions`)).json()) as SessionPage;
    expect(all.sessions.map((s) => s.status)).toEqual([
      'active',
      'active',
      'active',
      'idle',
      'completed',
      'runaway',
      'budget_exceeded',
    ]);
    expect(all.sessions[0]?.sessionSpendingLimit).toBe(2);

    expect((await get(user, `/v1/gates/${gate.id}/sessions?status=sleeping`)).status).toBe(400);
    expect((await get(user, `/v1/gates/${gate.id}/sessions?cursor=bogus`)).status).toBe(400);
    expect((await get(user, `/v1/gates/${gate.id}/sessions?limit=0`)).status).toBe(400);
  });
});

describe('one session', () => {
  it('reads a session by its key, every field shown', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { gateType: 'agent', sessionSpendingLimit: 1.5 });
    const key = 'my run / 42?';
    const row = await insertSession(user, gate.id, {
      key,
      requestCount: 3,
      spendingCurrent: 0.25,
      promptTokens: 100,
      completionTokens: 20,
      topic: 'Book a flight',
      toolsCalled: ['search', 'book'],
      subGatesUsed: ['planner'],
    });
    const res = await get(user, `/v1/sessions/${encodeURIComponent(key)}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: row.id,
      key,
      gateId: gate.id,
      status: 'active',
      requestCount: 3,
      refusedCount: 0,
      spendingCurrent: 0.25,
      sessionSpendingLimit: 1.5,
      promptTokens: 100,
      completionTokens: 20,
      topic: 'Book a flight',
      toolsCalled: ['search', 'book'],
      subGatesUsed: ['planner'],
      firstRequestAt: row.firstRequestAt.toISOString(),
      lastRequestAt: row.lastRequestAt.toISOString(),
      endedAt: null,
    });
    expect((await get(user, `/v1/sessions/${encodeURIComponent(key)}?gateId=${gate.id}`)).status).toBe(200);
  });

  it('needs gateId when the key is used on several gates, and says so', async () => {
    const user = await signUpUser(app);
    const a = await createGate(app, user, { gateType: 'agent' });
    const b = await createGate(app, user, { gateType: 'agent' });
    await insertSession(user, a.id, { key: 'shared' });
    const onB = await insertSession(user, b.id, { key: 'shared' });
    await expect400(await get(user, '/v1/sessions/shared'), 'gateId');
    await expect400(await get(user, '/v1/sessions/shared/requests'), 'gateId');
    await expect400(await post(user, '/v1/sessions/shared/end'), 'gateId');
    const res = await get(user, `/v1/sessions/shared?gateId=${b.id}`);
    expect(((await res.json()) as SessionBody).id).toBe(onB.id);
    await expect400(await get(user, '/v1/sessions/shared?gateId=nope'), 'gateId');
  });

  it('lists its requests oldest first, with tool calls, inferred action, tokens, cost and latency', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { gateType: 'agent' });
    const session = await insertSession(user, gate.id, { key: 'req-run' });
    const t0 = Date.now() - 10 * MINUTE;
    const second = await insertEntry(user, gate.id, session.id, 'req-run', new Date(t0 + MINUTE), {
      inferredAction: 'search',
      toolCalls: [{ id: 'c1', name: 'search', arguments: '{"q":"x"}' }],
      toolResults: [{ toolCallId: 'c1', content: 'found' }],
      hiddenTools: ['delete_all'],
      promptTokens: 12,
      completionTokens: 3,
      costUsd: 0.0015,
      latencyMs: 250,
    });
    const first = await insertEntry(user, gate.id, session.id, 'req-run', new Date(t0));
    const third = await insertEntry(user, gate.id, session.id, 'req-run', new Date(t0 + 2 * MINUTE));
    // Another session's entry, and an entry of no session, stay out.
    const other = await insertSession(user, gate.id, { key: 'other-run' });
    await insertEntry(user, gate.id, other.id, 'other-run', new Date(t0));

    const res = await get(user, '/v1/sessions/req-run/requests');
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      session: SessionBody;
      requests: Record<string, unknown>[];
      pagination: { hasMore: boolean; nextCursor: string | null };
    };
    expect(body.session.id).toBe(session.id);
    expect(body.requests.map((r) => r.id)).toEqual([first.id, second.id, third.id]);
    expect(body.requests[1]).toMatchObject({
      session_id: 'req-run',
      inferred_action: 'search',
      tool_calls: [{ id: 'c1', name: 'search', arguments: '{"q":"x"}' }],
      tool_results: [{ toolCallId: 'c1', content: 'found' }],
      hidden_tools: ['delete_all'],
      prompt_tokens: 12,
      completion_tokens: 3,
      total_tokens: 15,
      cost_usd: 0.0015,
      latency_ms: 250,
    });
    const page1 = (await (await get(user, '/v1/sessions/req-run/requests?limit=2')).json()) as typeof body;
    expect(page1.requests.map((r) => r.id)).toEqual([first.id, second.id]);
    expect(page1.pagination.hasMore).toBe(true);
    const page2 = (await (
      await get(user, `/v1/sessions/req-run/requests?limit=2&cursor=${page1.pagination.nextCursor}`)
    ).json()) as typeof body;
    expect(page2.requests.map((r) => r.id)).toEqual([third.id]);
    expect(page2.pagination.hasMore).toBe(false);

    // GET /v1/logs filters by the client's session id.
    const logs = (await (await get(user, '/v1/logs?sessionId=req-run')).json()) as { logs: { id: string }[] };
    expect(logs.logs.map((l) => l.id)).toEqual([third.id, second.id, first.id]);
    expect((await get(user, `/v1/logs?sessionId=${'x'.repeat(129)}`)).status).toBe(400);
  });

  it('ends a session once: completed with its end time; a completed or over-budget one is a 400', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { gateType: 'agent', sessionIdleMinutes: 1 });
    await insertSession(user, gate.id, { key: 'to-end', lastRequestAt: new Date(Date.now() - 5 * MINUTE) });
    await insertSession(user, gate.id, { key: 'runaway', status: 'runaway' });
    await insertSession(user, gate.id, { key: 'broke', status: 'budget_exceeded' });
    const before = Date.now();
    const res = await post(user, '/v1/sessions/to-end/end');
    expect(res.status).toBe(200);
    const ended = (await res.json()) as SessionBody;
    expect(ended.status).toBe('completed');
    expect(Date.parse(ended.endedAt ?? '')).toBeGreaterThanOrEqual(before - 1000);
    expect(((await (await get(user, '/v1/sessions/to-end')).json()) as SessionBody).status).toBe('completed');
    await expect400(await post(user, '/v1/sessions/to-end/end'), 'sessionId');
    await expect400(await post(user, '/v1/sessions/broke/end'), 'sessionId');
    expect((await post(user, '/v1/sessions/runaway/end')).status).toBe(200);
  });

  it('keeps another user out: their session, gate and requests are 404s', async () => {
    const owner = await signUpUser(app);
    const stranger = await signUpUser(app);
    const gate = await createGate(app, owner, { gateType: 'agent' });
    const session = await insertSession(owner, gate.id, { key: 'private-run' });
    await insertEntry(owner, gate.id, session.id, 'private-run', new Date());
    for (const path of [
      '/v1/sessions/private-run',
      `/v1/sessions/private-run?gateId=${gate.id}`,
      '/v1/sessions/private-run/requests',
      `/v1/gates/${gate.id}/sessions`,
      '/v1/sessions/no-such-run',
    ]) {
      expect((await get(stranger, path)).status, path).toBe(404);
    }
    expect((await post(stranger, '/v1/sessions/private-run/end')).status).toBe(404);
    expect((await post(stranger, `/v1/sessions/private-run/end?gateId=${gate.id}`)).status).toBe(404);
    const logs = (await (await get(stranger, '/v1/logs?sessionId=private-run')).json()) as {
      logs: unknown[];
    };
    expect(logs.logs).toEqual([]);
    expect(((await (await get(owner, '/v1/sessions/private-run')).json()) as SessionBody).status).toBe(
      'active',
    );
  });
});

describe('sessions in GraphQL', () => {
  it('lists, reads, pages requests and ends sessions; another user sees nothing', async () => {
    const user = await signUpUser(app);
    const stranger = await signUpUser(app);
    const gate = await createGate(app, user, { gateType: 'agent', sessionIdleMinutes: 5 });
    const idle = await insertSession(user, gate.id, {
      key: 'gq-idle',
      lastRequestAt: new Date(Date.now() - 10 * MINUTE),
    });
    const active = await insertSession(user, gate.id, { key: 'gq-active', topic: 'hello' });
    const entry = await insertEntry(user, gate.id, active.id, 'gq-active', new Date(), {
      inferredAction: 'plan',
    });

    const list = `query($gateId: ID!, $status: SessionStatus, $first: Int, $after: String) {
      sessions(gateId: $gateId, status: $status, first: $first, after: $after) {
        edges { node { id key status } } pageInfo { hasNextPage endCursor } } }`;
    type List = {
      sessions: {
        edges: { node: { id: string; key: string; status: string } }[];
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    };
    const page1 = await graphql<List>(app, user, list, { gateId: gate.id, first: 1 });
    expect(page1.errors).toBeUndefined();
    expect(page1.data?.sessions.edges.map((e) => e.node)).toEqual([
      { id: active.id, key: 'gq-active', status: 'ACTIVE' },
    ]);
    expect(page1.data?.sessions.pageInfo.hasNextPage).toBe(true);
    const page2 = await graphql<List>(app, user, list, {
      gateId: gate.id,
      first: 1,
      after: page1.data?.sessions.pageInfo.endCursor,
    });
    expect(page2.data?.sessions.edges.map((e) => e.node)).toEqual([
      { id: idle.id, key: 'gq-idle', status: 'IDLE' },
    ]);
    const idleOnly = await graphql<List>(app, user, list, { gateId: gate.id, status: 'IDLE' });
    expect(idleOnly.data?.sessions.edges.map((e) => e.node.id)).toEqual([idle.id]);
    const strangers = await graphql<List>(app, stranger, list, { gateId: gate.id });
    expect(strangers.errors?.[0]?.message).toMatch(/not found/i);

    const one = `query($key: String!, $gateId: ID) { session(key: $key, gateId: $gateId) {
      id topic status requests(first: 10) { edges { node { id inferredAction } } } } }`;
    type One = {
      session: {
        id: string;
        topic: string;
        requests: { edges: { node: { id: string; inferredAction: string } }[] };
      } | null;
    };
    const read = await graphql<One>(app, user, one, { key: 'gq-active' });
    expect(read.errors).toBeUndefined();
    expect(read.data?.session).toMatchObject({ id: active.id, topic: 'hello', status: 'ACTIVE' });
    expect(read.data?.session?.requests.edges.map((e) => e.node)).toEqual([
      { id: entry.id, inferredAction: 'plan' },
    ]);
    expect((await graphql<One>(app, stranger, one, { key: 'gq-active' })).data?.session).toBeNull();

    const end = `mutation($key: String!, $gateId: ID) { endSession(key: $key, gateId: $gateId) {
      __typename ... on MutationEndSessionSuccess { data { status endedAt } } ... on ValidationError { issues { path } } } }`;
    type End = {
      endSession: {
        __typename: string;
        data?: { status: string; endedAt: string };
        issues?: { path: string }[];
      };
    };
    expect((await graphql<End>(app, stranger, end, { key: 'gq-active' })).data?.endSession.__typename).toBe(
      'NotFoundError',
    );
    const ended = await graphql<End>(app, user, end, { key: 'gq-active', gateId: gate.id });
    expect(ended.data?.endSession.data?.status).toBe('COMPLETED');
    const again = await graphql<End>(app, user, end, { key: 'gq-active' });
    expect(again.data?.endSession.issues?.map((i) => i.path)).toEqual(['sessionId']);

    const logs = await graphql<{ logs: { edges: { node: { id: string } }[] } }>(
      app,
      user,
      `query($s: String) { logs(sessionId: $s) { edges { node { id } } } }`,
      { s: 'gq-active' },
    );
    expect(logs.data?.logs.edges.map((e) => e.node.id)).toEqual([entry.id]);
  });
});
