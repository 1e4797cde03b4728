/**
 * Issue 29, item 6: the overview filtered by gate, model, key and end user, its failures split by
 * class, its breakdowns by gate, model, key and end user, and the gates list's figures.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { createGate, graphql, signUpUser, type TestUser } from './support/factories.ts';
import { at, DAY_MS, type ErrorBody, HOUR_MS, writeEntries } from './support/logs.ts';

const app = useTestApp();

type Share = {
  id: string | null;
  name: string | null;
  requests: number;
  errors: number;
  costUsd: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
};
type Breakdown = {
  top: Share[];
  other: { count: number; requests: number; errors: number; costUsd: number };
};
type Overview = {
  totalRequests: number;
  failedRequests: number;
  failuresByClass: Record<string, number>;
  totalCostUsd: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  activeGates: number;
  recentRequests: { id: string }[];
  byGate: Breakdown;
  byModel: Breakdown;
  spendingByKey: Breakdown;
  spendingByEndUser: Breakdown;
};

const iso = (ms: number) => at(ms).toISOString();
const WINDOW = { since: iso(0), until: iso(DAY_MS) };
const MIN = 60_000;

async function overview(user: TestUser, query: Record<string, string> = {}) {
  const res = await app.request(`/v1/logs/overview?${new URLSearchParams({ ...WINDOW, ...query })}`, {
    headers: user.auth,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Overview;
}

/**
 * A day of traffic: gate A answers with mock/smart for key K1 and end user ann (100, 200, 300 ms,
 * one refused by a spending limit), gate B with mock/fast for key K2 and bob (a provider error, a
 * rate limit, a client error, one answer of 1000 ms).
 */
async function day() {
  const user = await signUpUser(app);
  const a = await createGate(app, user);
  const b = await createGate(app, user);
  const k1 = { id: randomUUID(), name: 'backend' };
  const k2 = { id: randomUUID(), name: 'batch' };
  const onA = { gate: a, model: 'mock/smart', apiKey: k1, endUser: 'ann' };
  const onB = { gate: b, model: 'mock/fast', apiKey: k2, endUser: 'bob' };
  await writeEntries(app, user, [
    { ...onA, createdAt: at(10 * MIN), costUsd: 0.1, latencyMs: 100 },
    { ...onA, createdAt: at(20 * MIN), costUsd: 0.2, latencyMs: 200 },
    { ...onA, createdAt: at(3 * HOUR_MS), costUsd: 0.3, latencyMs: 300 },
    {
      ...onA,
      createdAt: at(4 * HOUR_MS),
      costUsd: 0,
      latencyMs: 5,
      success: false,
      statusCode: 402,
      errorCode: 'spending_limit_exceeded',
    },
    { ...onB, createdAt: at(30 * MIN), costUsd: 0, latencyMs: 50, success: false, statusCode: 502 },
    {
      ...onB,
      createdAt: at(40 * MIN),
      costUsd: 0,
      latencyMs: 1,
      success: false,
      statusCode: 429,
      errorCode: 'rate_limited',
    },
    {
      ...onB,
      createdAt: at(50 * MIN),
      costUsd: 0,
      latencyMs: 2,
      success: false,
      statusCode: 400,
      errorCode: 'invalid_request',
    },
    { ...onB, createdAt: at(5 * HOUR_MS), costUsd: 0.05, latencyMs: 1000 },
  ]);
  return { user, a, b, k1, k2 };
}

describe('the overview, filtered and broken down', () => {
  it('splits failures by class, and breaks cost, requests, errors and p50/p95 down four ways', async () => {
    const { user, a, b, k1, k2 } = await day();
    const o = await overview(user);
    expect(o).toMatchObject({ totalRequests: 8, failedRequests: 4, activeGates: 2 });
    expect(o.failuresByClass).toEqual({
      provider_error: 1,
      limit_refusal: 1,
      rate_limit: 1,
      client_error: 1,
    });
    expect(o.totalCostUsd).toBeCloseTo(0.65, 8);
    expect(o.p50LatencyMs).toBe(75); // between 50 and 100 of 1, 2, 5, 50, 100, 200, 300, 1000

    expect(o.byGate.top).toEqual([
      { id: a.id, name: a.name, requests: 4, errors: 1, costUsd: 0.6, p50LatencyMs: 150, p95LatencyMs: 285 },
      { id: b.id, name: b.name, requests: 4, errors: 3, costUsd: 0.05, p50LatencyMs: 26, p95LatencyMs: 857 },
    ]);
    // The model that answered, else the one named (a failure has none answering).
    expect(o.byModel.top.map((s) => [s.id, s.requests, s.errors])).toEqual([
      ['mock/smart', 4, 1],
      ['mock/fast', 4, 3],
    ]);
    expect(o.spendingByKey.top.map((s) => [s.id, s.name, s.errors])).toEqual([
      [k1.id, 'backend', 1],
      [k2.id, 'batch', 3],
    ]);
    expect(o.spendingByEndUser.top.map((s) => [s.id, s.requests, s.p95LatencyMs])).toEqual([
      ['ann', 4, 285],
      ['bob', 4, 857],
    ]);
  });

  it('filters totals, classes, breakdowns, recent requests and the series by model, key and end user', async () => {
    const { user, a, b, k2 } = await day();
    const smart = await overview(user, { model: 'mock/smart' });
    expect(smart).toMatchObject({ totalRequests: 4, failedRequests: 1, activeGates: 1 });
    expect(smart.failuresByClass).toEqual({
      provider_error: 0,
      limit_refusal: 1,
      rate_limit: 0,
      client_error: 0,
    });
    expect(smart.totalCostUsd).toBeCloseTo(0.6, 8);
    expect(smart.byGate.top.map((s) => s.id)).toEqual([a.id]);
    expect(smart.recentRequests).toHaveLength(4);

    const byKey = await overview(user, { apiKeyId: k2.id });
    expect(byKey).toMatchObject({ totalRequests: 4, failedRequests: 3, p50LatencyMs: 26 });
    expect(byKey.byGate.top.map((s) => s.id)).toEqual([b.id]);
    expect(await overview(user, { endUser: 'ann', gateId: b.id })).toMatchObject({
      totalRequests: 0,
      failedRequests: 0,
      recentRequests: [],
    });
    expect((await overview(user, { endUser: 'bob' })).failuresByClass).toEqual({
      provider_error: 1,
      limit_refusal: 0,
      rate_limit: 1,
      client_error: 1,
    });

    const res = await app.request(
      `/v1/logs/series?${new URLSearchParams({ ...WINDOW, bucket: 'hour', model: 'mock/fast' })}`,
      { headers: user.auth },
    );
    const series = (await res.json()) as { points: { start: string; requests: number; errors: number }[] };
    expect(series.points.map((p) => [p.start, p.requests, p.errors])).toEqual([
      [iso(0), 3, 3],
      [iso(5 * HOUR_MS), 1, 0],
    ]);
  });

  it('refuses a bad filter with a 400 naming it', async () => {
    const user = await signUpUser(app);
    for (const [param, value] of [
      ['apiKeyId', 'not-a-key'],
      ['model', ''],
      ['endUser', 'x'.repeat(300)],
    ] as const) {
      const res = await app.request(`/v1/logs/overview?${new URLSearchParams({ [param]: value })}`, {
        headers: user.auth,
      });
      expect(res.status, param).toBe(400);
      const body = (await res.json()) as ErrorBody;
      expect(body.error.details?.issues?.map((i) => i.path)).toEqual([param]);
    }
  });

  it('answers the same in GraphQL, and the gates list’s figures in one query', async () => {
    const { user, a, b, k1 } = await day();
    const stranger = await signUpUser(app);
    const res = await graphql(
      app,
      user,
      `query($since: DateTime, $until: DateTime, $key: ID, $ids: [ID!]) {
        overview(since: $since, until: $until, apiKeyId: $key) {
          totalRequests failedRequests p95LatencyMs
          failuresByClass { providerError limitRefusal rateLimit clientError }
          byGate { top { id requests errors costUsd p50LatencyMs p95LatencyMs } other { count requests errors } }
          byModel { top { id requests } }
        }
        logSeries(since: $since, until: $until, model: "mock/smart", bucket: HOUR) { points { requests } }
        gateStats(gateIds: $ids, since: $since, until: $until) {
          gateId requests errors costUsd p50LatencyMs p95LatencyMs
        }
      }`,
      { ...WINDOW, key: k1.id, ids: [a.id, b.id] },
    );
    expect(res.errors).toBeUndefined();
    const data = res.data as {
      overview: Record<string, unknown>;
      logSeries: { points: { requests: number }[] };
      gateStats: unknown[];
    };
    expect(data.overview).toEqual({
      totalRequests: 4,
      failedRequests: 1,
      p95LatencyMs: 285,
      failuresByClass: { providerError: 0, limitRefusal: 1, rateLimit: 0, clientError: 0 },
      byGate: {
        top: [{ id: a.id, requests: 4, errors: 1, costUsd: 0.6, p50LatencyMs: 150, p95LatencyMs: 285 }],
        other: { count: 0, requests: 0, errors: 0 },
      },
      byModel: { top: [{ id: 'mock/smart', requests: 4 }] },
    });
    expect(data.logSeries.points.map((p) => p.requests)).toEqual([2, 1, 1]);
    expect(data.gateStats).toEqual(
      [
        { gateId: a.id, requests: 4, errors: 1, costUsd: 0.6, p50LatencyMs: 150, p95LatencyMs: 285 },
        { gateId: b.id, requests: 4, errors: 3, costUsd: 0.05, p50LatencyMs: 26, p95LatencyMs: 857 },
      ].sort((x, y) => x.gateId.localeCompare(y.gateId)),
    );

    // Another user's gates have no figures for them.
    const theirs = await graphql(
      app,
      stranger,
      `query($ids: [ID!]) { gateStats(gateIds: $ids) { gateId } }`,
      {
        ids: [a.id],
      },
    );
    expect(theirs.data).toEqual({ gateStats: [] });
  });
});
