import { describe, expect, it, vi } from 'vitest';
import { useTestApp } from './support/app.ts';
import { answerOf, chat, say } from './support/chat.ts';
import { createGate, signUpUser } from './support/factories.ts';
import {
  allPages,
  at,
  BASE,
  byNewest,
  expectBadParam,
  getLogs,
  HOUR_MS,
  insertEntries,
  writeEntries,
} from './support/logs.ts';

const app = useTestApp();

describe('GET /v1/logs', () => {
  it('lists the caller’s requests newest first, with the spec’s fields in snake_case', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const first = await answerOf(await chat(app, user, gate.id, { messages: say('first') }));
    const second = await answerOf(await chat(app, user, gate.id, { messages: say('second') }));
    const failed = await chat(app, user, gate.id, { messages: say('[mock:fail=503] third') });
    expect(failed.status).toBe(502);
    await app.runtime.logs.drain();

    const page = await getLogs(app, user);
    expect(page.pagination).toEqual({ limit: 50, nextCursor: null, hasMore: false });
    expect(page.logs).toHaveLength(3);
    expect(page.logs.slice(1).map((l) => l.id)).toEqual([second.id, first.id]);
    expect(page.logs[0]).toMatchObject({
      gate_id: gate.id,
      gate_name: gate.name,
      endpoint: '/v3/chat',
      model_requested: 'mock/echo',
      success: false,
      // What the client was answered: the provider's 503 reached it as a 502.
      status_code: 502,
      error_code: 'upstream_error',
    });
    expect(page.logs[1]).toEqual(
      expect.objectContaining({
        id: second.id,
        gate_id: gate.id,
        gate_name: gate.name,
        model_used: 'mock/echo',
        prompt_tokens: second.usage.promptTokens,
        completion_tokens: second.usage.completionTokens,
        total_tokens: second.usage.totalTokens,
        cost_usd: second.costUsd,
        success: true,
        status_code: 200,
        error_code: null,
        stream: false,
        ignored_overrides: [],
      }),
    );
    expect(new Date(page.logs[1]?.created_at ?? '').toISOString()).toBe(page.logs[1]?.created_at);
    // The list is a summary: payloads are for the detail endpoint.
    expect(page.logs[1]).not.toHaveProperty('provider_request');
    expect(page.logs[1]).not.toHaveProperty('attempts');
  });

  it('answers an empty page, not an error, to a user without requests', async () => {
    const user = await signUpUser(app);
    expect(await getLogs(app, user)).toEqual({
      logs: [],
      pagination: { limit: 50, nextCursor: null, hasMore: false },
    });
  });

  it('needs an API key or a session', async () => {
    const res = await app.request('/v1/logs');
    expect(res.status).toBe(401);
  });
});

describe('filters', () => {
  it('gateId lists only that gate’s entries', async () => {
    const user = await signUpUser(app);
    const a = await createGate(app, user);
    const b = await createGate(app, user);
    const aIds = await insertEntries(app, user, a, 7, at(0), { spreadMs: 1000 });
    const bIds = await insertEntries(app, user, b, 4, at(0), { spreadMs: 1000 });

    const onlyA = await allPages(app, user, { gateId: a.id, limit: 3 });
    expect(onlyA.rows.map((l) => l.id).sort()).toEqual([...aIds].sort());
    expect(onlyA.rows.every((l) => l.gate_id === a.id)).toBe(true);
    const onlyB = await getLogs(app, user, { gateId: b.id });
    expect(onlyB.logs.map((l) => l.id).sort()).toEqual([...bIds].sort());
    // A gate without entries (or someone else's) is an empty list.
    const other = await createGate(app, user);
    expect((await getLogs(app, user, { gateId: other.id })).logs).toEqual([]);
  });

  it('status=failed and status=success split the entries between them', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, 30, at(0), { spreadMs: 1000, failedEvery: 4 });

    const failed = await allPages(app, user, { status: 'failed', limit: 2 });
    const succeeded = await allPages(app, user, { status: 'success', limit: 7 });
    expect(failed.rows).toHaveLength(7);
    expect(failed.rows.every((l) => !l.success && l.status_code === 503)).toBe(true);
    expect(succeeded.rows).toHaveLength(23);
    expect(succeeded.rows.every((l) => l.success)).toBe(true);
    const both = [...failed.rows, ...succeeded.rows].map((l) => l.id).sort();
    expect(both).toEqual((await allPages(app, user)).rows.map((l) => l.id).sort());
  });

  it('gateId and status combine', async () => {
    const user = await signUpUser(app);
    const a = await createGate(app, user);
    const b = await createGate(app, user);
    await insertEntries(app, user, a, 10, at(0), { spreadMs: 1000, failedEvery: 2 });
    await insertEntries(app, user, b, 10, at(0), { spreadMs: 1000, failedEvery: 2 });
    const page = await getLogs(app, user, { gateId: a.id, status: 'failed' });
    expect(page.logs).toHaveLength(5);
    expect(page.logs.every((l) => l.gate_id === a.id && !l.success)).toBe(true);
  });

  it('model, errorCode and failureClass find the requests that failed which way', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user, { model: 'mock/fast' });
    const broke = await createGate(app, user, { spendingLimit: 0, spendingEnforcement: 'block' });
    const ok = await answerOf(await chat(app, user, gate.id, { messages: say('fine') }));
    expect((await chat(app, user, gate.id, { messages: say('[mock:fail=503] down') })).status).toBe(502);
    expect((await chat(app, user, broke.id, { messages: say('refused') })).status).toBe(402);
    expect((await chat(app, user, gate.id, { messages: [] })).status).toBe(400);
    await app.runtime.logs.drain();

    const ids = async (query: Record<string, string>) =>
      (await getLogs(app, user, query)).logs.map((l) => [l.status_code, l.error_code]);
    expect(await ids({ failureClass: 'provider_error' })).toEqual([[502, 'upstream_error']]);
    expect(await ids({ failureClass: 'limit_refusal' })).toEqual([[402, 'spending_limit_exceeded']]);
    expect(await ids({ failureClass: 'client_error' })).toEqual([[400, 'invalid_request']]);
    expect(await ids({ failureClass: 'rate_limit' })).toEqual([]);
    expect(await ids({ errorCode: 'spending_limit_exceeded' })).toEqual([[402, 'spending_limit_exceeded']]);
    // The model named or the one that answered.
    const fast = (await getLogs(app, user, { model: 'mock/fast' })).logs;
    expect(fast.map((l) => l.id)).toContain(ok.id);
    expect(fast.every((l) => l.gate_id === gate.id)).toBe(true);
    expect((await getLogs(app, user, { model: 'mock/none' })).logs).toEqual([]);
  });

  it('since is inclusive and until exclusive, in any offset', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    // One entry at 00:00, 01:00, …, 05:00.
    const ids = await writeEntries(
      app,
      user,
      Array.from({ length: 6 }, (_, h) => ({ gate, createdAt: at(h * HOUR_MS) })),
    );
    const window = await getLogs(app, user, {
      since: at(HOUR_MS).toISOString(),
      until: at(4 * HOUR_MS).toISOString(),
    });
    expect(window.logs.map((l) => l.id)).toEqual([ids[3], ids[2], ids[1]]);

    // The same instants written with a +02:00 offset select the same entries.
    const offset = await getLogs(app, user, {
      since: '2025-03-10T03:00:00+02:00',
      until: '2025-03-10T06:00:00.000+02:00',
    });
    expect(offset.logs.map((l) => l.id)).toEqual([ids[3], ids[2], ids[1]]);

    expect(
      (await getLogs(app, user, { since: at(5 * HOUR_MS).toISOString() })).logs.map((l) => l.id),
    ).toEqual([ids[5]]);
    expect((await getLogs(app, user, { until: at(HOUR_MS).toISOString() })).logs.map((l) => l.id)).toEqual([
      ids[0],
    ]);
    expect((await getLogs(app, user, { until: BASE.toISOString() })).logs).toEqual([]);
  });

  it('pages through a time window with a status filter without leaving it', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, 120, at(2 * HOUR_MS), { spreadMs: 60_000, failedEvery: 3 });
    const since = at(0).toISOString();
    const until = at(HOUR_MS).toISOString();
    const { rows } = await allPages(app, user, { since, until, status: 'failed', limit: 4 });
    // Entries 60…120 minutes before 02:00 fall in [00:00, 01:00); every third failed.
    const expected = Array.from({ length: 120 }, (_, k) => k + 1).filter((i) => i % 3 === 0 && i > 60);
    expect(rows).toHaveLength(expected.length);
    for (const row of rows) {
      expect(row.created_at >= since && row.created_at < until).toBe(true);
      expect(row.success).toBe(false);
    }
  });
});

/**
 * The most rows of log_entries that one of the log's own statements read while `run` ran: each
 * statement the server sent is run again under EXPLAIN ANALYZE. A filter's cost, counted, not timed.
 */
async function rowsRead(run: () => Promise<unknown>): Promise<number> {
  const spy = vi.spyOn(app.db.driver, 'query');
  let statements: typeof spy.mock.calls;
  try {
    await run();
  } finally {
    statements = [...spy.mock.calls];
    spy.mockRestore();
  }
  type Node = Record<string, unknown> & { Plans?: Node[] };
  const read = (node: Node): number =>
    (node['Relation Name'] === 'log_entries'
      ? (Number(node['Actual Rows']) +
          Number(node['Rows Removed by Filter'] ?? 0) +
          Number(node['Rows Removed by Index Recheck'] ?? 0)) *
        Number(node['Actual Loops'])
      : 0) + (node.Plans ?? []).reduce((sum, child) => sum + read(child), 0);
  let most = 0;
  for (const [text, params] of statements) {
    if (!/^\s*SELECT\b[\s\S]*\bFROM log_entries\b/.test(text)) continue;
    const [row] = await app.db.driver.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
      params,
    );
    const raw = row?.['QUERY PLAN'];
    const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: Node }];
    most = Math.max(most, read(plan.Plan));
  }
  return most;
}

describe('finding failures on a large log', () => {
  it('model + errorCode, errorCode and failureClass read the owner’s failures, not every entry', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, 20_000, at(0), { spreadMs: 1000 });
    // 300 failures, a third of each code; two upstream_error ones of a model seldom used.
    await app.db.driver.query(
      `INSERT INTO log_entries (id, user_id, gate_id, gate_name, endpoint, model_requested, success, status_code,
         error_code, created_at)
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, $3, '/v3/chat',
              CASE WHEN i IN (3, 6) THEN 'mock/fast' ELSE 'mock/echo' END, false, (ARRAY[502, 429, 400])[i % 3 + 1],
              (ARRAY['upstream_error', 'rate_limited', 'invalid_request'])[i % 3 + 1],
              $4::timestamptz - make_interval(secs => i * 7)
       FROM generate_series(1, 300) AS i`,
      [user.id, gate.id, gate.name, at(0).toISOString()],
    );
    await app.db.driver.query('ANALYZE log_entries');
    const failures = 300;

    const found = async (query: Record<string, string>) => {
      let rows: { error_code: string | null; model_requested: string | null }[] = [];
      let count = -1;
      const read = await rowsRead(async () => {
        rows = (await getLogs(app, user, query)).logs;
        const res = await app.request(`/v1/logs/summary?${new URLSearchParams(query)}`, {
          headers: user.auth,
        });
        count = ((await res.json()) as { count: number }).count;
      });
      return { rows, count, read };
    };

    const needles = await found({ model: 'mock/fast', errorCode: 'upstream_error' });
    expect(needles.count).toBe(2);
    expect(needles.rows.map((r) => [r.model_requested, r.error_code])).toEqual([
      ['mock/fast', 'upstream_error'],
      ['mock/fast', 'upstream_error'],
    ]);
    expect(needles.read).toBeLessThanOrEqual(failures);

    const upstream = await found({ errorCode: 'upstream_error' });
    expect([upstream.rows.length, upstream.count]).toEqual([50, 100]);
    expect(upstream.read).toBeLessThanOrEqual(failures);

    for (const [failureClass, count] of [
      ['provider_error', 100],
      ['rate_limit', 100],
      ['client_error', 100],
      ['limit_refusal', 0],
    ] as const) {
      const byClass = await found({ failureClass });
      expect(byClass.count, failureClass).toBe(count);
      expect(byClass.read, failureClass).toBeLessThanOrEqual(failures);
    }
  });
});

describe('finding one session, key or end user on a large log', () => {
  it('reads only the entries that name it, though most entries name none (their indexes hold only entries that do)', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, 20_000, at(0), { spreadMs: 1000 });
    const key = '6f1c1d1e-2a3b-4c5d-8e9f-0a1b2c3d4e5f';
    // 40 entries: each names the end user, the session and the key in turn, a few the rarer ones.
    await app.db.driver.query(
      `INSERT INTO log_entries (id, user_id, gate_id, gate_name, endpoint, model_requested, success, status_code,
         end_user, session_id, api_key_id, created_at)
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, $3, '/v3/chat', 'mock/echo', true, 200,
              CASE WHEN i % 2 = 0 THEN 'customer-7' END, CASE WHEN i % 4 = 0 THEN 'run-1' END,
              CASE WHEN i % 8 = 0 THEN $5::uuid END, $4::timestamptz - make_interval(secs => i * 11)
       FROM generate_series(1, 40) AS i`,
      [user.id, gate.id, gate.name, at(0).toISOString(), key],
    );
    await app.db.driver.query('ANALYZE log_entries');
    for (const [query, count] of [
      [{ endUser: 'customer-7' }, 20],
      [{ sessionId: 'run-1' }, 10],
      [{ apiKeyId: key }, 5],
    ] as const) {
      let total = -1;
      const read = await rowsRead(async () => {
        await getLogs(app, user, query);
        const res = await app.request(`/v1/logs/summary?${new URLSearchParams(query)}`, {
          headers: user.auth,
        });
        total = ((await res.json()) as { count: number }).count;
      });
      expect(total, JSON.stringify(query)).toBe(count);
      expect(read, JSON.stringify(query)).toBeLessThanOrEqual(count);
    }
  });
});

describe('paging', () => {
  it('follows nextCursor to the end without gaps or repeats, however many share a timestamp', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const same = at(HOUR_MS);
    // 150 entries in the same millisecond, between two that are a second older and newer.
    const older = await insertEntries(app, user, gate, 1, at(HOUR_MS - 1000));
    const tied = await insertEntries(app, user, gate, 150, same);
    const newer = await insertEntries(app, user, gate, 1, at(HOUR_MS + 1000));
    const all = [...older, ...tied, ...newer];

    for (const limit of [1, 7, 50, 200]) {
      const { rows, pages } = await allPages(app, user, { limit });
      const ids = rows.map((l) => l.id);
      expect(new Set(ids).size, `limit ${limit}: no repeats`).toBe(ids.length);
      expect([...ids].sort(), `limit ${limit}: no gaps`).toEqual([...all].sort());
      expect(rows).toEqual([...rows].sort(byNewest));
      expect(rows[0]?.id).toBe(newer[0]);
      expect(rows.at(-1)?.id).toBe(older[0]);
      expect(pages).toBe(Math.ceil(all.length / limit));
    }
  });

  it('keeps its place when newer entries arrive between pages', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    const original = await insertEntries(app, user, gate, 10, at(0), { spreadMs: 1 });
    const first = await getLogs(app, user, { limit: 4 });
    await insertEntries(app, user, gate, 5, at(HOUR_MS));
    const rest = await allPages(app, user, { cursor: first.pagination.nextCursor as string, limit: 4 });
    const seen = [...first.logs, ...rest.rows].map((l) => l.id);
    expect(seen.sort()).toEqual([...original].sort());
  });

  it('has no next page when the last page is exactly full', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, 10, at(0), { spreadMs: 1000 });
    const first = await getLogs(app, user, { limit: 5 });
    expect(first.pagination).toMatchObject({ limit: 5, hasMore: true });
    const second = await getLogs(app, user, { limit: 5, cursor: first.pagination.nextCursor as string });
    expect(second.logs).toHaveLength(5);
    expect(second.pagination).toEqual({ limit: 5, nextCursor: null, hasMore: false });
  });

  it('answers 50 entries by default and at most 200', async () => {
    const user = await signUpUser(app);
    const gate = await createGate(app, user);
    await insertEntries(app, user, gate, 230, at(0), { spreadMs: 10 });
    const byDefault = await getLogs(app, user);
    expect(byDefault.logs).toHaveLength(50);
    expect(byDefault.pagination).toMatchObject({ limit: 50, hasMore: true });
    const max = await getLogs(app, user, { limit: 200 });
    expect(max.logs).toHaveLength(200);
    expect(max.pagination).toMatchObject({ limit: 200, hasMore: true });
    const rest = await getLogs(app, user, { limit: 200, cursor: max.pagination.nextCursor as string });
    expect(rest.logs).toHaveLength(30);
    expect(rest.pagination.hasMore).toBe(false);
  });
});

describe('owner isolation', () => {
  it('never lists another user’s entries, even given their gate or their cursor', async () => {
    const alice = await signUpUser(app);
    const bob = await signUpUser(app);
    const aliceGate = await createGate(app, alice);
    const bobGate = await createGate(app, bob);
    const aliceIds = await insertEntries(app, alice, aliceGate, 5, at(0), { spreadMs: 1000 });
    await insertEntries(app, bob, bobGate, 5, at(0), { spreadMs: 1000 });
    await answerOf(await chat(app, bob, bobGate.id));
    await app.runtime.logs.drain();

    expect((await allPages(app, alice, { limit: 2 })).rows.map((l) => l.id).sort()).toEqual(
      [...aliceIds].sort(),
    );
    expect((await getLogs(app, alice, { gateId: bobGate.id })).logs).toEqual([]);
    const bobPage = await getLogs(app, bob, { limit: 2 });
    const withBobsCursor = await allPages(app, alice, { cursor: bobPage.pagination.nextCursor as string });
    expect(withBobsCursor.rows.every((l) => aliceIds.includes(l.id))).toBe(true);
  });
});

describe('bad parameters', () => {
  const cases: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=x', 'limit'],
    ['limit=2.5', 'limit'],
    ['limit=', 'limit'],
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${Buffer.from('2025-01-01T00:00:00.000Z|nope').toString('base64url')}`, 'cursor'],
    ['gateId=123', 'gateId'],
    ['status=ok', 'status'],
    ['since=yesterday', 'since'],
    ['since=2025-03-10', 'since'],
    ['until=2025-13-40T00:00:00Z', 'until'],
    ['since=2025-03-10T02:00:00Z&until=2025-03-10T01:00:00Z', 'until'],
    ['since=2025-03-10T01:00:00Z&until=2025-03-10T01:00:00Z', 'until'],
    ['sort=asc', 'sort'],
    ['gate_id=00000000-0000-4000-8000-000000000000', 'gate_id'],
  ];
  it.each(cases)('?%s is a 400 naming %s', async (query, param) => {
    const user = await signUpUser(app);
    await expectBadParam(app, user, `/v1/logs?${query}`, param);
  });
});
