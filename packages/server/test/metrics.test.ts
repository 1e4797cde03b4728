/**
 * GET /metrics as Prometheus reads it: parsed with a real text-format parser, its request
 * counter agrees with the requests sent, by route, gate, model, provider and outcome; tokens,
 * cost, refusals, fallbacks and latencies are counted from the same requests; the token set by
 * GATEHOUSE_METRICS_TOKEN guards it; gates beyond GATEHOUSE_METRICS_MAX_GATES count as "other", and
 * API keys (counted by id, never by secret) beyond as many.
 */
import { describe, expect, it } from 'vitest';
import { closeRedis, openRedis } from '../src/db/redis.ts';
import { useTestApp } from './support/app.ts';
import { chat, completions, say } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';
import { scrape } from './support/prometheus.ts';

const TOKEN = 'metrics-token-for-tests';
const MAX_GATES = 3;
const app = useTestApp({ GATEHOUSE_METRICS_TOKEN: TOKEN, GATEHOUSE_METRICS_MAX_GATES: String(MAX_GATES) });
const auth = { authorization: `Bearer ${TOKEN}` };

describe('GET /metrics', () => {
  // First in the file, while the process has labelled fewer keys than its cap.
  it('counts requests and cost per API key by its id, never its secret', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const created = await app.request('/v1/api-keys', {
      method: 'POST',
      headers: user.auth,
      json: { name: 'ci' },
    });
    const key = (await created.json()) as { id: string; key: string };
    const ci = { ...user, auth: { authorization: `Bearer ${key.key}` } };
    for (let i = 0; i < 2; i++) expect((await chat(app, ci, gate.id)).status).toBe(200);
    expect((await chat(app, user, gate.id)).status).toBe(200);
    expect((await chat(app, ci, gate.id, { temperature: 'warm' })).status).toBe(400);

    const m = await scrape(app, auth);
    expect(m.family('gatehouse_key_requests_total')?.type).toBe('COUNTER');
    expect(m.total('gatehouse_key_requests_total', { key: key.id })).toBe(3);
    expect(m.total('gatehouse_key_requests_total', { key: key.id, outcome: 'success' })).toBe(2);
    expect(m.total('gatehouse_key_requests_total', { key: key.id, outcome: 'client_error' })).toBe(1);
    expect(m.total('gatehouse_key_cost_usd_total', { key: key.id })).toBeGreaterThan(0);
    const text = await (await app.request('/metrics', { headers: auth })).text();
    expect(text).not.toContain(key.key);
    expect(text).not.toContain(user.key);
  });

  it('counts each request by route, gate, model, provider and outcome', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, {
      model: 'mock/echo',
      routingStrategy: 'fallback',
      fallbackModels: ['mock/fast'],
    });
    for (let i = 0; i < 3; i++) expect((await chat(app, user, gate.id)).status).toBe(200);
    expect((await completions(app, user, gate.id, { stream: true })).status).toBe(200);
    // The primary fails, its fallback answers: one request, two attempts.
    const fellBack = await chat(app, user, gate.id, { messages: say('[mock:fail=500@mock/echo] hi') });
    expect(fellBack.status).toBe(200);
    // Both models fail: a provider error.
    expect((await chat(app, user, gate.id, { messages: say('[mock:fail=503] hi') })).status).toBe(502);
    // A field the gate refuses: the client's error, logged against the gate.
    expect((await chat(app, user, gate.id, { temperature: 'warm' })).status).toBe(400);

    const m = await scrape(app, auth);
    expect(m.family('gatehouse_requests_total')?.type).toBe('COUNTER');
    const g = { gate: gate.id };
    expect(m.total('gatehouse_requests_total', g)).toBe(7);
    expect(m.total('gatehouse_requests_total', { ...g, route: '/v3/chat', outcome: 'success' })).toBe(4);
    expect(
      m.total('gatehouse_requests_total', {
        ...g,
        route: '/v1/chat/completions',
        model: 'mock/echo',
        provider: 'mock',
        outcome: 'success',
      }),
    ).toBe(1);
    expect(m.total('gatehouse_requests_total', { ...g, model: 'mock/fast', outcome: 'success' })).toBe(1);
    expect(m.total('gatehouse_requests_total', { ...g, outcome: 'provider_error' })).toBe(1);
    expect(m.total('gatehouse_requests_total', { ...g, outcome: 'client_error' })).toBe(1);
    // The fallback once, and the failed request's second model.
    expect(m.total('gatehouse_fallbacks_total', g)).toBe(2);
    // The latencies are histograms (this parser reads a labelled histogram's buckets, not its labels).
    for (const name of [
      'gatehouse_request_duration_seconds',
      'gatehouse_upstream_duration_seconds',
      'gatehouse_db_round_trip_seconds',
    ]) {
      expect(m.family(name)?.type, name).toBe('HISTOGRAM');
      expect(Number(m.samples(name)[0]?.buckets?.['+Inf']), name).toBeGreaterThan(0);
    }
    expect(m.total('gatehouse_tokens_total', { ...g, type: 'input' })).toBeGreaterThan(0);
    expect(m.total('gatehouse_tokens_total', { ...g, type: 'output' })).toBeGreaterThan(0);
    expect(m.total('gatehouse_cost_usd_total', { ...g, model: 'mock/echo' })).toBeGreaterThan(0);
    // The process's own figures and the log writer's are there too.
    expect(m.total('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(m.family('nodejs_eventloop_lag_seconds')?.type).toBe('GAUGE');
    expect(m.family('gatehouse_log_entries_written_total')?.type).toBe('COUNTER');
    expect(m.family('gatehouse_log_queue_lag_seconds')?.type).toBe('GAUGE');
  });

  it('counts a block limit refusal as spending_refused, by gate and reason', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { spendingLimit: 0, spendingEnforcement: 'block' });
    const res = await chat(app, user, gate.id);
    expect(res.status).toBe(402);
    const m = await scrape(app, auth);
    expect(m.total('gatehouse_requests_total', { gate: gate.id, outcome: 'spending_refused' })).toBe(1);
    expect(m.total('gatehouse_refusals_total', { gate: gate.id, reason: 'spending_limit_exceeded' })).toBe(1);
  });

  it("times Redis' commands when the process has a Redis connection", async () => {
    const redis = await openRedis('redis://127.0.0.1:6379');
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await closeRedis();
    }
    const m = await scrape(app, auth);
    expect(m.family('gatehouse_redis_round_trip_seconds')?.type).toBe('HISTOGRAM');
    expect(Number(m.samples('gatehouse_redis_round_trip_seconds')[0]?.buckets?.['+Inf'])).toBeGreaterThan(0);
  });

  it('answers 401 without the token GATEHOUSE_METRICS_TOKEN sets, in the native error shape', async () => {
    const tries: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }];
    for (const headers of tries) {
      const res = await app.request('/metrics', { headers });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    expect((await app.request('/metrics', { headers: auth })).status).toBe(200);
  });

  it('labels at most GATEHOUSE_METRICS_MAX_GATES gates, and counts the rest as gate="other"', async () => {
    const user = await signUpUser(app);
    const gates = [];
    for (let i = 0; i < MAX_GATES + 2; i++) gates.push(await createGate(app, user));
    const before = await scrape(app, auth);
    const otherBefore = before.total('gatehouse_requests_total', { gate: 'other' });
    for (const gate of gates) expect((await chat(app, user, gate.id)).status).toBe(200);

    const m = await scrape(app, auth);
    const labelled = new Set(m.samples('gatehouse_requests_total').map((s) => s.labels?.gate));
    labelled.delete('other');
    expect(labelled.size).toBe(MAX_GATES);
    const counted = gates.filter((g) => labelled.has(g.id)).length;
    expect(m.total('gatehouse_requests_total', { gate: 'other' }) - otherBefore).toBe(gates.length - counted);
    expect(gates.length - counted).toBeGreaterThanOrEqual(2);
  });

  it('labels at most as many API keys as gates, and counts the rest as key="other"', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const keys: { id: string; key: string }[] = [];
    for (let i = 0; i < MAX_GATES + 2; i++) {
      const res = await app.request('/v1/api-keys', {
        method: 'POST',
        headers: user.auth,
        json: { name: `k${i}` },
      });
      keys.push((await res.json()) as { id: string; key: string });
    }
    const before = await scrape(app, auth);
    const otherBefore = before.total('gatehouse_key_requests_total', { key: 'other' });
    for (const k of keys) {
      const caller = { ...user, auth: { authorization: `Bearer ${k.key}` } };
      expect((await chat(app, caller, gate.id)).status).toBe(200);
    }

    const m = await scrape(app, auth);
    const labelled = new Set(m.samples('gatehouse_key_requests_total').map((s) => s.labels?.key));
    labelled.delete('other');
    labelled.delete('none');
    expect(labelled.size).toBe(MAX_GATES);
    const counted = keys.filter((k) => labelled.has(k.id)).length;
    expect(m.total('gatehouse_key_requests_total', { key: 'other' }) - otherBefore).toBe(
      keys.length - counted,
    );
    expect(keys.length - counted).toBeGreaterThanOrEqual(2);
  });
});
