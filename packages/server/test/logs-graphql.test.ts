import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, say } from './support/chat.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';
import { allPages, at, DAY_MS, HOUR_MS, insertEntries, writeEntries } from './support/logs.ts';

const app = useTestApp();

const LOGS = `query($first: Int, $after: String, $last: Int, $before: String, $gateId: ID, $status: LogStatus,
                    $since: DateTime, $until: DateTime) {
  logs(first: $first, after: $after, last: $last, before: $before, gateId: $gateId, status: $status,
       since: $since, until: $until) {
    edges { cursor node { id gateId gateName success statusCode costUsd latencyMs totalTokens createdAt } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

type Node = {
  id: string;
  gateId: string | null;
  gateName: string | null;
  success: boolean;
  statusCode: number;
  costUsd: number;
  latencyMs: number;
  totalTokens: number;
  createdAt: string;
};
type Connection = {
  edges: { cursor: string; node: Node }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
};

async function logs(user: TestUser, variables: Record<string, unknown> = {}): Promise<Connection> {
  const res = await graphql<{ logs: Connection }>(app, user, LOGS, variables);
  expect(res.errors).toBeUndefined();
  return res.data?.logs as Connection;
}

/** Every node, following endCursor with `first` per page. */
async function allNodes(user: TestUser, variables: Record<string, unknown>) {
  const nodes: Node[] = [];
  let after: string | null = null;
  let pages = 0;
  for (;;) {
    const page: Connection = await logs(user, { ...variables, ...(after && { after }) });
    pages += 1;
    nodes.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  return { nodes, pages };
}

async function badInput(user: TestUser, query: string, variables: Record<string, unknown>, param: string) {
  const res = await graphql(app, user, query, variables);
  expect(res.data ?? null, JSON.stringify(res)).toBeNull();
  expect(res.errors?.[0]?.extensions?.code, JSON.stringify(res.errors)).toBe('BAD_USER_INPUT');
  expect(res.errors?.[0]?.message).toContain(param);
}

describe('logs connection', () => {
  it('pages with first/after through tied timestamps exactly as REST does', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, 40, at(HOUR_MS));
    await insertEntries(app, user, gate, 10, at(0), { spreadMs: 1000 });

    const { nodes, pages } = await allNodes(user, { first: 7 });
    expect(pages).toBe(Math.ceil(50 / 7));
    const rest = (await allPages(app, user)).rows;
    expect(nodes.map((n) => n.id)).toEqual(rest.map((r) => r.id));
    expect(nodes[0]).toEqual({
      id: rest[0]?.id,
      gateId: gate.id,
      gateName: gate.name,
      success: true,
      statusCode: 200,
      costUsd: 0.001,
      latencyMs: rest[0]?.latency_ms,
      totalTokens: 15,
      createdAt: at(HOUR_MS).toISOString(),
    });

    const first = await logs(user, { first: 7 });
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(first.pageInfo.startCursor).toBe(first.edges[0]?.cursor);
    expect(first.pageInfo.endCursor).toBe(first.edges[6]?.cursor);
    // An edge's cursor continues right after that edge, and REST takes the same cursor.
    const fromThird = await logs(user, { first: 3, after: first.edges[2]?.cursor });
    expect(fromThird.edges.map((e) => e.node.id)).toEqual(nodes.slice(3, 6).map((n) => n.id));
    expect(fromThird.pageInfo.hasPreviousPage).toBe(true);
    const restPage = await app.request(`/v1/logs?limit=3&cursor=${first.edges[2]?.cursor}`, {
      headers: user.auth,
    });
    const restIds = ((await restPage.json()) as { logs: { id: string }[] }).logs.map((l) => l.id);
    expect(restIds).toEqual(fromThird.edges.map((e) => e.node.id));
  });

  it('answers 50 nodes without first, and up to 200', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, 210, at(0), { spreadMs: 10 });
    expect((await logs(user)).edges).toHaveLength(50);
    const max = await logs(user, { first: 200 });
    expect(max.edges).toHaveLength(200);
    expect(max.pageInfo.hasNextPage).toBe(true);
  });

  it('filters by gate, status and window', async () => {
    const user = await signUpUser(app);
    const a = await createGate(app, user);
    const b = await createGate(app, user);
    await insertEntries(app, user, a, 12, at(2 * HOUR_MS), { spreadMs: 10 * 60_000, failedEvery: 3 });
    await insertEntries(app, user, b, 5, at(2 * HOUR_MS), { spreadMs: 10 * 60_000 });

    const onlyA = await allNodes(user, { first: 5, gateId: a.id });
    expect(onlyA.nodes).toHaveLength(12);
    expect(onlyA.nodes.every((n) => n.gateId === a.id)).toBe(true);
    const failed = await allNodes(user, { first: 2, status: 'FAILED' });
    expect(failed.nodes).toHaveLength(4);
    expect(failed.nodes.every((n) => !n.success)).toBe(true);
    // a: 10…120 minutes before 02:00; b: 10…50. The hour before 01:00 holds a's 70…120 minutes.
    const window = await allNodes(user, {
      first: 4,
      since: at(0).toISOString(),
      until: at(HOUR_MS).toISOString(),
    });
    expect(window.nodes).toHaveLength(6);
    expect(window.nodes.every((n) => n.gateId === a.id && n.createdAt < at(HOUR_MS).toISOString())).toBe(
      true,
    );
    const combined = await logs(user, { gateId: a.id, status: 'SUCCESS', until: at(HOUR_MS).toISOString() });
    expect(combined.edges.map((e) => e.node.success)).toEqual([true, true, true, true]);
  });

  it('never lists another user’s entries', async () => {
    const alice = await signUpUser(app);
    const bob = await signUpUser(app);
    const bobsGate = await createGate(app, bob);
    await insertEntries(app, bob, bobsGate, 3, at(0));
    expect((await logs(alice)).edges).toEqual([]);
    expect((await logs(alice, { gateId: bobsGate.id })).edges).toEqual([]);
    expect((await logs(bob)).edges).toHaveLength(3);
  });

  it('refuses bad arguments as BAD_USER_INPUT naming them', async () => {
    const user = await signUpUser(app);
    const cases: [Record<string, unknown>, string][] = [
      [{ first: 0 }, 'first:'],
      [{ first: 201 }, 'first:'],
      [{ after: 'not-a-cursor' }, 'after:'],
      [{ gateId: 'gate-1' }, 'gateId'],
      [{ status: 'ok' }, 'status'],
      [{ since: at(HOUR_MS).toISOString(), until: at(0).toISOString() }, 'until'],
      [{ last: 5 }, 'last'],
      [{ before: 'x' }, 'before'],
    ];
    for (const [variables, param] of cases) await badInput(user, LOGS, variables, param);
    const notADate = await graphql(app, user, LOGS, { since: 'yesterday' });
    expect(notADate.errors?.[0]?.message).toMatch(/DateTime/);
  });

  it('is refused without credentials', async () => {
    const res = await graphql(app, null, LOGS);
    expect(res.data ?? null).toBeNull();
    expect(res.errors?.length).toBeGreaterThan(0);
  });
});

const LOG = `query($id: ID!) {
  log(id: $id) { id success modelUsed attempts metadata providerRequest providerResponse }
}`;

describe('log', () => {
  it('reads one entry with its attempts and payloads, which the list’s nodes do not carry', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      routingStrategy: 'fallback',
      model: 'mock/echo',
      fallbackModels: ['mock/fast'],
    });
    const answer = await answerOf(
      await chat(
        app,
        user,
        gate.id,
        { messages: say('[mock:fail=429@mock/echo] hi') },
        { metadata: { k: 'v' } },
      ),
    );
    await app.runtime.logs.drain();
    const res = await graphql<{ log: Record<string, unknown> }>(app, user, LOG, { id: answer.id });
    expect(res.errors).toBeUndefined();
    const log = res.data?.log ?? {};
    expect(log).toMatchObject({
      id: answer.id,
      success: true,
      modelUsed: 'mock/fast',
      metadata: { k: 'v' },
      attempts: [
        expect.objectContaining({ model: 'mock/echo', ok: false, status: 429 }),
        expect.objectContaining({ model: 'mock/fast', ok: true }),
      ],
      providerRequest: expect.objectContaining({ model: 'fast' }),
      providerResponse: expect.objectContaining({ model: 'mock/fast' }),
    });
    const listed = await graphql<{ logs: { edges: { node: Record<string, unknown> }[] } }>(
      app,
      user,
      `{ logs(first: 1) { edges { node { id attempts metadata providerResponse } } } }`,
    );
    // Listed entries carry no payloads (security-graphql.test.ts): log(id) has them.
    expect(listed.data ?? null).toBeNull();
    expect(listed.errors?.[0]?.message).toMatch(/given by log\(id\) only/);
  });

  it('is null for another user’s entry, an unknown id and one that is not a UUID', async () => {
    const alice = await signUpUser(app);
    const bob = await signUpUser(app);
    const gate = await createGate(app, alice);
    const answer = await answerOf(await chat(app, alice, gate.id));
    await app.runtime.logs.drain();
    for (const id of [answer.id, randomUUID(), 'nope']) {
      const res = await graphql(app, bob, LOG, { id });
      expect(res.errors, id).toBeUndefined();
      expect(res.data, id).toEqual({ log: null });
    }
    expect((await graphql<{ log: { id: string } }>(app, alice, LOG, { id: answer.id })).data?.log.id).toBe(
      answer.id,
    );
  });
});

const OVERVIEW = `query($gateId: ID, $since: DateTime, $until: DateTime) {
  overview(gateId: $gateId, since: $since, until: $until) {
    totalRequests failedRequests totalCostUsd avgLatencyMs activeGates since until recentRequests { id }
  }
}`;

const SERIES = `query($gateId: ID, $since: DateTime, $until: DateTime, $bucket: LogSeriesBucket) {
  logSeries(gateId: $gateId, since: $since, until: $until, bucket: $bucket) {
    bucket since until points { start requests errors costUsd p50LatencyMs p95LatencyMs }
  }
}`;

describe('overview and logSeries', () => {
  async function twoGates() {
    const alice = await signUpUser(app);
    const bob = await signUpUser(app);
    const a = await createGate(app, alice);
    const b = await createGate(app, alice);
    const bobs = await createGate(app, bob);
    const ids = await writeEntries(app, alice, [
      { gate: a, createdAt: at(0), costUsd: 0.25, latencyMs: 100 },
      { gate: a, createdAt: at(HOUR_MS), costUsd: 0.5, latencyMs: 300, success: false },
      { gate: b, createdAt: at(DAY_MS), costUsd: 1, latencyMs: 200 },
    ]);
    await writeEntries(app, bob, [{ gate: bobs, createdAt: at(HOUR_MS), costUsd: 9, latencyMs: 5000 }]);
    return { alice, bob, a, b, bobs, ids };
  }

  it('overview totals the window, per gate when asked, and only the caller’s', async () => {
    const { alice, a, bobs, ids } = await twoGates();
    const window = { since: at(0).toISOString(), until: at(2 * DAY_MS).toISOString() };
    const res = await graphql<{ overview: Record<string, unknown> }>(app, alice, OVERVIEW, window);
    expect(res.errors).toBeUndefined();
    expect(res.data?.overview).toEqual({
      totalRequests: 3,
      failedRequests: 1,
      totalCostUsd: 1.75,
      avgLatencyMs: 200,
      activeGates: 2,
      ...window,
      recentRequests: [...ids].reverse().map((id) => ({ id })),
    });
    const onlyA = await graphql<{ overview: Record<string, unknown> }>(app, alice, OVERVIEW, {
      ...window,
      gateId: a.id,
    });
    expect(onlyA.data?.overview).toMatchObject({ totalRequests: 2, failedRequests: 1, totalCostUsd: 0.75 });
    const others = await graphql<{ overview: Record<string, unknown> }>(app, alice, OVERVIEW, {
      ...window,
      gateId: bobs.id,
    });
    expect(others.data?.overview).toMatchObject({ totalRequests: 0, totalCostUsd: 0, recentRequests: [] });
  });

  it('logSeries answers hourly and daily points of the caller’s entries', async () => {
    const { alice } = await twoGates();
    const window = { since: at(0).toISOString(), until: at(2 * DAY_MS).toISOString() };
    const hourly = await graphql<{ logSeries: { bucket: string; points: unknown[] } }>(app, alice, SERIES, {
      ...window,
      bucket: 'HOUR',
    });
    expect(hourly.errors).toBeUndefined();
    expect(hourly.data?.logSeries.bucket).toBe('HOUR');
    expect(hourly.data?.logSeries.points).toEqual([
      {
        start: at(0).toISOString(),
        requests: 1,
        errors: 0,
        costUsd: 0.25,
        p50LatencyMs: 100,
        p95LatencyMs: 100,
      },
      {
        start: at(HOUR_MS).toISOString(),
        requests: 1,
        errors: 1,
        costUsd: 0.5,
        p50LatencyMs: 300,
        p95LatencyMs: 300,
      },
      {
        start: at(DAY_MS).toISOString(),
        requests: 1,
        errors: 0,
        costUsd: 1,
        p50LatencyMs: 200,
        p95LatencyMs: 200,
      },
    ]);
    const daily = await graphql<{ logSeries: { points: { requests: number; p50LatencyMs: number }[] } }>(
      app,
      alice,
      SERIES,
      { ...window, bucket: 'DAY' },
    );
    expect(daily.data?.logSeries.points.map((p) => [p.requests, p.p50LatencyMs])).toEqual([
      [2, 200],
      [1, 200],
    ]);
  });

  it('refuses bad arguments as BAD_USER_INPUT naming them', async () => {
    const user = await signUpUser(app);
    const backwards = { since: at(HOUR_MS).toISOString(), until: at(0).toISOString() };
    await badInput(user, OVERVIEW, backwards, 'until');
    await badInput(user, OVERVIEW, { gateId: 'x' }, 'gateId');
    await badInput(user, SERIES, backwards, 'until');
    await badInput(user, SERIES, { bucket: 'week' }, 'bucket');
  });
});
