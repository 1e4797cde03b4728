/**
 * Reading the request log: pages of entries (keyset-paginated, newest first), one entry with its
 * payloads, the overview and the time series. Every query is scoped to its owner.
 */

import { EARLIEST_DATE, isAcceptedDate } from '@gatehouse/rules/dates';
import { isUuid } from '@gatehouse/rules/ids';
import { FAILURE_CLASSES, type FailureClass } from '@gatehouse/rules/logs';
import { z } from 'zod';
import { sql } from '../db/client.ts';
import { NotFoundError, parseWith } from './errors.ts';
import {
  FAILURE_CLASS_SQL,
  type LogFilter,
  logConditions,
  logFilterFields,
  logFilterSchema,
  sinceBeforeUntil,
  untilIssue,
} from './logFilter.ts';

const HOUR_MS = 3_600_000;
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

const cursorField = z
  .string()
  .transform((c, ctx) => {
    const decoded = decodeCursor(c);
    if (!decoded) ctx.addIssue({ code: 'custom', message: 'must be a cursor from a previous page' });
    return decoded as { createdAt: Date; id: string };
  })
  .optional();

export const logQuerySchema = logFilterSchema({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: cursorField,
});

/** The filter alone: the summary's query. */
export const logSummaryQuerySchema = logFilterSchema({});

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const logExportQuerySchema = logFilterSchema({
  format: z.enum(EXPORT_FORMATS, 'must be csv or jsonl'),
});

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

/** Up to `limit` entries of the filter after the cursor, newest first. */
async function pageOf(
  userId: string,
  filter: LogFilter,
  cursor: { createdAt: Date; id: string } | undefined,
  limit: number,
  columns = SUMMARY_COLUMNS,
) {
  const { where, params } = logConditions(userId, filter);
  if (cursor) {
    params.push(cursor.createdAt.toISOString(), cursor.id);
    // A row comparison, so the index on (…, created_at DESC, id DESC) starts right at the cursor.
    where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(limit);
  return sql().query<SummaryRow & { metadata?: unknown }>(
    `SELECT ${columns} FROM log_entries WHERE ${where.join(' AND ')}
     ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
}

/** A page of the caller's entries, newest first; the cursor continues exactly after the last. */
export async function listLogs(userId: string, raw: unknown) {
  const q = parseQuery(raw);
  const rows = await pageOf(userId, q, q.cursor, q.limit + 1);
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

/** Past this many entries the summary's count is the planner's estimate, and says so. */
export const EXACT_COUNT_MAX = 10_000;

export type LogSummary = {
  /** The entries the filter matches: exact up to EXACT_COUNT_MAX, estimated past it. */
  count: number;
  /** The count and the sums are estimates (more than EXACT_COUNT_MAX entries match). */
  estimated: boolean;
  costUsd: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
};

/** The planner's row estimate for the filter (EXPLAIN, nothing read). */
async function estimatedCount(where: string[], params: unknown[]): Promise<number> {
  const [plan] = await sql().query<{ 'QUERY PLAN': unknown }>(
    `EXPLAIN (FORMAT JSON) SELECT 1 FROM log_entries WHERE ${where.join(' AND ')}`,
    params,
  );
  const raw = plan?.['QUERY PLAN'];
  const parsed = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: { 'Plan Rows': number } }];
  return Math.round(Number(parsed[0]?.Plan['Plan Rows'] ?? 0));
}

/**
 * How many entries the filter matches, and their cost and tokens: read exactly from the newest
 * EXACT_COUNT_MAX + 1 of them (on the list's index, so the cost is bounded whatever the log's
 * size). Past that the count is the planner's estimate (never less than what was read) and the
 * sums are the newest entries' averages times it, all flagged `estimated`.
 */
export async function logSummary(userId: string, raw: unknown): Promise<LogSummary> {
  const filter = parseWith(logSummaryQuerySchema, raw);
  const { where, params } = logConditions(userId, filter);
  const [row] = await sql().query<{
    n: string | number;
    cost: string | number | null;
    prompt: string | number | null;
    completion: string | number | null;
  }>(
    `SELECT count(*) AS n, sum(cost_usd) AS cost, sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion
     FROM (SELECT cost_usd, prompt_tokens, completion_tokens FROM log_entries WHERE ${where.join(' AND ')}
           ORDER BY created_at DESC, id DESC LIMIT ${EXACT_COUNT_MAX + 1}) AS newest`,
    params,
  );
  const read = Number(row?.n ?? 0);
  const sums = {
    costUsd: Number(row?.cost ?? 0),
    promptTokens: Number(row?.prompt ?? 0),
    completionTokens: Number(row?.completion ?? 0),
  };
  if (read <= EXACT_COUNT_MAX) {
    return {
      count: read,
      estimated: false,
      ...sums,
      totalTokens: sums.promptTokens + sums.completionTokens,
    };
  }
  const count = Math.max(read, await estimatedCount(where, params));
  const scale = count / read;
  const promptTokens = Math.round(sums.promptTokens * scale);
  const completionTokens = Math.round(sums.completionTokens * scale);
  return {
    count,
    estimated: true,
    costUsd: Math.round(sums.costUsd * scale * 1e8) / 1e8,
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
  };
}

/** Entries read per page of an export: each page is written out before the next is read. */
export const EXPORT_PAGE = 500;

export type ExportedEntry = LogEntrySummary & { metadata: unknown };

/**
 * Every entry the filter matches, newest first, page by page (keyset, on the list's index): the
 * caller writes each page out before the next is read, so an export of any size holds one page.
 * The query is checked before the first page: a bad parameter throws before anything is sent.
 */
export function exportLogs(userId: string, raw: unknown) {
  const q = parseWith(logExportQuerySchema, raw);
  async function* pages(): AsyncGenerator<ExportedEntry[]> {
    let cursor: { createdAt: Date; id: string } | undefined;
    for (;;) {
      const rows = await pageOf(userId, q, cursor, EXPORT_PAGE, `${SUMMARY_COLUMNS}, metadata`);
      if (rows.length === 0) return;
      const entries = rows.map((r) => ({ ...entryOf(r), metadata: r.metadata ?? null }));
      yield entries;
      if (rows.length < EXPORT_PAGE) return;
      const last = entries.at(-1) as ExportedEntry;
      cursor = { createdAt: last.createdAt, id: last.id };
    }
  }
  return { format: q.format, pages: pages() };
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
  model: logFilterFields.model,
  apiKeyId: logFilterFields.apiKeyId,
  endUser: logFilterFields.endUser,
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

/** How many gates, models, keys and end users the overview names; the rest are summed as "other". */
export const SPENDING_TOP = 10;

/**
 * One gate's, model's, key's or end user's figures over the window (id null: none, e.g. a
 * dashboard request has no key). Latency percentiles are of its requests' latencies.
 */
export type SpendingShare = {
  id: string | null;
  name: string | null;
  requests: number;
  errors: number;
  costUsd: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
};
/** The top ones, most expensive first, and the rest summed: how many they are, their figures. */
export type SpendingBreakdown = {
  top: SpendingShare[];
  other: { count: number; requests: number; errors: number; costUsd: number };
};

type Window = LogFilter & { since: Date; until: Date };

/** What a breakdown groups by, and how it names each group (as its newest entry has it). */
const DIMENSIONS = {
  gate: { key: 'gate_id::text', name: '(array_agg(gate_name ORDER BY created_at DESC))[1]' },
  model: { key: 'COALESCE(model_used, model_requested)', name: 'NULL::text' },
  apiKey: { key: 'api_key_id::text', name: '(array_agg(api_key_name ORDER BY created_at DESC))[1]' },
  endUser: { key: 'end_user', name: 'NULL::text' },
} as const;
export type Dimension = keyof typeof DIMENSIONS;

/** Only the gate filter is known to the hourly totals: a model, key or end user needs the entries. */
const needsEntries = (w: LogFilter) => Boolean(w.model || w.apiKeyId || w.endUser);

/**
 * The window's conditions over the entries: exact, or in whole hours (`hours`) to agree with the
 * hourly totals the figures beside them come from.
 */
function windowConditions(userId: string, w: Window, hours: boolean) {
  const since = hours ? new Date(Math.floor(w.since.getTime() / HOUR_MS) * HOUR_MS) : w.since;
  return logConditions(userId, {
    gateId: w.gateId,
    model: w.model,
    apiKeyId: w.apiKeyId,
    endUser: w.endUser,
    since,
    until: w.until,
  });
}

const PERCENTILES = `percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
  percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95`;
const ms = (value: string | number | null | undefined) =>
  value === null || value === undefined ? null : Math.round(Number(value));

/**
 * Requests, errors, cost and p50/p95 latency per gate, model (the one that answered, else the one
 * named), API key or end user over the window, read from the entries (the hourly totals know only
 * gates), the most expensive first: the top SPENDING_TOP, and the rest summed.
 */
export async function breakdownBy(
  userId: string,
  w: Window,
  by: Dimension,
  hours = false,
): Promise<SpendingBreakdown> {
  const { where, params } = windowConditions(userId, w, hours);
  params.push(SPENDING_TOP);
  const top = `$${params.length}`;
  const { key, name } = DIMENSIONS[by];
  const rows = await sql().query<{
    id: string | null;
    name: string | null;
    requests: string | number | null;
    errors: string | number | null;
    cost: string | number | null;
    p50: string | number | null;
    p95: string | number | null;
    other: boolean;
    count: string | number;
    r: string | number;
  }>(
    `WITH g AS (
       SELECT ${key} AS id, ${name} AS name, count(*) AS requests,
              count(*) FILTER (WHERE NOT success) AS errors, sum(cost_usd) AS cost, ${PERCENTILES}
       FROM log_entries WHERE ${where.join(' AND ')}
       GROUP BY 1
     ), ranked AS (
       SELECT *, row_number() OVER (ORDER BY cost DESC, requests DESC, id NULLS LAST) AS r FROM g
     )
     SELECT id, name, requests, errors, cost, p50, p95, false AS other, 1 AS count, r FROM ranked WHERE r <= ${top}
     UNION ALL
     SELECT NULL, NULL, sum(requests), sum(errors), sum(cost), NULL, NULL, true, count(*), 0
     FROM ranked WHERE r > ${top}`,
    params,
  );
  const figures = (r: (typeof rows)[number]) => ({
    requests: Number(r.requests ?? 0),
    errors: Number(r.errors ?? 0),
    costUsd: Number(r.cost ?? 0),
  });
  const shares = rows
    .filter((r) => !r.other)
    .sort((a, b) => Number(a.r) - Number(b.r))
    .map((r) => ({
      id: r.id,
      name: r.name,
      ...figures(r),
      p50LatencyMs: ms(r.p50),
      p95LatencyMs: ms(r.p95),
    }));
  const rest = rows.find((r) => r.other);
  return {
    top: shares,
    other: {
      count: Number(rest?.count ?? 0),
      ...(rest ? figures(rest) : { requests: 0, errors: 0, costUsd: 0 }),
    },
  };
}

/** Failed requests per failure class, every class named (0 when none). */
export type FailuresByClass = Record<FailureClass, number>;

async function failuresByClass(userId: string, w: Window, hours: boolean): Promise<FailuresByClass> {
  const { where, params } = windowConditions(userId, w, hours);
  const rows = await sql().query<{ class: FailureClass; n: string | number }>(
    `SELECT ${FAILURE_CLASS_SQL} AS class, count(*) AS n FROM log_entries
     WHERE ${where.join(' AND ')} AND NOT success GROUP BY 1`,
    params,
  );
  const counts = Object.fromEntries(FAILURE_CLASSES.map((c) => [c, 0])) as FailuresByClass;
  for (const row of rows) counts[row.class] = Number(row.n);
  return counts;
}

/**
 * Totals over a window (default: the last 30 days). Filtered by gate only, the counts and cost
 * come from the hourly totals, so their cost does not grow with the log: whole hours, the first
 * and last counted whole; the failure classes and latency percentiles beside them are read from
 * the entries over the same hours. Filtered by model, API key or end user, which the hourly totals
 * do not know, everything is read from the entries over the window exactly. The breakdowns by
 * gate, model, key and end user come from the entries over the window exactly.
 */
export async function logOverview(userId: string, raw: unknown) {
  const w = parseWindow(overviewQuerySchema, raw);
  const fromEntries = needsEntries(w);
  type Totals = {
    requests: string | number | null;
    errors: string | number | null;
    cost: string | number | null;
    latency: string | number | null;
    gates: string | number;
  };
  let totals: Totals | undefined;
  if (fromEntries) {
    const { where, params } = windowConditions(userId, w, false);
    [totals] = await sql().query<Totals>(
      `SELECT count(*) AS requests, count(*) FILTER (WHERE NOT success) AS errors, sum(cost_usd) AS cost,
              sum(latency_ms) AS latency, count(DISTINCT gate_id) AS gates
       FROM log_entries WHERE ${where.join(' AND ')}`,
      params,
    );
  } else {
    const params: unknown[] = [userId, w.since.toISOString(), w.until.toISOString()];
    if (w.gateId) params.push(w.gateId);
    const gateFilter = w.gateId ? 'AND gate_id = $4::uuid' : '';
    [totals] = await sql().query<Totals>(
      `SELECT sum(requests) AS requests, sum(errors) AS errors, sum(cost_usd) AS cost,
              sum(latency_ms_sum) AS latency, count(DISTINCT gate_id) AS gates
       FROM log_rollups
       WHERE user_id = $1::uuid AND hour >= date_trunc('hour', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
         AND hour < $3::timestamptz ${gateFilter}`,
      params,
    );
  }
  const hours = !fromEntries;
  const latency = async () => {
    const { where, params } = windowConditions(userId, w, hours);
    const [row] = await sql().query<{ p50: string | number | null; p95: string | number | null }>(
      `SELECT ${PERCENTILES} FROM log_entries WHERE ${where.join(' AND ')}`,
      params,
    );
    return { p50LatencyMs: ms(row?.p50), p95LatencyMs: ms(row?.p95) };
  };
  const recent = await listLogs(userId, {
    limit: 10,
    ...(w.gateId && { gateId: w.gateId }),
    ...(w.model && { model: w.model }),
    ...(w.apiKeyId && { apiKeyId: w.apiKeyId }),
    ...(w.endUser && { endUser: w.endUser }),
    since: w.since.toISOString(),
    until: w.until.toISOString(),
  });
  const [percentiles, failures, byGate, byModel, byKey, byEndUser] = await Promise.all([
    latency(),
    failuresByClass(userId, w, hours),
    breakdownBy(userId, w, 'gate'),
    breakdownBy(userId, w, 'model'),
    breakdownBy(userId, w, 'apiKey'),
    breakdownBy(userId, w, 'endUser'),
  ]);
  const requests = Number(totals?.requests ?? 0);
  return {
    totalRequests: requests,
    failedRequests: Number(totals?.errors ?? 0),
    failuresByClass: failures,
    totalCostUsd: Number(totals?.cost ?? 0),
    avgLatencyMs: requests > 0 ? Math.round(Number(totals?.latency ?? 0) / requests) : 0,
    ...percentiles,
    activeGates: Number(totals?.gates ?? 0),
    since: w.since,
    until: w.until,
    recentRequests: recent.items,
    byGate,
    byModel,
    spendingByKey: byKey,
    spendingByEndUser: byEndUser,
  };
}

/**
 * Requests, errors, cost and latency per hour or day for the charts. Filtered by gate only, counts
 * and cost come from the hourly totals; with a model, key or end user they come from the entries.
 * The latency percentiles always need the entries themselves, read over the window only.
 */
export async function logSeries(userId: string, raw: unknown) {
  const w = parseWindow(seriesQuerySchema, raw);
  const bucket = w.bucket ?? (w.until.getTime() - w.since.getTime() > 3 * DAY_MS ? 'day' : 'hour');
  // The filter's conditions without its window, which the buckets set here.
  const { where, params } = logConditions(userId, {
    gateId: w.gateId,
    model: w.model,
    apiKeyId: w.apiKeyId,
    endUser: w.endUser,
  });
  params.push(w.since.toISOString(), w.until.toISOString(), bucket);
  const [since, until, unit] = [params.length - 2, params.length - 1, params.length].map((n) => `$${n}`);
  const trunc = (col: string) => `date_trunc(${unit}, ${col} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
  const entries = `FROM log_entries WHERE ${where.join(' AND ')}
       AND created_at >= ${trunc(`${since}::timestamptz`)} AND created_at < ${until}::timestamptz`;
  const totals = needsEntries(w)
    ? `SELECT ${trunc('created_at')} AS bucket, count(*) AS requests,
              count(*) FILTER (WHERE NOT success) AS errors, sum(cost_usd) AS cost
       ${entries} GROUP BY 1`
    : `SELECT ${trunc('hour')} AS bucket, sum(requests) AS requests, sum(errors) AS errors, sum(cost_usd) AS cost
       FROM log_rollups
       WHERE user_id = $1::uuid AND hour >= ${trunc(`${since}::timestamptz`)} AND hour < ${until}::timestamptz
         ${w.gateId ? 'AND gate_id = $2::uuid' /* the filter's first value after the owner */ : ''}
       GROUP BY 1`;
  const rows = await sql().query<{
    bucket: Date | string;
    requests: string | number;
    errors: string | number;
    cost: string | number;
    p50: number | null;
    p95: number | null;
  }>(
    `WITH totals AS (${totals}), latency AS (
       SELECT ${trunc('created_at')} AS bucket, ${PERCENTILES} ${entries} GROUP BY 1
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
      p50LatencyMs: ms(r.p50),
      p95LatencyMs: ms(r.p95),
    })),
  };
}

export const gateStatsQuerySchema = z
  .strictObject({
    gateIds: z.array(z.uuid('must be gate UUIDs')).max(200, 'must name at most 200 gates').optional(),
    since: logFilterFields.since,
    until: logFilterFields.until,
  })
  .refine(sinceBeforeUntil, untilIssue);

/** One gate's figures over a window: for its page and its row in the gates list. */
export type GateStats = {
  gateId: string;
  requests: number;
  errors: number;
  costUsd: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
};

/**
 * Requests, errors and cost (from the hourly totals, whole hours) and p50/p95 latency (from the
 * entries over the same hours) of each of the caller's gates named, or of every gate with traffic,
 * over the window (default: the last 24 hours): one statement for a whole list of gates.
 */
export async function gateStats(userId: string, raw: unknown): Promise<GateStats[]> {
  const q = parseWith(gateStatsQuerySchema, raw);
  const until = q.until ?? new Date(Date.now() + 60_000);
  const since = q.since ?? new Date(until.getTime() - DAY_MS);
  const params: unknown[] = [
    userId,
    new Date(Math.floor(since.getTime() / HOUR_MS) * HOUR_MS).toISOString(),
    until.toISOString(),
  ];
  let gates = '';
  if (q.gateIds) {
    params.push(q.gateIds);
    gates = 'AND gate_id = ANY($4::uuid[])';
  }
  const rows = await sql().query<{
    gate_id: string;
    requests: string | number;
    errors: string | number;
    cost: string | number;
    p50: string | number | null;
    p95: string | number | null;
  }>(
    `WITH totals AS (
       SELECT gate_id, sum(requests) AS requests, sum(errors) AS errors, sum(cost_usd) AS cost
       FROM log_rollups
       WHERE user_id = $1::uuid AND hour >= $2::timestamptz AND hour < $3::timestamptz ${gates}
       GROUP BY gate_id
     ), latency AS (
       SELECT gate_id, ${PERCENTILES} FROM log_entries
       WHERE user_id = $1::uuid AND created_at >= $2::timestamptz AND created_at < $3::timestamptz ${gates}
       GROUP BY gate_id
     )
     SELECT t.gate_id::text AS gate_id, t.requests, t.errors, t.cost, l.p50, l.p95
     FROM totals t LEFT JOIN latency l ON l.gate_id = t.gate_id ORDER BY t.gate_id`,
    params,
  );
  return rows.map((r) => ({
    gateId: r.gate_id,
    requests: Number(r.requests),
    errors: Number(r.errors),
    costUsd: Number(r.cost),
    p50LatencyMs: ms(r.p50),
    p95LatencyMs: ms(r.p95),
  }));
}
