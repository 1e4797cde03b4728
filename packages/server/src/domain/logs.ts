/**
 * Reading the request log: pages of entries (keyset-paginated, newest first), one entry with its
 * payloads, the overview and the time series. Every query is scoped to its owner.
 */

import { EARLIEST_DATE, isAcceptedDate } from '@gatehouse/rules/dates';
import { isUuid } from '@gatehouse/rules/ids';
import { z } from 'zod';
import { sql } from '../db/client.ts';
import { NotFoundError, parseWith } from './errors.ts';
import { logConditions, logFilterFields, sinceBeforeUntil, untilIssue } from './logFilter.ts';

const DAY_MS = 86_400_000;

/** Opaque page cursor: the last entry's time and id. */
export function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(`${createdAt.toISOString()}|${id}`).toString('base64url');
}

/**
 * The cursor's time and id, or null unless it is exactly what encodeCursor makes of a date in
 * the accepted range: a forged one could otherwise carry year 0 or 275760 to the database.
 */
export function decodeCursor(cursor: string): { createdAt: Date; id: string } | null {
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const [time, id] = parts;
  if (parts.length !== 2 || !time || !id || !isUuid(id)) return null;
  const createdAt = new Date(time);
  if (!isAcceptedDate(createdAt) || createdAt.toISOString() !== time) return null;
  return { createdAt, id };
}

export const logQuerySchema = z
  .strictObject({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z
      .string()
      .transform((c, ctx) => {
        const decoded = decodeCursor(c);
        if (!decoded) ctx.addIssue({ code: 'custom', message: 'must be a cursor from a previous page' });
        return decoded as { createdAt: Date; id: string };
      })
      .optional(),
    ...logFilterFields,
  })
  .refine(sinceBeforeUntil, untilIssue);

export type SummaryRow = {
  id: string;
  api_key_id: string | null;
  api_key_name: string | null;
  end_user: string | null;
  gate_id: string | null;
  gate_name: string | null;
  endpoint: string;
  model_requested: string | null;
  model_used: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  tokens_estimated: boolean;
  usage_note: string | null;
  cost_usd: string | number;
  latency_ms: number;
  success: boolean;
  status_code: number;
  error_code: string | null;
  error_message: string | null;
  session_id: string | null;
  inferred_action: string | null;
  tool_calls: unknown;
  tool_results: unknown;
  ignored_overrides: string[] | null;
  spending_warning: boolean;
  stream: boolean;
  created_at: Date | string;
};

export const SUMMARY_COLUMNS = `id, api_key_id, api_key_name, end_user, gate_id, gate_name, endpoint, model_requested, model_used, prompt_tokens,
  completion_tokens, tokens_estimated, usage_note, cost_usd, latency_ms, success, status_code, error_code, error_message,
  session_id, inferred_action, tool_calls, tool_results, ignored_overrides, spending_warning, stream, created_at`;

/** An entry as the domain knows it: money as a number, its time a Date. */
export function entryOf(row: SummaryRow) {
  return {
    id: row.id,
    apiKeyId: row.api_key_id,
    apiKeyName: row.api_key_name,
    endUser: row.end_user,
    gateId: row.gate_id,
    gateName: row.gate_name,
    endpoint: row.endpoint,
    modelRequested: row.model_requested,
    modelUsed: row.model_used,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    totalTokens: row.prompt_tokens + row.completion_tokens,
    tokensEstimated: row.tokens_estimated,
    usageNote: row.usage_note,
    costUsd: Number(row.cost_usd),
    latencyMs: row.latency_ms,
    success: row.success,
    statusCode: row.status_code,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    sessionId: row.session_id,
    inferredAction: row.inferred_action,
    toolCalls: row.tool_calls ?? null,
    toolResults: row.tool_results ?? null,
    ignoredOverrides: row.ignored_overrides ?? [],
    spendingWarning: row.spending_warning,
    stream: row.stream,
    createdAt: new Date(row.created_at),
  };
}

export type LogEntrySummary = ReturnType<typeof entryOf>;

type DetailRow = SummaryRow & {
  attempts: unknown;
  metadata: unknown;
  provider_request: unknown;
  provider_response: unknown;
  client_request: unknown;
  media: { index: number; mimeType: string; bytes: number }[] | null;
  replay_of: string | null;
  replays: string[] | null;
};

/** A file an entry's answer carried, stored in log_media: what it is, and where to fetch it. */
export type LogMediaInfo = { index: number; mimeType: string; bytes: number; url: string };

export const mediaUrl = (entryId: string, index: number) => `/v1/logs/${entryId}/media/${index}`;

/** An entry with its attempts and the provider payloads, which only a single read gives. */
export type LogEntryDetail = LogEntrySummary & {
  attempts: unknown;
  metadata: unknown;
  providerRequest: unknown;
  providerResponse: unknown;
  /** What the client sent, on an entry refused before any provider call (else null). */
  clientRequest: unknown;
  media: LogMediaInfo[];
  /** The entry this request replayed (the dashboard's Replay), and the replays of this one, oldest first. */
  replayOf: string | null;
  replays: string[];
};

const parseQuery = (raw: unknown) => parseWith(logQuerySchema, raw);

/** A page of the caller's entries, newest first; the cursor continues exactly after the last. */
export async function listLogs(userId: string, raw: unknown) {
  const q = parseQuery(raw);
  const { where, params } = logConditions(userId, q);
  if (q.cursor) {
    params.push(q.cursor.createdAt.toISOString(), q.cursor.id);
    // A row comparison, so the index on (…, created_at DESC, id DESC) starts right at the cursor.
    where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(q.limit + 1);
  const rows = await sql().query<SummaryRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM log_entries WHERE ${where.join(' AND ')}
     ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
  const hasMore = rows.length > q.limit;
  const items = rows.slice(0, q.limit).map(entryOf);
  const last = items.at(-1);
  return {
    items,
    limit: q.limit,
    nextCursor: hasMore && last ? encodeCursor(last.createdAt, last.id) : null,
    hasMore,
  };
}

/** One entry with its attempts and the provider payloads. Another user's entry is a 404. */
export async function getLog(userId: string, id: string): Promise<LogEntryDetail> {
  const [row] = isUuid(id)
    ? await sql().query<DetailRow>(
        `SELECT ${SUMMARY_COLUMNS}, attempts, metadata, provider_request, provider_response, client_request,
           (SELECT jsonb_agg(jsonb_build_object('index', m."index", 'mimeType', m.mime_type,
                     'bytes', octet_length(m.data)) ORDER BY m."index")
            FROM log_media m WHERE m.log_entry_id = log_entries.id) AS media,
           replay_of,
           (SELECT array_agg(r.id ORDER BY r.created_at, r.id) FROM log_entries r
            WHERE r.replay_of = log_entries.id AND r.user_id = log_entries.user_id) AS replays
         FROM log_entries WHERE id = $1::uuid AND user_id = $2::uuid`,
        [id, userId],
      )
    : [];
  if (!row) throw new NotFoundError('Log entry');
  return {
    ...entryOf(row),
    attempts: row.attempts,
    metadata: row.metadata,
    providerRequest: row.provider_request,
    providerResponse: row.provider_response,
    clientRequest: row.client_request ?? null,
    media: (row.media ?? []).map((m) => ({ ...m, url: mediaUrl(row.id, m.index) })),
    replayOf: row.replay_of ?? null,
    replays: row.replays ?? [],
  };
}

/** One stored file of the caller's entry, or a 404 for anyone else's or none. */
export async function getLogMedia(
  userId: string,
  id: string,
  index: string,
): Promise<{ mimeType: string; data: Uint8Array }> {
  const i = /^\d{1,4}$/.test(index) ? Number(index) : -1;
  const [row] =
    isUuid(id) && i >= 0
      ? await sql().query<{ mime_type: string; data: Uint8Array }>(
          `SELECT mime_type, data FROM log_media
           WHERE log_entry_id = $1::uuid AND "index" = $2 AND user_id = $3::uuid`,
          [id, i, userId],
        )
      : [];
  if (!row) throw new NotFoundError('Media');
  return { mimeType: row.mime_type, data: row.data };
}

const windowFields = {
  gateId: logFilterFields.gateId,
  since: logFilterFields.since,
  until: logFilterFields.until,
};

export const overviewQuerySchema = z.strictObject(windowFields).refine(sinceBeforeUntil, untilIssue);

export const seriesQuerySchema = z
  .strictObject({ ...windowFields, bucket: z.enum(['hour', 'day']).optional() })
  .refine(sinceBeforeUntil, untilIssue);

function parseWindow<S extends typeof overviewQuerySchema | typeof seriesQuerySchema>(
  schema: S,
  raw: unknown,
) {
  const data = parseWith(schema, raw) as z.output<S>;
  const until = data.until ?? new Date(Date.now() + 60_000);
  // A window ending in the range's first month starts where the range does.
  const since = data.since ?? new Date(Math.max(until.getTime() - 30 * DAY_MS, EARLIEST_DATE.getTime()));
  return { ...data, since, until };
}

/** How many keys, and end users, the overview names; the rest are summed as "other". */
export const SPENDING_TOP = 10;

/** One key's or end user's requests and cost over the window (null: none, a dashboard request). */
export type SpendingShare = { id: string | null; name: string | null; requests: number; costUsd: number };
/** The top spenders, and the rest summed: how many they are, their requests and cost. */
export type SpendingBreakdown = {
  top: SpendingShare[];
  other: { count: number; requests: number; costUsd: number };
};

type Window = { since: Date; until: Date; gateId?: string | undefined };

/**
 * Requests and cost per API key (`api_key_id`, named as its newest entry has it) or per end user
 * over the exact window, read from the entries (the hourly totals know neither), the most
 * expensive first.
 */
async function spendingBy(
  userId: string,
  w: Window,
  by: 'api_key_id' | 'end_user',
): Promise<SpendingBreakdown> {
  const params: unknown[] = [userId, w.since.toISOString(), w.until.toISOString(), SPENDING_TOP];
  if (w.gateId) params.push(w.gateId);
  const name = by === 'api_key_id' ? '(array_agg(api_key_name ORDER BY created_at DESC))[1]' : 'NULL::text';
  const rows = await sql().query<{
    id: string | null;
    name: string | null;
    requests: string | number | null;
    cost: string | number | null;
    other: boolean;
    count: string | number;
    r: string | number;
  }>(
    `WITH g AS (
       SELECT ${by}::text AS id, ${name} AS name, count(*) AS requests, sum(cost_usd) AS cost
       FROM log_entries
       WHERE user_id = $1::uuid AND created_at >= $2::timestamptz AND created_at < $3::timestamptz
         ${w.gateId ? 'AND gate_id = $5::uuid' : ''}
       GROUP BY ${by}
     ), ranked AS (
       SELECT *, row_number() OVER (ORDER BY cost DESC, requests DESC, id NULLS LAST) AS r FROM g
     )
     SELECT id, name, requests, cost, false AS other, 1 AS count, r FROM ranked WHERE r <= $4
     UNION ALL
     SELECT NULL, NULL, sum(requests), sum(cost), true, count(*), 0 FROM ranked WHERE r > $4`,
    params,
  );
  const share = (r: (typeof rows)[number]) => ({
    requests: Number(r.requests ?? 0),
    costUsd: Number(r.cost ?? 0),
  });
  const top = rows
    .filter((r) => !r.other)
    .sort((a, b) => Number(a.r) - Number(b.r))
    .map((r) => ({ id: r.id, name: r.name, ...share(r) }));
  const rest = rows.find((r) => r.other);
  return {
    top,
    other: { count: Number(rest?.count ?? 0), ...(rest ? share(rest) : { requests: 0, costUsd: 0 }) },
  };
}

/**
 * Totals over a window (default: the last 30 days) from the hourly totals, so the cost does not
 * grow with the log: whole hours, the first and last counted whole. The spending by key and by
 * end user comes from the entries, over the window exactly.
 */
export async function logOverview(userId: string, raw: unknown) {
  const w = parseWindow(overviewQuerySchema, raw);
  const params: unknown[] = [userId, w.since.toISOString(), w.until.toISOString()];
  if (w.gateId) params.push(w.gateId);
  const gateFilter = w.gateId ? 'AND gate_id = $4::uuid' : '';
  const [totals] = await sql().query<{
    requests: string | number | null;
    errors: string | number | null;
    cost: string | number | null;
    latency: string | number | null;
    gates: string | number;
  }>(
    `SELECT sum(requests) AS requests, sum(errors) AS errors, sum(cost_usd) AS cost,
            sum(latency_ms_sum) AS latency, count(DISTINCT gate_id) AS gates
     FROM log_rollups
     WHERE user_id = $1::uuid AND hour >= date_trunc('hour', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
       AND hour < $3::timestamptz ${gateFilter}`,
    params,
  );
  const recent = await listLogs(userId, {
    limit: 10,
    ...(w.gateId && { gateId: w.gateId }),
    since: w.since.toISOString(),
    until: w.until.toISOString(),
  });
  const [byKey, byEndUser] = await Promise.all([
    spendingBy(userId, w, 'api_key_id'),
    spendingBy(userId, w, 'end_user'),
  ]);
  const requests = Number(totals?.requests ?? 0);
  return {
    totalRequests: requests,
    failedRequests: Number(totals?.errors ?? 0),
    totalCostUsd: Number(totals?.cost ?? 0),
    avgLatencyMs: requests > 0 ? Math.round(Number(totals?.latency ?? 0) / requests) : 0,
    activeGates: Number(totals?.gates ?? 0),
    since: w.since,
    until: w.until,
    recentRequests: recent.items,
    spendingByKey: byKey,
    spendingByEndUser: byEndUser,
  };
}

/**
 * Requests, errors, cost and latency per hour or day for the charts. Counts and cost come from the
 * hourly totals; the latency percentiles need the entries themselves, read over the window only.
 */
export async function logSeries(userId: string, raw: unknown) {
  const w = parseWindow(seriesQuerySchema, raw);
  const bucket = w.bucket ?? (w.until.getTime() - w.since.getTime() > 3 * DAY_MS ? 'day' : 'hour');
  const params: unknown[] = [userId, w.since.toISOString(), w.until.toISOString(), bucket];
  if (w.gateId) params.push(w.gateId);
  const gateFilter = w.gateId ? 'AND gate_id = $5::uuid' : '';
  const trunc = (col: string) => `date_trunc($4, ${col} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
  const rows = await sql().query<{
    bucket: Date | string;
    requests: string | number;
    errors: string | number;
    cost: string | number;
    p50: number | null;
    p95: number | null;
  }>(
    `WITH totals AS (
       SELECT ${trunc('hour')} AS bucket, sum(requests) AS requests, sum(errors) AS errors, sum(cost_usd) AS cost
       FROM log_rollups
       WHERE user_id = $1::uuid AND hour >= ${trunc('$2::timestamptz')} AND hour < $3::timestamptz ${gateFilter}
       GROUP BY 1
     ), latency AS (
       SELECT ${trunc('created_at')} AS bucket,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95
       FROM log_entries
       WHERE user_id = $1::uuid AND created_at >= ${trunc('$2::timestamptz')} AND created_at < $3::timestamptz ${gateFilter}
       GROUP BY 1
     )
     SELECT t.bucket, t.requests, t.errors, t.cost, l.p50, l.p95
     FROM totals t LEFT JOIN latency l ON l.bucket = t.bucket ORDER BY t.bucket`,
    params,
  );
  return {
    bucket,
    since: w.since,
    until: w.until,
    points: rows.map((r) => ({
      start: new Date(r.bucket),
      requests: Number(r.requests),
      errors: Number(r.errors),
      costUsd: Number(r.cost),
      p50LatencyMs: r.p50 === null ? null : Math.round(Number(r.p50)),
      p95LatencyMs: r.p95 === null ? null : Math.round(Number(r.p95)),
    })),
  };
}
