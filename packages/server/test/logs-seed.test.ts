import { describe, expect, it } from 'vitest';
import { seedLogs } from '../scripts/seed-logs.ts';
import { useTestApp } from './support/app.ts';

const app = useTestApp();

describe('the log seed (scripts/seed-logs.ts)', () => {
  it('makes entries whose hourly totals, overview and pages agree with them, and keeps the second account apart', async () => {
    const until = new Date();
    const seed = await seedLogs(app.db, { rows: 3000, gates: 6, days: 3, until, log: () => {} });
    const auth = { authorization: `Bearer ${seed.owner.apiKey}` };

    const [stats] = await app.db.driver.query<Record<string, string | number>>(
      `SELECT count(*)::int AS requests, count(*) FILTER (WHERE NOT success)::int AS errors,
              sum(cost_usd)::float8 AS cost, round(avg(latency_ms))::int AS latency,
              count(DISTINCT gate_id)::int AS gates, min(created_at) AS first, max(created_at) AS last,
              count(*) FILTER (WHERE prompt_tokens > 0 AND cost_usd > 0)::int AS priced
       FROM log_entries WHERE user_id = $1::uuid`,
      [seed.owner.id],
    );
    expect(stats).toMatchObject({ requests: 3000, gates: 6 });
    expect(Number(stats?.errors)).toBeGreaterThan(3000 * 0.02);
    expect(Number(stats?.errors)).toBeLessThan(3000 * 0.09);
    expect(Number(stats?.priced)).toBe(3000 - Number(stats?.errors));
    expect(new Date(stats?.first as string).getTime()).toBeGreaterThanOrEqual(
      until.getTime() - 3 * 86_400_000,
    );
    expect(new Date(stats?.last as string).getTime()).toBeLessThanOrEqual(until.getTime());

    const res = await app.request(
      `/v1/logs/overview?since=${new Date(until.getTime() - 4 * 86_400_000).toISOString()}&until=${new Date(until.getTime() + 60_000).toISOString()}`,
      { headers: auth },
    );
    expect(res.status).toBe(200);
    const overview = (await res.json()) as Record<string, number>;
    expect(overview).toMatchObject({
      totalRequests: 3000,
      failedRequests: stats?.errors,
      avgLatencyMs: stats?.latency,
      activeGates: 6,
    });
    expect(overview.totalCostUsd).toBeCloseTo(Number(stats?.cost), 6);

    const page = await app.request('/v1/logs?limit=200&status=failed', { headers: auth });
    const failed = ((await page.json()) as { logs: { success: boolean; error_code: string }[] }).logs;
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((l) => !l.success && l.error_code !== null)).toBe(true);

    const [other] = await app.db.driver.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM log_entries WHERE user_id = $1::uuid',
      [seed.other.id],
    );
    expect(other?.n).toBe(10);
    const [rollups] = await app.db.driver.query<{ n: number }>(
      'SELECT sum(requests)::int AS n FROM log_rollups WHERE user_id = $1::uuid',
      [seed.other.id],
    );
    expect(rollups?.n).toBe(10);
  });
});
