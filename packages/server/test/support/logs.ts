/** Helpers for the log read-side tests: entries at chosen times, pages over REST, all pages. */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { LogEntryData } from '../../src/dataplane/logWriter.ts';
import type { TestApp } from './app.ts';
import { createGate, signUpUser, type TestUser } from './factories.ts';

export type LogRow = {
  id: string;
  gate_id: string | null;
  gate_name: string | null;
  endpoint: string;
  model_requested: string | null;
  model_used: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  latency_ms: number;
  success: boolean;
  status_code: number;
  error_code: string | null;
  created_at: string;
};

export type LogPage = {
  logs: LogRow[];
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
};

export type ErrorBody = {
  error: { code: string; message: string; details?: { issues?: { path: string; message: string }[] } };
};

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** A fixed past hour, so windows and buckets are exact whatever the clock says. */
export const BASE = new Date('2025-03-10T00:00:00.000Z');
export const at = (ms: number) => new Date(BASE.getTime() + ms);

export type EntrySpec = {
  gate: { id: string; name: string };
  createdAt: Date;
  success?: boolean;
  costUsd?: number;
  latencyMs?: number;
  promptTokens?: number;
  completionTokens?: number;
  apiKey?: { id: string; name: string };
  endUser?: string;
  /** The model that answered (default mock/echo). */
  model?: string;
  /** A failed entry's status and error code (default 503 upstream_error). */
  statusCode?: number;
  errorCode?: string;
};

/**
 * Log entries at chosen times, written by the runtime's log writer (the same statement that keeps
 * the hourly totals), so the overview and the series see them as they would real traffic.
 */
export async function writeEntries(app: TestApp, user: TestUser, specs: EntrySpec[]): Promise<string[]> {
  const ids: string[] = [];
  for (const s of specs) {
    const id = randomUUID();
    ids.push(id);
    const success = s.success ?? true;
    const entry: LogEntryData = {
      id,
      userId: user.id,
      gateId: s.gate.id,
      gateName: s.gate.name,
      endpoint: '/v3/chat',
      modelRequested: s.model ?? 'mock/echo',
      modelUsed: success ? (s.model ?? 'mock/echo') : null,
      promptTokens: s.promptTokens ?? 10,
      completionTokens: s.completionTokens ?? 5,
      costUsd: s.costUsd ?? 0.001,
      latencyMs: s.latencyMs ?? 100,
      success,
      statusCode: success ? 200 : (s.statusCode ?? 503),
      ...(!success && { errorCode: s.errorCode ?? 'upstream_error', errorMessage: 'mock failure' }),
      ...(s.apiKey && { apiKeyId: s.apiKey.id, apiKeyName: s.apiKey.name }),
      ...(s.endUser !== undefined && { endUser: s.endUser }),
      createdAt: s.createdAt,
    };
    await app.runtime.logs.add(entry);
  }
  await app.runtime.logs.drain();
  return ids;
}

/**
 * `count` entries of one gate inserted straight into the table (no totals), all at `createdAt`
 * unless `spreadMs` spaces them out; unique ids from the database. Returns their ids.
 */
export async function insertEntries(
  app: TestApp,
  user: TestUser,
  gate: { id: string; name: string },
  count: number,
  createdAt: Date,
  opts: { spreadMs?: number; failedEvery?: number } = {},
): Promise<string[]> {
  const rows = await app.db.driver.query<{ id: string }>(
    `INSERT INTO log_entries (id, user_id, gate_id, gate_name, endpoint, model_requested, model_used,
       prompt_tokens, completion_tokens, cost_usd, latency_ms, success, status_code, created_at)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, $3, '/v3/chat', 'mock/echo', 'mock/echo', 10, 5, 0.001,
            100 + i, NOT ($6::int > 0 AND i % $6::int = 0), CASE WHEN $6::int > 0 AND i % $6::int = 0 THEN 503 ELSE 200 END,
            $4::timestamptz - make_interval(secs => i * $5::double precision / 1000)
     FROM generate_series(1, $7::int) AS i
     RETURNING id`,
    [user.id, gate.id, gate.name, createdAt.toISOString(), opts.spreadMs ?? 0, opts.failedEvery ?? 0, count],
  );
  return rows.map((r) => r.id);
}

/** GET /v1/logs with the given query; asserts a 200. */
export async function getLogs(
  app: TestApp,
  user: TestUser,
  query: Record<string, string | number> = {},
): Promise<LogPage> {
  const res = await app.request(`/v1/logs?${new URLSearchParams(stringify(query))}`, { headers: user.auth });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as LogPage;
}

/** Every entry the query matches, following nextCursor to the end. */
export async function allPages(
  app: TestApp,
  user: TestUser,
  query: Record<string, string | number> = {},
): Promise<{ rows: LogRow[]; pages: number }> {
  const rows: LogRow[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: LogPage = await getLogs(app, user, { ...query, ...(cursor && { cursor }) });
    pages += 1;
    rows.push(...page.logs);
    expect(page.pagination.hasMore).toBe(page.pagination.nextCursor !== null);
    cursor = page.pagination.nextCursor;
    expect(pages, 'paging ends').toBeLessThan(10_000);
  } while (cursor);
  return { rows, pages };
}

/** A GET under /v1/logs that must fail with a 400 naming `param`. */
export async function expectBadParam(app: TestApp, user: TestUser, path: string, param: string) {
  const res = await app.request(path, { headers: user.auth });
  const body = (await res.json()) as ErrorBody;
  expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(400);
  expect(body.error.code).toBe('invalid_request');
  const issues = body.error.details?.issues ?? [];
  expect(
    issues.some((i) => i.path === param || i.message.includes(`"${param}"`)),
    JSON.stringify(issues),
  ).toBe(true);
  expect(body.error.message).toContain(param);
  return body;
}

/** Newest first, ties broken by id, as the API promises. */
export function byNewest(a: { created_at: string; id: string }, b: { created_at: string; id: string }) {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function stringify(query: Record<string, string | number>): Record<string, string> {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]));
}

/** A new user's new gate, and a maker of successful chat entries on it by id (for the log writer). */
export async function entryMaker(app: TestApp): Promise<(id: string) => LogEntryData> {
  const user = await signUpUser(app);
  const gate = await createGate(app, user);
  return (id) => ({
    id,
    userId: user.id,
    gateId: gate.id,
    gateName: gate.name,
    endpoint: '/v3/chat',
    success: true,
    statusCode: 200,
  });
}
