import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, say } from './support/chat.ts';
import { createGate, signUpUser, type TestUser } from './support/factories.ts';
import {
  allPages,
  at,
  DAY_MS,
  type ErrorBody,
  expectBadParam,
  HOUR_MS,
  type LogRow,
  writeEntries,
} from './support/logs.ts';

const app = useTestApp();

type Overview = {
  totalRequests: number;
  failedRequests: number;
  totalCostUsd: number;
  avgLatencyMs: number;
  activeGates: number;
  since: string;
  until: string;
  recentRequests: LogRow[];
};

type Series = {
  bucket: 'hour' | 'day';
  since: string;
  until: string;
  points: {
    start: string;
    requests: number;
    errors: number;
    costUsd: number;
    p50LatencyMs: number | null;
    p95LatencyMs: number | null;
  }[];
};

async function get<T>(user: TestUser, path: string, query: Record<string, string> = {}): Promise<T> {
  const res = await app.request(`${path}?${new URLSearchParams(query)}`, { headers: user.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}

const overview = (user: TestUser, query: Record<string, string> = {}) =>
  get<Overview>(user, '/v1/logs/overview', query);
const series = (user: TestUser, query: Record<string, string> = {}) =>
  get<Series>(user, '/v1/logs/series', query);
const iso = (ms: number) => at(ms).toISOString();

/**
 * Alice's day: gate A at 00:10 (100 ms), 00:50 (failed, 300 ms) and 01:30 (200 ms); gate B at
 * 05:00 (1000 ms) and the next day at 03:00 (400 ms). Bob, in the same hours, on his own gate.
 */
async function aliceDay() {
  const alice = await signUpUser(app);
  const bob = await signUpUser(app);
  const a = await createGate(app, alice);
  const b = await createGate(app, alice);
  const unused = await createGate(app, alice);
  const bobs = await createGate(app, bob);
  const min = 60_000;
  await writeEntries(app, alice, [
    { gate: a, createdAt: at(10 * min), costUsd: 0.01, latencyMs: 100 },
    { gate: a, createdAt: at(50 * min), costUsd: 0, latencyMs: 300, success: false },
    { gate: a, createdAt: at(90 * min), costUsd: 0.02, latencyMs: 200 },
    { gate: b, createdAt: at(5 * HOUR_MS), costUsd: 0.5, latencyMs: 1000 },
    { gate: b, createdAt: at(DAY_MS + 3 * HOUR_MS), costUsd: 0.25, latencyMs: 400 },
  ]);
  await writeEntries(app, bob, [
    { gate: bobs, createdAt: at(10 * min), costUsd: 7, latencyMs: 9000, success: false },
    { gate: bobs, createdAt: at(5 * HOUR_MS), costUsd: 7, latencyMs: 9000 },
    { gate: bobs, createdAt: at(DAY_MS + 3 * HOUR_MS), costUsd: 7, latencyMs: 9000 },
  ]);
  return { alice, bob, a, b, unused, bobs };
}

describe('GET /v1/logs/overview', () => {
  it('totals real traffic as the entries add up, with the newest ten as recent requests', async () => {
    const user = await signUpUser(app);
    const stranger = await signUpUser(app);
    const a = await createGate(app, user);
    const b = await createGate(app, user, { model: 'mock/smart' });
    await createGate(app, user);
    const strangersGate = await createGate(app, stranger);
    for (let i = 0; i < 8; i++) await answerOf(await chat(app, user, a.id, { messages: say(`a ${i}`) }));
    for (let i = 0; i < 5; i++)
      await answerOf(await chat(app, user, b.id, { messages: say(`b ${'x'.repeat(i * 40)}`) }));
    for (let i = 0; i < 3; i++) {
      expect((await chat(app, user, b.id, { messages: say('[mock:fail=503]') })).status).toBe(502);
    }
    await answerOf(await chat(app, stranger, strangersGate.id));
    await app.runtime.logs.drain();

    const { rows } = await allPages(app, user);
    expect(rows).toHaveLength(16);
    const o = await overview(user);
    expect(o).toMatchObject({
      totalRequests: 16,
      failedRequests: 3,
      activeGates: 2,
      avgLatencyMs: Math.round(rows.reduce((s, r) => s + r.latency_ms, 0) / rows.length),
    });
    expect(o.totalCostUsd).toBeCloseTo(
      rows.reduce((s, r) => s + r.cost_usd, 0),
      8,
    );
    expect(o.totalCostUsd).toBeGreaterThan(0);
    expect(o.recentRequests.map((r) => r.id)).toEqual(rows.slice(0, 10).map((r) => r.id));
    expect(new Date(o.until).getTime() - new Date(o.since).getTime()).toBe(30 * DAY_MS);

    expect(await overview(user, { gateId: b.id })).toMatchObject({
      totalRequests: 8,
      failedRequests: 3,
      activeGates: 1,
    });
  });

  it('counts a window of whole hours, per gate when asked', async () => {
    const { alice, a, b } = await aliceDay();
    const firstTwoHours = await overview(alice, { since: iso(0), until: iso(2 * HOUR_MS) });
    expect(firstTwoHours).toMatchObject({
      totalRequests: 3,
      failedRequests: 1,
      avgLatencyMs: 200,
      activeGates: 1,
      since: iso(0),
      until: iso(2 * HOUR_MS),
    });
    expect(firstTwoHours.totalCostUsd).toBeCloseTo(0.03, 8);
    expect(firstTwoHours.recentRequests.map((r) => r.created_at)).toEqual([
      iso(90 * 60_000),
      iso(50 * 60_000),
      iso(10 * 60_000),
    ]);

    const twoDays = await overview(alice, { since: iso(0), until: iso(2 * DAY_MS) });
    expect(twoDays).toMatchObject({ totalRequests: 5, failedRequests: 1, avgLatencyMs: 400, activeGates: 2 });
    expect(twoDays.totalCostUsd).toBeCloseTo(0.78, 8);

    const onlyB = await overview(alice, { since: iso(0), until: iso(2 * DAY_MS), gateId: b.id });
    expect(onlyB).toMatchObject({ totalRequests: 2, failedRequests: 0, avgLatencyMs: 700, activeGates: 1 });
    expect(onlyB.recentRequests.every((r) => r.gate_id === b.id)).toBe(true);
    expect(onlyB.recentRequests).toHaveLength(2);

    // The hour the window starts in counts whole; one that starts at `until` does not count.
    expect(await overview(alice, { since: iso(30 * 60_000), until: iso(HOUR_MS) })).toMatchObject({
      totalRequests: 2,
    });
    expect(await overview(alice, { since: iso(3 * HOUR_MS), until: iso(5 * HOUR_MS) })).toMatchObject({
      totalRequests: 0,
      failedRequests: 0,
      totalCostUsd: 0,
      avgLatencyMs: 0,
      activeGates: 0,
      recentRequests: [],
    });
    expect((await overview(alice, { gateId: a.id, since: iso(DAY_MS) })).totalRequests).toBe(0);
  });

  it('never counts another user’s requests, not even given their gate', async () => {
    const { alice, bob, bobs } = await aliceDay();
    const window = { since: iso(0), until: iso(2 * DAY_MS) };
    expect((await overview(alice, window)).totalRequests).toBe(5);
    const bobsTotals = await overview(bob, window);
    expect(bobsTotals).toMatchObject({ totalRequests: 3, failedRequests: 1, activeGates: 1 });
    expect(bobsTotals.recentRequests).toHaveLength(3);
    expect(await overview(alice, { ...window, gateId: bobs.id })).toMatchObject({
      totalRequests: 0,
      totalCostUsd: 0,
      activeGates: 0,
      recentRequests: [],
    });
  });

  it('still counts the requests of a gate deleted since', async () => {
    const { alice, b } = await aliceDay();
    const del = await app.request(`/v1/gates/${b.id}`, { method: 'DELETE', headers: alice.auth });
    expect(del.status).toBe(204);
    const o = await overview(alice, { since: iso(0), until: iso(2 * DAY_MS) });
    expect(o).toMatchObject({ totalRequests: 5, activeGates: 2 });
    expect(o.recentRequests.filter((r) => r.gate_id === null)).toHaveLength(2);
  });
});

describe('GET /v1/logs/series', () => {
  it('answers hourly points with counts, cost and latency percentiles', async () => {
    const { alice } = await aliceDay();
    const s = await series(alice, { since: iso(0), until: iso(DAY_MS), bucket: 'hour' });
    expect(s).toMatchObject({ bucket: 'hour', since: iso(0), until: iso(DAY_MS) });
    expect(s.points).toEqual([
      // percentile_cont over 100 and 300 ms: the median 200, the 95th 100 + 0.95 × 200.
      { start: iso(0), requests: 2, errors: 1, costUsd: 0.01, p50LatencyMs: 200, p95LatencyMs: 290 },
      { start: iso(HOUR_MS), requests: 1, errors: 0, costUsd: 0.02, p50LatencyMs: 200, p95LatencyMs: 200 },
      {
        start: iso(5 * HOUR_MS),
        requests: 1,
        errors: 0,
        costUsd: 0.5,
        p50LatencyMs: 1000,
        p95LatencyMs: 1000,
      },
    ]);
  });

  it('answers daily points, and picks days for windows over three days', async () => {
    const { alice, b } = await aliceDay();
    const s = await series(alice, { since: iso(0), until: iso(7 * DAY_MS) });
    expect(s.bucket).toBe('day');
    expect(s.points).toHaveLength(2);
    expect(s.points[0]).toMatchObject({ start: iso(0), requests: 4, errors: 1, p50LatencyMs: 250 });
    expect(s.points[0]?.costUsd).toBeCloseTo(0.53, 8);
    expect(s.points[1]).toEqual({
      start: iso(DAY_MS),
      requests: 1,
      errors: 0,
      costUsd: 0.25,
      p50LatencyMs: 400,
      p95LatencyMs: 400,
    });
    const onlyB = await series(alice, { since: iso(0), until: iso(2 * DAY_MS), bucket: 'day', gateId: b.id });
    expect(onlyB.points.map((p) => [p.start, p.requests, p.p50LatencyMs])).toEqual([
      [iso(0), 1, 1000],
      [iso(DAY_MS), 1, 400],
    ]);
    expect((await series(alice, { since: iso(0), until: iso(3 * DAY_MS) })).bucket).toBe('hour');
  });

  it('never includes another user’s requests', async () => {
    const { alice, bob, bobs } = await aliceDay();
    const window = { since: iso(0), until: iso(2 * DAY_MS), bucket: 'day' };
    const points = (await series(alice, window)).points;
    expect(points.map((p) => p.requests)).toEqual([4, 1]);
    expect(Math.max(...points.map((p) => p.p95LatencyMs ?? 0))).toBeLessThan(9000);
    expect((await series(alice, { ...window, gateId: bobs.id })).points).toEqual([]);
    expect((await series(bob, window)).points.map((p) => p.requests)).toEqual([2, 1]);
  });
});

describe('bad parameters', () => {
  const cases: [string, string][] = [
    ['/v1/logs/overview?since=last-week', 'since'],
    ['/v1/logs/overview?until=2025-03-10', 'until'],
    ['/v1/logs/overview?since=2025-03-11T00:00:00Z&until=2025-03-10T00:00:00Z', 'until'],
    ['/v1/logs/overview?gateId=abc', 'gateId'],
    ['/v1/logs/overview?limit=5', 'limit'],
    ['/v1/logs/overview?bucket=hour', 'bucket'],
    ['/v1/logs/series?bucket=week', 'bucket'],
    ['/v1/logs/series?since=2025-03-11T00:00:00Z&until=2025-03-10T00:00:00Z', 'until'],
    ['/v1/logs/series?gateId=abc', 'gateId'],
    ['/v1/logs/series?status=failed', 'status'],
  ];
  it.each(cases)('%s is a 400 naming %s', async (path, param) => {
    const user = await signUpUser(app);
    await expectBadParam(app, user, path, param);
  });

  it('needs an API key or a session', async () => {
    for (const path of ['/v1/logs/overview', '/v1/logs/series']) {
      const res = await app.request(path);
      expect(res.status).toBe(401);
      expect(((await res.json()) as ErrorBody).error.code).toBe('unauthorized');
    }
  });
});
