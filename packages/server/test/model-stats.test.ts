/**
 * What the gateway has seen of each model (modelStats.ts): the log writer keeps per-model hourly
 * totals of every attempt, fallbacks included, and the Architect reads them over a window.
 */
import { describe, expect, it } from 'vitest';
import {
  histogramPercentile,
  LATENCY_BUCKETS,
  latencyBucketOf,
  observedModels,
  rebuildModelRollups,
} from '../src/domain/modelStats.ts';
import { purgeExpiredLogs } from '../src/domain/retention.ts';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, say } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';

// Attempts time out after 1 s, so a timed-out (and so charged) attempt is quick to make.
const app = useTestApp({ GATEHOUSE_ATTEMPT_TIMEOUT_MS: '1000' });
const DAY_MS = 86_400_000;
const window = () => ({ since: new Date(Date.now() - DAY_MS), until: new Date(Date.now() + 60_000) });

describe('latency histograms', () => {
  it('put a latency in the bucket below its next edge and read percentiles back within the bucket', () => {
    expect(latencyBucketOf(0)).toBe(0);
    expect(latencyBucketOf(99)).toBe(0);
    expect(latencyBucketOf(100)).toBe(1);
    expect(latencyBucketOf(999_999)).toBe(LATENCY_BUCKETS - 1);
    const hist = new Array<number>(LATENCY_BUCKETS).fill(0);
    hist[latencyBucketOf(150)] = 90; // 100–200 ms
    hist[latencyBucketOf(2500)] = 10; // 2,000–3,000 ms
    expect(histogramPercentile(hist, 0.5)).toBeGreaterThanOrEqual(100);
    expect(histogramPercentile(hist, 0.5)).toBeLessThan(200);
    expect(histogramPercentile(hist, 0.95)).toBeGreaterThanOrEqual(2000);
    expect(histogramPercentile(hist, 0.95)).toBeLessThanOrEqual(3000);
    expect(histogramPercentile(new Array<number>(LATENCY_BUCKETS).fill(0), 0.5)).toBeNull();
  });
});

describe('observed figures per model', () => {
  it('count every attempt of every model tried, the fallback’s too, with errors, latency and cost', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'mock/fast',
      routingStrategy: 'fallback',
      fallbackModels: ['mock/smart'],
    });
    // 10 requests: 3 fail on mock/fast and are answered by mock/smart; 2 of the others take ~250 ms.
    for (let i = 0; i < 10; i++) {
      const text = i < 3 ? '[mock:fail=500@mock/fast] hi' : i < 5 ? '[mock:delay=250] hi' : 'hi';
      await answerOf(await chat(app, user, gate.id, { messages: say(text) }));
    }
    await app.runtime.logs.drain();
    const seen = await observedModels(user.id, window());
    const fast = seen.get('mock/fast');
    const smart = seen.get('mock/smart');
    expect(fast).toMatchObject({ attempts: 10, errors: 3, answered: 7, errorRate: 0.3 });
    expect(smart).toMatchObject({ attempts: 3, errors: 0, answered: 3, errorRate: 0 });
    // Two of ten attempts took 250 ms or more: the p95 lies in their bucket, the p50 well below.
    expect(fast?.p95Ms).toBeGreaterThanOrEqual(200);
    expect(fast?.p50Ms).toBeLessThan(100);
    expect(fast?.meanCostUsd).toBeGreaterThan(0);
    expect(fast?.costPer1kTokens).toBeGreaterThan(0);
    // The gate's own window sees the same; another user's sees nothing of it.
    expect((await observedModels(user.id, { ...window(), gateId: gate.id })).get('mock/fast')?.attempts).toBe(
      10,
    );
    const other = await signUpUser(app);
    expect((await observedModels(other.id, window())).size).toBe(0);

    // Rebuilt from the entries (what the migration does for an existing log), the figures are the same.
    await rebuildModelRollups([user.id]);
    const rebuilt = await observedModels(user.id, window());
    expect(rebuilt.get('mock/fast')).toEqual(fast);
    expect(rebuilt.get('mock/smart')).toEqual(smart);
  });

  it('charge a timed-out attempt to its own model, and the answer’s cost alone to the model that answered', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'mock/fast',
      routingStrategy: 'fallback',
      fallbackModels: ['mock/smart'],
    });
    const res = await chat(app, user, gate.id, { messages: say('[mock:timeout@mock/fast] hi') });
    const answer = await answerOf(res);
    await app.runtime.logs.drain();
    const [entry] = await app.db.driver.query<{
      cost_usd: string;
      attempts: { model: string; costUsd?: number }[];
    }>('SELECT cost_usd, attempts FROM log_entries WHERE id = $1', [answer.id]);
    const charged = entry?.attempts.find((a) => a.model === 'mock/fast')?.costUsd ?? 0;
    expect(charged).toBeGreaterThan(0);
    const seen = await observedModels(user.id, window());
    expect(seen.get('mock/fast')).toMatchObject({ attempts: 1, errors: 1, answered: 0 });
    const rows = await app.db.driver.query<{ model: string; cost: string }>(
      'SELECT model, cost_usd AS cost FROM model_rollups WHERE user_id = $1 ORDER BY model',
      [user.id],
    );
    const costOf = (model: string) => Number(rows.find((r) => r.model === model)?.cost);
    expect(costOf('mock/fast')).toBeCloseTo(charged, 8);
    expect(costOf('mock/smart')).toBeCloseTo(Number(entry?.cost_usd) - charged, 8);
    expect(costOf('mock/smart')).toBeGreaterThan(0);
    // The rebuild from the entries agrees.
    await rebuildModelRollups([user.id]);
    const rebuilt = await app.db.driver.query<{ model: string; cost: string }>(
      'SELECT model, cost_usd AS cost FROM model_rollups WHERE user_id = $1 ORDER BY model',
      [user.id],
    );
    expect(rebuilt).toEqual(rows);
  });

  it('expire with the plan’s log retention', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/fast' });
    await answerOf(await chat(app, user, gate.id));
    await app.runtime.logs.drain();
    expect((await observedModels(user.id, window())).get('mock/fast')?.attempts).toBe(1);
    // A year on, the free plan's retention has passed.
    await purgeExpiredLogs(new Date(Date.now() + 365 * DAY_MS));
    const later = { since: new Date(0), until: new Date(Date.now() + 60_000) };
    expect((await observedModels(user.id, later)).size).toBe(0);
  });
});
