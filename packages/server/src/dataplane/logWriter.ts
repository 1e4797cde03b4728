/**
 * Writes log entries off the request path: queued, then inserted in batches. The queue is
 * bounded; when it is full the request that adds an entry waits for room (back-pressure) rather
 * than an entry being dropped. close() drains it, so a SIGTERM or SIGINT loses nothing. A database
 * that is away, or out of disk space, keeps them queued too: on a full disk they go out one at a
 * time, then in growing batches, as they fit (/metrics and one line in the process log say so).
 *
 * The files an answer carried (images, speech) go to log_media in the transaction that inserts
 * their entry, after it: the foreign key to the entry holds, and deleting the entry (retention,
 * the user's deletion) deletes them. An entry without media costs nothing more.
 */
import { sql } from '../db/client.ts';
import { LATENCY_BUCKETS, latencyBucketOf } from '../domain/modelStats.ts';
import { tsvectorOf } from '../domain/searchWords.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { jsonText } from '../providers/wireText.ts';
import { searchTextOf } from './logSearchText.ts';

export type LogEntryData = Prisma.LogEntryCreateManyInput;

/** A file stored beside its entry (the pipeline's MediaItem). */
export type StoredMedia = { mimeType: string; data: Uint8Array };

// Column, SQL type, and the LogEntryData field it comes from.
const COLUMNS: [string, string, keyof LogEntryData][] = [
  ['id', 'uuid', 'id'],
  ['user_id', 'uuid', 'userId'],
  ['api_key_id', 'uuid', 'apiKeyId'],
  ['api_key_name', 'text', 'apiKeyName'],
  ['end_user', 'text', 'endUser'],
  ['gate_id', 'uuid', 'gateId'],
  ['gate_name', 'text', 'gateName'],
  ['endpoint', 'text', 'endpoint'],
  ['model_requested', 'text', 'modelRequested'],
  ['model_used', 'text', 'modelUsed'],
  ['prompt_tokens', 'integer', 'promptTokens'],
  ['completion_tokens', 'integer', 'completionTokens'],
  ['tokens_estimated', 'boolean', 'tokensEstimated'],
  ['usage_note', 'text', 'usageNote'],
  ['cost_usd', 'numeric', 'costUsd'],
  ['latency_ms', 'integer', 'latencyMs'],
  ['success', 'boolean', 'success'],
  ['status_code', 'integer', 'statusCode'],
  ['error_code', 'text', 'errorCode'],
  ['error_message', 'text', 'errorMessage'],
  ['session_id', 'text', 'sessionId'],
  ['inferred_action', 'text', 'inferredAction'],
  ['tool_calls', 'jsonb', 'toolCalls'],
  ['tool_results', 'jsonb', 'toolResults'],
  ['attempts', 'jsonb', 'attempts'],
  ['ignored_overrides', 'text[]', 'ignoredOverrides'],
  ['spending_warning', 'boolean', 'spendingWarning'],
  ['stream', 'boolean', 'stream'],
  ['metadata', 'jsonb', 'metadata'],
  ['provider_request', 'jsonb', 'providerRequest'],
  ['provider_response', 'jsonb', 'providerResponse'],
  ['client_request', 'jsonb', 'clientRequest'],
  ['gate_session_id', 'uuid', 'gateSessionId'],
  ['hidden_tools', 'text[]', 'hiddenTools'],
  ['replay_of', 'uuid', 'replayOf'],
  ['created_at', 'timestamptz', 'createdAt'],
];

const DEFAULTS: Partial<Record<keyof LogEntryData, unknown>> = {
  promptTokens: 0,
  completionTokens: 0,
  tokensEstimated: false,
  costUsd: 0,
  latencyMs: 0,
  attempts: [],
  ignoredOverrides: [],
  hiddenTools: [],
  spendingWarning: false,
  stream: false,
};

// The whole batch travels as one JSON parameter and is unpacked by the database: one statement
// per batch, no per-row round trip and no ORM in the way on the hot path. A gate deleted while
// its entries waited in the queue leaves them with no gate_id (as deleting it does to the entries
// already written) rather than failing its foreign key and losing them; the totals keep its id.
// An agent session deleted meanwhile (with its gate) is let go the same way.
const LIST = COLUMNS.map(([c]) => `"${c}"`).join(', ');
const JOINED: Record<string, string> = { gate_id: 'g.id', gate_session_id: 's.id' };
const SELECTED = COLUMNS.map(([c]) => JOINED[c] ?? `x."${c}"`).join(', ');
// The search words (logSearchText.ts) travel as a ready tsvector (domain/searchWords.ts): reading
// one costs the database little, cutting the text into words (to_tsvector) cost it more than the row.
const INSERT_ENTRIES = `INSERT INTO log_entries (${LIST}, "search")
  SELECT ${SELECTED}, x.search_words::tsvector
  FROM jsonb_to_recordset($1::jsonb) AS x(${COLUMNS.map(([c, t]) => `"${c}" ${t}`).join(', ')}, search_words text)
  LEFT JOIN gates g ON g.id = x.gate_id
  LEFT JOIN agent_sessions s ON s.id = x.gate_session_id`;

/**
 * The foreign keys of log_entries that INSERT_ENTRIES resolves itself: it looks up each entry's
 * gate and agent session and stores NULL for one that is gone. On PGlite it is the only writer
 * of entries and PGlite runs one statement at a time, so nothing can be deleted between its
 * look-up and its insert, and PostgreSQL's check of these keys (a query per key per row, at the
 * statement's end; with the account's, ~14 % of PGlite's thread under the bench's load) finds
 * nothing: there the checks on inserting or updating an entry are turned off for these two keys,
 * before a batch until that has been done once in the process (the data directory keeps it; it is
 * done again at every start). The account's key stays checked, and the triggers that clear
 * entries when their gate or session goes belong to those tables and stay on. PostgreSQL keeps
 * every check: other connections delete concurrently.
 */
const RESOLVED_KEYS = ['log_entries_gate_id_fkey', 'log_entries_gate_session_id_fkey'];
const RESOLVED_KEY_CHECKS_OFF = `DO $$
DECLARE t record;
BEGIN
  FOR t IN SELECT tg.tgname FROM pg_trigger tg JOIN pg_constraint c ON c.oid = tg.tgconstraint
    WHERE tg.tgrelid = 'log_entries'::regclass AND c.conrelid = 'log_entries'::regclass
      AND c.conname IN (${RESOLVED_KEYS.map((k) => `'${k}'`).join(', ')}) AND tg.tgenabled <> 'D'
  LOOP
    EXECUTE format('ALTER TABLE log_entries DISABLE TRIGGER %I', t.tgname);
  END LOOP;
END $$`;
// The hourly totals, grouped here and added in the same transaction as the entries, so they can
// never disagree with them. (One statement doing both, grouping in SQL, cost the embedded
// database several times as much.) Costs are summed by the database, rounded as the entries
// store them, so the totals match the entries to the last digit.
const ADD_ROLLUPS = `INSERT INTO log_rollups AS r (user_id, gate_id, hour, requests, errors, cost_usd, latency_ms_sum, prompt_tokens, completion_tokens)
  SELECT y.user_id, y.gate_id, y.hour, y.requests, y.errors,
         (SELECT coalesce(sum(c::numeric(18, 8)), 0) FROM jsonb_array_elements_text(y.costs) c),
         y.latency_ms_sum, y.prompt_tokens, y.completion_tokens
  FROM jsonb_to_recordset($1::jsonb) AS y(user_id uuid, gate_id uuid, hour timestamptz, requests integer,
    errors integer, costs jsonb, latency_ms_sum bigint, prompt_tokens bigint, completion_tokens bigint)
  ON CONFLICT (user_id, gate_id, hour) DO UPDATE SET
    requests = r.requests + excluded.requests, errors = r.errors + excluded.errors,
    cost_usd = r.cost_usd + excluded.cost_usd, latency_ms_sum = r.latency_ms_sum + excluded.latency_ms_sum,
    prompt_tokens = r.prompt_tokens + excluded.prompt_tokens,
    completion_tokens = r.completion_tokens + excluded.completion_tokens`;

// The same per model tried (every attempt, a fallback's too), for the Architect's observed figures;
// the latency histograms are added bucket by bucket.
const ADD_MODEL_ROLLUPS = `INSERT INTO model_rollups AS r (user_id, gate_id, model, hour, attempts, errors, cost_usd, latency_ms_sum, latency_hist, prompt_tokens, completion_tokens)
  SELECT y.user_id, y.gate_id, y.model, y.hour, y.attempts, y.errors,
         (SELECT coalesce(sum(c::numeric(18, 8)), 0) FROM jsonb_array_elements_text(y.costs) c),
         y.latency_ms_sum, ARRAY(SELECT h::int FROM jsonb_array_elements_text(y.hist) WITH ORDINALITY AS e(h, i) ORDER BY i), y.prompt_tokens, y.completion_tokens
  FROM jsonb_to_recordset($1::jsonb) AS y(user_id uuid, gate_id uuid, model text, hour timestamptz, attempts integer,
    errors integer, costs jsonb, latency_ms_sum bigint, hist jsonb, prompt_tokens bigint, completion_tokens bigint)
  ON CONFLICT (user_id, gate_id, model, hour) DO UPDATE SET
    attempts = r.attempts + excluded.attempts, errors = r.errors + excluded.errors,
    cost_usd = r.cost_usd + excluded.cost_usd, latency_ms_sum = r.latency_ms_sum + excluded.latency_ms_sum,
    latency_hist = ARRAY(SELECT a + b FROM unnest(r.latency_hist, excluded.latency_hist) WITH ORDINALITY AS t(a, b, i) ORDER BY i),
    prompt_tokens = r.prompt_tokens + excluded.prompt_tokens,
    completion_tokens = r.completion_tokens + excluded.completion_tokens`;

// The batch's media travel as one JSON parameter too, their bytes in base64.
const INSERT_MEDIA = `INSERT INTO log_media (log_entry_id, "index", user_id, mime_type, data, created_at)
  SELECT x.log_entry_id, x.i, x.user_id, x.mime_type, decode(x.data, 'base64'), x.created_at
  FROM jsonb_to_recordset($1::jsonb) AS x(log_entry_id uuid, i integer, user_id uuid, mime_type text,
    data text, created_at timestamptz)`;

const HOUR_MS = 3_600_000;

type Rollup = {
  user_id: unknown;
  gate_id: unknown;
  hour: string;
  requests: number;
  errors: number;
  costs: unknown[];
  latency_ms_sum: number;
  prompt_tokens: number;
  completion_tokens: number;
};

/** The batch's totals per user, gate and UTC hour (entries with no gate have none). */
function rollupsOf(rows: Queued[]): Rollup[] {
  const groups = new Map<string, Rollup>();
  for (const row of rows) {
    if (row.gate_id === null || row.gate_id === undefined) continue;
    const hour = row.hour;
    const key = `${row.user_id}|${row.gate_id}|${hour}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        user_id: row.user_id,
        gate_id: row.gate_id,
        hour,
        requests: 0,
        errors: 0,
        costs: [],
        latency_ms_sum: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
      };
      groups.set(key, group);
    }
    group.requests += 1;
    if (!row.success) group.errors += 1;
    group.costs.push(row.cost_usd);
    group.latency_ms_sum += Number(row.latency_ms);
    group.prompt_tokens += Number(row.prompt_tokens);
    group.completion_tokens += Number(row.completion_tokens);
  }
  return [...groups.values()];
}

type ModelRollup = {
  user_id: unknown;
  gate_id: unknown;
  model: string;
  hour: string;
  attempts: number;
  errors: number;
  costs: unknown[];
  latency_ms_sum: number;
  hist: number[];
  prompt_tokens: number;
  completion_tokens: number;
};

/** The batch's figures per user, gate, model tried and UTC hour; the answer's cost and tokens go to the model that gave it. */
function modelRollupsOf(rows: Queued[]): ModelRollup[] {
  const groups = new Map<string, ModelRollup>();
  for (const row of rows) {
    if (row.gate_id === null || row.gate_id === undefined || !row.attempts) continue;
    const hour = row.hour;
    for (const attempt of row.attempts) {
      const key = `${row.user_id}|${row.gate_id}|${attempt.model}|${hour}`;
      let group = groups.get(key);
      if (!group) {
        group = {
          user_id: row.user_id,
          gate_id: row.gate_id,
          model: attempt.model,
          hour,
          attempts: 0,
          errors: 0,
          costs: [],
          latency_ms_sum: 0,
          hist: new Array<number>(LATENCY_BUCKETS).fill(0),
          prompt_tokens: 0,
          completion_tokens: 0,
        };
        groups.set(key, group);
      }
      group.attempts += 1;
      group.latency_ms_sum += attempt.latencyMs;
      (group.hist[latencyBucketOf(attempt.latencyMs)] as number) += 1;
      if (!attempt.ok) {
        group.errors += 1;
        // What a failed attempt was charged is its own model's cost.
        if (attempt.costUsd) group.costs.push(attempt.costUsd);
        continue;
      }
      // The entry's cost less what its failed attempts were charged: the answer's own.
      group.costs.push(row.cost_usd);
      for (const other of row.attempts) if (!other.ok && other.costUsd) group.costs.push(-other.costUsd);
      group.prompt_tokens += Number(row.prompt_tokens);
      group.completion_tokens += Number(row.completion_tokens);
    }
  }
  return [...groups.values()];
}

/** The attempts' model, outcome and latency, as the model totals need them; absent when none was made. */
function attemptsOf(entry: LogEntryData): Queued['attempts'] {
  if (!Array.isArray(entry.attempts) || entry.attempts.length === 0) return undefined;
  const out: NonNullable<Queued['attempts']> = [];
  for (const a of entry.attempts as {
    model?: unknown;
    ok?: unknown;
    latencyMs?: unknown;
    costUsd?: unknown;
  }[]) {
    if (typeof a?.model !== 'string') continue;
    const latency = Number(a.latencyMs);
    const cost = Number(a.costUsd);
    out.push({
      model: a.model,
      ok: a.ok === true,
      latencyMs: Number.isFinite(latency) && latency > 0 ? Math.round(latency) : 0,
      costUsd: Number.isFinite(cost) && cost > 0 ? cost : 0,
    });
  }
  return out.length > 0 ? out : undefined;
}

/**
 * JSON escapes PostgreSQL refuses in jsonb and text (NUL, and a surrogate without its other half),
 * found past escaped backslashes, which the first alternative consumes; well-formed pairs are the
 * second and stay. Clients may send such text and providers may answer it: the stored copy has
 * U+FFFD in its place, so the entry is written instead of refused.
 */
const UNSTORABLE_ESCAPE =
  /\\(?:\\|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2}))/g;

/** `json` with NUL and unpaired surrogates replaced by U+FFFD; the same string when it has none. */
export function storableJson(json: string): string {
  if (!json.includes('\\u')) return json;
  return json.replace(UNSTORABLE_ESCAPE, (seq) => (seq === '\\\\' || seq.length === 12 ? seq : '\\ufffd'));
}

/** Each column's key as it opens its member of the row's JSON object. */
const KEYS = COLUMNS.map(([column], i) => `${i === 0 ? '{' : ','}"${column}":`);
const INTEGER_COLUMNS = COLUMNS.map(([, type]) => type === 'integer');
const INT_MAX = 2_147_483_647;

/**
 * A queued entry: its row already written as JSON, and the few fields the hourly totals need. One
 * flat string per entry is cheap for the garbage collector to keep until the batch goes out; the
 * entry's objects (the provider's request and response among them) are garbage at once.
 */
type Queued = {
  id: string;
  json: string;
  /** Its text had characters the database cannot store (see storableJson). */
  sanitized: boolean;
  user_id: string;
  gate_id: string | null;
  created_at: string;
  /** The hour it falls in, as the hourly totals key it. */
  hour: string;
  success: boolean;
  cost_usd: unknown;
  latency_ms: unknown;
  prompt_tokens: unknown;
  completion_tokens: unknown;
  /** The models tried, for the per-model totals. */
  attempts?: { model: string; ok: boolean; latencyMs: number; costUsd: number }[] | undefined;
  /** The answer's files, written after the entry; absent when it carried none. */
  media?: StoredMedia[];
};

/**
 * The entry as the row's JSON, written member by member: the provider's request and response go
 * in as the text that crossed the wire (wireText.ts) rather than being serialised again.
 */
function queued(entry: LogEntryData, media?: StoredMedia[]): Queued {
  const id = entry.id ?? crypto.randomUUID();
  const created = new Date((entry.createdAt as Date | string | undefined) ?? Date.now());
  const createdAt = created.toISOString();
  let json = '';
  for (let i = 0; i < COLUMNS.length; i++) {
    const field = (COLUMNS[i] as (typeof COLUMNS)[number])[2];
    let value =
      field === 'id' ? id : field === 'createdAt' ? createdAt : (entry[field] ?? DEFAULTS[field] ?? null);
    // A provider's usage figure past the column's range must not cost the entry.
    if (typeof value === 'number' && INTEGER_COLUMNS[i])
      value = Math.min(Math.max(Math.round(value), 0), INT_MAX);
    json += KEYS[i] + (value === null ? 'null' : jsonText(value));
  }
  const text = searchTextOf(entry);
  const words = text && tsvectorOf(text);
  if (words) json += `,"search_words":${JSON.stringify(words)}`;
  const row = `${json}}`;
  const storable = storableJson(row);
  return {
    id,
    json: storable,
    sanitized: storable !== row,
    user_id: entry.userId,
    gate_id: entry.gateId ?? null,
    created_at: createdAt,
    hour: new Date(Math.floor(created.getTime() / HOUR_MS) * HOUR_MS).toISOString(),
    success: entry.success,
    cost_usd: entry.costUsd ?? DEFAULTS.costUsd,
    latency_ms: entry.latencyMs ?? DEFAULTS.latencyMs,
    prompt_tokens: entry.promptTokens ?? DEFAULTS.promptTokens,
    completion_tokens: entry.completionTokens ?? DEFAULTS.completionTokens,
    attempts: attemptsOf(entry),
    ...(media && media.length > 0 && { media }),
  };
}

const mediaBytesOf = (row: { media?: StoredMedia[] | undefined }) =>
  row.media?.reduce((n, m) => n + m.data.byteLength, 0) ?? 0;

function mediaRowsOf(entries: Queued[]): string | null {
  const rows: string[] = [];
  for (const e of entries) {
    for (const [i, m] of (e.media ?? []).entries()) {
      rows.push(
        JSON.stringify({
          log_entry_id: e.id,
          i,
          user_id: e.user_id,
          mime_type: m.mimeType,
          data: Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength).toString('base64'),
          created_at: e.created_at,
        }),
      );
    }
  }
  return rows.length > 0 ? `[${rows.join(',')}]` : null;
}

/**
 * The entry without its payload (what the client and provider sent, free-form and possibly not
 * JSON at all), a note in the provider's answer saying why: its cost, tokens and status are kept.
 */
function withoutPayload(entry: LogEntryData, error: unknown): LogEntryData {
  const {
    providerRequest: _request,
    providerResponse: _response,
    clientRequest: _client,
    metadata: _metadata,
    toolCalls: _calls,
    toolResults: _results,
    ...facts
  } = entry;
  const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 200);
  return { ...facts, providerResponse: { gatehouse: `payload not stored: ${reason}` } };
}

/**
 * The entry queued as it is, or without its payload when a value in it cannot be written out as
 * JSON (a cycle, a BigInt); null when even that fails.
 */
function encoded(
  entry: LogEntryData,
  media: StoredMedia[] | undefined,
): { row: Queued; payloadDropped: boolean } | null {
  try {
    return { row: queued(entry, media), payloadDropped: false };
  } catch (error) {
    console.error(
      'log writer: payload could not be encoded, the entry is stored without it',
      entry.id,
      error,
    );
    try {
      return { row: queued(withoutPayload(entry, error), media), payloadDropped: true };
    } catch (again) {
      console.error('log writer: entry could not be encoded', entry.id, again);
      return null;
    }
  }
}

/**
 * The entries one statement of a batch takes on PGlite while the writer keeps up. A statement
 * holds the database's thread for its whole length (~70 µs an entry), and the kernel lets a
 * running thread go on for a slice before a thread just woken may have its core: the request
 * thread, its client and its upstream wait behind a long statement. PGlite's thread lets them run
 * between statements (pglite-worker.mjs). Measured on 2 cores, one connection at a time through a
 * block gate: p99 5.3–6.2 ms with the batch as one statement, 3.1–4.1 ms in pieces of 16; at
 * 1,000 req/s 5.5–5.6 and 3.1–4.2 ms. A piece costs the thread ~200 µs of its own, so when the
 * writer is behind (a full batch, or more entries waiting after it: throughput counts more than
 * one request's wait) the entries go as one statement. PostgreSQL runs statements in a process of
 * its own: pieces there only add round trips.
 */
const PIECE = 16;

/** Per database: RESOLVED_KEY_CHECKS_OFF done, or failed (and said so) and to be tried again. */
const resolvedKeyChecks = new WeakMap<object, 'done' | 'failed'>();

/**
 * RESOLVED_KEY_CHECKS_OFF on PGlite, before a batch until it has been done. It only saves time:
 * while it fails the log is written with the checks on (the process log says why, once).
 */
async function resolvedKeyChecksOff(): Promise<void> {
  const db = sql();
  const state = resolvedKeyChecks.get(db);
  if (db.kind !== 'pglite' || state === 'done') return;
  try {
    await db.exec(RESOLVED_KEY_CHECKS_OFF);
    resolvedKeyChecks.set(db, 'done');
  } catch (error) {
    if (state !== 'failed') {
      console.error(
        'log writer: the foreign-key checks it makes redundant stay on for now:',
        firstLine(error),
      );
    }
    resolvedKeyChecks.set(db, 'failed');
  }
}

async function insert(entries: Queued[], behind: boolean): Promise<void> {
  await resolvedKeyChecksOff();
  const media = mediaRowsOf(entries);
  const whole = behind || sql().kind !== 'pglite';
  const size = whole ? Math.max(entries.length, 1) : PIECE;
  const pieces: Queued[][] = [];
  for (let at = 0; at < entries.length; at += size) pieces.push(entries.slice(at, at + size));
  await sql().transaction([
    ...pieces.map((piece) => ({ sql: INSERT_ENTRIES, params: [`[${piece.map((e) => e.json).join(',')}]`] })),
    ...(media ? [{ sql: INSERT_MEDIA, params: [media] }] : []),
    { sql: ADD_ROLLUPS, params: [JSON.stringify(rollupsOf(entries))] },
    { sql: ADD_MODEL_ROLLUPS, params: [JSON.stringify(modelRollupsOf(entries))] },
  ]);
}

/** Errors about the data itself (SQLSTATE classes 22 and 23), as opposed to the database being away. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}

/**
 * The database refused the write for want of disk space: PostgreSQL's disk_full (SQLSTATE 53100),
 * which PGlite raises too when its directory's filesystem is full ("could not extend file …: No
 * space left on device"), or ENOSPC from underneath it.
 */
function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '53100' || code === 'ENOSPC') return true;
  return error instanceof Error && error.message.includes('No space left on device');
}

/** A foreign key whose row was deleted while the statement ran (SQLSTATE 23503). */
const isGoneMeanwhile = (error: unknown) => (error as { code?: unknown } | null)?.code === '23503';

/** Why a batch was not written, as /metrics counts it. */
export type WriteFailure = 'disk_full' | 'bad_entry' | 'unavailable';
const failureOf = (error: unknown): WriteFailure =>
  isDiskFull(error) ? 'disk_full' : isDataError(error) ? 'bad_entry' : 'unavailable';

const firstLine = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 300);

export type LogWriterOptions = {
  batchSize?: number;
  intervalMs?: number;
  maxQueue?: number;
  /** The media bytes the queue may hold before adding waits for room, like maxQueue. */
  maxQueuedMediaBytes?: number;
  /**
   * The characters of encoded entries (their JSON) the queue may hold before adding waits for
   * room, like maxQueue: a coding agent's entries are ~100 kB each, so a bound in entries alone
   * let the queue hold gigabytes.
   */
  maxQueuedChars?: number;
  /**
   * The characters of JSON one batch carries at most (it takes at least one entry, however
   * large): the database reads a statement's whole parameter at once, and PGlite's memory, once
   * grown, is never given back.
   */
  maxBatchChars?: number;
};

export function createLogWriter(opts: LogWriterOptions = {}) {
  const batchSize = opts.batchSize ?? 500;
  const intervalMs = opts.intervalMs ?? 100;
  const maxQueue = opts.maxQueue ?? 20_000;
  const maxMediaBytes = opts.maxQueuedMediaBytes ?? 64 * 1024 * 1024;
  const maxQueuedChars = opts.maxQueuedChars ?? 64 * 1024 * 1024;
  const maxBatchChars = opts.maxBatchChars ?? 4 * 1024 * 1024;
  let queue: Queued[] = [];
  /** The characters of the queue's JSON (its entries' `json`). */
  let queuedChars = 0;
  /**
   * Entries added and not encoded yet. Encoding a row is a good part of a request's own work: it
   * waits for the next turn of the event loop (setImmediate), after the answer has been written.
   */
  let added: { entry: LogEntryData; media: StoredMedia[] | undefined }[] = [];
  let encoding: NodeJS.Immediate | null = null;
  /** The media bytes of the entries added and queued, until they are written. */
  let mediaBytes = 0;
  let writing: Promise<void> | null = null;
  let closed = false;
  let written = 0;
  /**
   * Entries whose text was made storable, entries stored without a payload that could not be
   * encoded, and entries not stored at all (refused by the database even alone, or not encodable).
   */
  let sanitized = 0;
  let payloadDropped = 0;
  let refused = 0;
  /** Batches the database did not take, by why. */
  const writeFailures: Record<WriteFailure, number> = { disk_full: 0, bad_entry: 0, unavailable: 0 };

  /** Failed attempts in a row that waited before the next (the database away, or no room even for one entry). */
  let failures = 0;
  /**
   * The entries the next batch takes: the batch size, doubled back after each batch written once
   * a refusal has cut it. A batch too large for the room left goes out one entry at a time and
   * grows again as they fit, rather than being retried whole for as long as the disk stays short
   * of its full size. It starts again from one rather than from half: a refused attempt keeps
   * the pages it managed to add until a vacuum (PGlite has no autovacuum), so each larger
   * attempt that fails uses up room a smaller one could have had. On PGlite with 3 MB free and
   * entries of 0.8 MB, halving (8, 4, 2, 1) stored none, the 4 having taken the 3 MB; one at a
   * time stored three. A batch refused for an entry in it is halved, to find that entry in a
   * few attempts.
   */
  let limit = batchSize;
  /** Entries tried once more alone after a foreign key they named went away meanwhile. */
  const retriedAlone = new Set<unknown>();
  /**
   * The writes are failing: since when, why, and how many attempts. The process log has one line
   * when it starts (or its reason changes) and one when everything waiting has been written,
   * however many retries come between.
   */
  let episode: { reason: WriteFailure; since: number; attempts: number } | null = null;

  /** Moves the added entries into the queue as rows (the answer stands whatever happens here). */
  function encodeAdded(): void {
    if (encoding) clearImmediate(encoding);
    encoding = null;
    const entries = added;
    added = [];
    for (const { entry, media } of entries) {
      const found = encoded(entry, media);
      if (!found) {
        refused += 1;
        mediaBytes -= mediaBytesOf({ media });
        continue;
      }
      if (found.payloadDropped) payloadDropped += 1;
      if (found.row.sanitized) sanitized += 1;
      queue.push(found.row);
      queuedChars += found.row.json.length;
    }
  }
  const pending = () => queue.length + added.length;
  /** How long the oldest entry not yet written has waited (0 when none waits). */
  function lagSeconds(): number {
    const oldest = queue[0]?.created_at ?? added[0]?.entry.createdAt;
    const since = oldest === undefined ? Number.NaN : new Date(oldest as string | Date).getTime();
    return Number.isFinite(since) ? Math.max(0, (Date.now() - since) / 1000) : 0;
  }

  /** Takes the first `count` entries off the queue, giving back their media bytes. */
  function shift(count: number): Queued[] {
    const gone = queue.slice(0, count);
    queue = queue.slice(count);
    mediaBytes -= gone.reduce((n, e) => n + mediaBytesOf(e), 0);
    queuedChars -= gone.reduce((n, e) => n + e.json.length, 0);
    return gone;
  }

  /**
   * The next batch: the first entries, at most `limit` of them and maxBatchChars of JSON (at
   * least one); `full` when a bound cut it rather than the queue's end.
   */
  function nextBatch(): { batch: Queued[]; full: boolean } {
    let count = 0;
    let chars = 0;
    while (count < queue.length && count < limit) {
      const size = (queue[count] as Queued).json.length;
      if (count > 0 && chars + size > maxBatchChars) break;
      chars += size;
      count += 1;
    }
    return { batch: queue.slice(0, count), full: count < queue.length || count >= batchSize };
  }
  /** A full batch waits: write now rather than on the timer. */
  const batchWaits = () => queue.length >= limit || queuedChars >= maxBatchChars;

  function failed(reason: WriteFailure, error: unknown): void {
    writeFailures[reason] += 1;
    if (reason === 'bad_entry') return; // the entry's own fault: said when it is refused
    if (episode?.reason === reason) {
      episode.attempts += 1;
      return;
    }
    episode = { reason, since: Date.now(), attempts: 1 };
    const code = (error as { code?: unknown } | null)?.code;
    const why = `${typeof code === 'string' ? `${code} ` : ''}${firstLine(error)}`;
    console.error(
      reason === 'disk_full'
        ? `log writer: the database is out of disk space (${why}); ${pending()} entries wait in memory (up to ${maxQueue}, or ${maxQueuedChars} characters of JSON, then requests wait for room) and are retried in smaller batches until they fit`
        : `log writer: cannot write (${why}); ${pending()} entries wait in memory (up to ${maxQueue}, or ${maxQueuedChars} characters of JSON, then requests wait for room) and are retried`,
    );
  }

  function recovered(): void {
    if (!episode || pending() > 0) return;
    const seconds = Math.round((Date.now() - episode.since) / 1000);
    console.error(
      `log writer: writing again after ${seconds} s (${episode.reason}, ${episode.attempts} attempts refused); every entry that waited is written`,
    );
    episode = null;
  }

  /**
   * Writes a batch, then more only while full batches wait: the entries that arrive during a
   * write wait for the next tick instead of going out a handful at a time, since each batch has
   * a fixed cost of its own. The parts of a batch just refused go out at once.
   */
  async function writeAll(): Promise<void> {
    let again = true;
    encodeAdded();
    while (queue.length > 0 && (again || batchWaits())) {
      again = false;
      const { batch, full } = nextBatch();
      try {
        // Behind: a full batch, or more waiting after this one (a bound or a refusal cut the batch).
        await insert(batch, full);
        for (const e of batch) retriedAlone.delete(e.id);
        shift(batch.length);
        written += batch.length;
        failures = 0;
        limit = Math.min(limit * 2, batchSize);
      } catch (error) {
        const reason = failureOf(error);
        failed(reason, error);
        if (reason !== 'unavailable' && batch.length > 1) {
          limit = reason === 'disk_full' ? 1 : Math.ceil(batch.length / 2);
          again = true;
          continue;
        }
        if (reason === 'bad_entry' && isGoneMeanwhile(error) && !retriedAlone.has(batch[0]?.id)) {
          // Its gate (or session) was deleted between the statement's join and its foreign-key
          // check: once more, the join now leaves it without one, as for every entry of a
          // deleted gate. Not dropped: nothing wrong with the entry itself.
          retriedAlone.add(batch[0]?.id);
          again = true;
          continue;
        }
        if (reason === 'bad_entry') {
          // Refused alone: a bad entry must not block the rest.
          retriedAlone.delete(batch[0]?.id);
          shift(1);
          refused += 1;
          console.error('log writer: entry refused', batch[0]?.id, error);
          again = true;
          continue;
        }
        // The database is away, or has no room even for one entry: every entry stays queued
        // (and its files with it) and is tried again, backing off.
        failures += 1;
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** failures, 5000)));
        return;
      }
      encodeAdded();
      recovered();
    }
  }

  function flush(): Promise<void> {
    writing ??= writeAll().finally(() => {
      writing = null;
    });
    return writing;
  }

  /**
   * Flushes until the queue is empty; gives up after 6 failures in a row, counted from its
   * start (an earlier drain that gave up must not stop the next, or close, from trying). On
   * close it says how much is lost; a drain leaves them queued.
   */
  async function writeOut(): Promise<void> {
    failures = 0;
    while ((pending() > 0 || writing) && failures < 6) await flush();
    encodeAdded();
    if (closed && queue.length > 0)
      console.error(
        `log writer: ${queue.length} entries could not be written${episode ? ` (${episode.reason})` : ''} and are lost`,
      );
  }

  const timer = setInterval(() => {
    if (pending() > 0) void flush();
  }, intervalMs);
  timer.unref();

  return {
    /** Queues an entry, and the files its answer carried (stored in log_media, with it). */
    async add(entry: LogEntryData, media?: StoredMedia[]): Promise<void> {
      if (closed) throw new Error('log writer is closed');
      while (
        pending() >= maxQueue ||
        (pending() > 0 && (mediaBytes > maxMediaBytes || queuedChars > maxQueuedChars))
      )
        await flush();
      added.push({ entry, media });
      encoding ??= setImmediate(encodeAdded);
      if (media && media.length > 0) {
        mediaBytes += mediaBytesOf({ media });
        // Files are large: they go out at once rather than waiting for the timer.
        if (mediaBytes > maxMediaBytes / 4) void flush();
      }
      if (pending() >= batchSize || queuedChars >= maxBatchChars) void flush();
    },
    /** Writes everything queued; resolves when the queue is empty (or the database stays away). */
    drain: () => writeOut(),
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      await writeOut();
    },
    /**
     * `mediaBytes`: the bytes of answer files held with the entries not written yet;
     * `writeFailures`: the batches refused, by why; `waitingForDisk`: the entries queued while the
     * database is refusing them for want of space (0 otherwise); `lagSeconds`: the oldest
     * entry's wait.
     */
    stats: () => ({
      queued: pending(),
      mediaBytes,
      written,
      sanitized,
      payloadDropped,
      refused,
      writeFailures: { ...writeFailures },
      waitingForDisk: episode?.reason === 'disk_full' ? pending() : 0,
      lagSeconds: lagSeconds(),
    }),
  };
}

export type LogWriter = ReturnType<typeof createLogWriter>;
