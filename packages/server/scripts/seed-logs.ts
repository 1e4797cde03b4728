/**
 * `pnpm --filter @gatehouse/server seed:logs [--rows=N] [--gates=N] [--days=N]`: fills the
 * database the server would use (DATABASE_URL, or PGlite in DATA_DIR) with a realistic log: one
 * account with `gates` gates and `rows` entries (default 1,000,000 over 50 gates) spread over the
 * last `days` days, ~5% of them failed, plus a second account with a few entries of its own, and
 * the hourly totals that match them. The rows are made by the database (generate_series), not
 * sent from here, so a million take seconds on PostgreSQL. Prints how to sign in as the owner.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { connectDatabase, type Database } from '../src/db/client.ts';
import { registerAccount } from '../src/domain/accounts.ts';
import { createModelNames, listModels } from '../src/domain/catalog.ts';
import { createGate } from '../src/domain/gates.ts';
import { rebuildModelRollups } from '../src/domain/modelStats.ts';

export type SeedOptions = {
  rows: number;
  gates?: number;
  days?: number;
  /** The owner's and the other account's emails; random ones by default. */
  email?: string;
  otherEmail?: string;
  /** The failed share of the entries. */
  failureRate?: number;
  /** The newest entry's time; now by default. */
  until?: Date;
  log?: (line: string) => void;
};

export type SeedResult = {
  owner: { id: string; email: string; password: string; apiKey: string };
  other: { id: string; email: string };
  gateIds: string[];
  rows: number;
  seconds: number;
};

const CHUNK = 100_000;
const DAY_MS = 86_400_000;
// Models people route through a gateway today; whichever of them the catalog prices are used.
const PREFERRED = [
  'openai/gpt-4o-mini',
  'anthropic/claude-haiku-4-5',
  'gemini/gemini-2.5-flash',
  'openai/gpt-4.1-mini',
  'mistral/mistral-small-latest',
  'anthropic/claude-sonnet-4-5',
  'groq/llama-3.3-70b-versatile',
  'openai/gpt-4o',
  'deepseek/deepseek-chat',
  'gemini/gemini-2.0-flash',
];

/** Priced chat models from the catalog for the gates to use: the preferred ones, else any. */
function seedModels() {
  const priced = listModels({ taskType: 'chat' }).filter(
    (m) => m.provider !== 'mock' && (m.inputPricePerMTok ?? 0) > 0 && (m.outputPricePerMTok ?? 0) > 0,
  );
  const preferred = PREFERRED.flatMap((id) => priced.filter((m) => m.id === id));
  const picked = preferred.length > 0 ? preferred : priced.slice(0, 10);
  if (picked.length === 0) throw new Error('the model catalog has no priced chat models');
  return picked;
}

type SeedGate = {
  id: string;
  name: string;
  model: string;
  providerModel: string;
  provider: string;
  fallback: string | null;
  inPrice: number;
  outPrice: number;
};

// The seeded models are all `provider/model` ids of the catalog: no provider need be configured.
const seedModelNames = createModelNames(new Set());

async function makeGates(userId: string, count: number, prefix: string): Promise<SeedGate[]> {
  const models = seedModels();
  const gates: SeedGate[] = [];
  for (let n = 0; n < count; n++) {
    const m = models[n % models.length] as (typeof models)[number];
    const fb = n % 3 === 0 ? models[(n + 1) % models.length] : undefined;
    const gate = await createGate(
      userId,
      {
        name: `${prefix} ${String(n + 1).padStart(2, '0')}`,
        model: m.id,
        taskType: 'chat',
        ...(fb && fb.id !== m.id && { routingStrategy: 'fallback', fallbackModels: [fb.id] }),
      },
      { models: seedModelNames },
    );
    gates.push({
      id: gate.id,
      name: gate.name,
      model: m.id,
      providerModel: m.providerModel,
      provider: m.provider,
      fallback: fb && fb.id !== m.id ? fb.id : null,
      inPrice: m.inputPricePerMTok ?? 0,
      outPrice: m.outputPricePerMTok ?? 0,
    });
  }
  return gates;
}

/*
 * One chunk of entries, numbered $8…$9 of $10 in all, spaced evenly from $11 over $12 ms (so they
 * arrive in time order, as real traffic does). Busier gates come first: gate n is drawn with a
 * weight falling off with n. Failures answer 502, 429 or 504 with no tokens and no cost; ~8% of
 * the successes of a gate with a fallback were answered by it after the primary's 503.
 */
const INSERT_CHUNK = `
WITH g AS (
  SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $13::float8[], $14::text[])
    WITH ORDINALITY AS g(id, name, model, provider_model, provider, in_price, out_price, fallback, n)
), r AS (
  SELECT i, 1 + floor(power(random(), 1.7) * cardinality($2::uuid[]))::int AS n,
         random() < $15::float8 AS failed, random() AS a, random() AS b, random() AS c, random() AS d,
         random() < 0.08 AS fell_back
  FROM generate_series($8::int, $9::int) AS i
), e AS (
  SELECT r.*, g.id AS gate_id, g.name AS gate_name, g.model, g.provider_model, g.provider, g.fallback,
         g.in_price, g.out_price,
         CASE WHEN r.failed THEN 0 ELSE (40 + r.a * r.a * 3000)::int END AS prompt_tokens,
         CASE WHEN r.failed THEN 0 ELSE (5 + r.b * r.b * 900)::int END AS completion_tokens,
         CASE WHEN NOT r.failed THEN 200 WHEN r.d < 0.5 THEN 502 WHEN r.d < 0.8 THEN 429 ELSE 504 END AS status,
         NOT r.failed AND r.fell_back AND g.fallback IS NOT NULL AS via_fallback
  FROM r JOIN g ON g.n = r.n
), x AS (
  SELECT e.*,
         CASE WHEN e.status = 504 THEN 30000
              WHEN e.failed THEN (40 + e.c * 600)::int
              ELSE (150 + e.completion_tokens * (3 + 9 * e.d) + e.c * 500)::int END AS latency_ms,
         CASE e.status WHEN 502 THEN 'upstream_error' WHEN 429 THEN 'rate_limited' WHEN 504 THEN 'upstream_timeout' END AS error_code
  FROM e
)
INSERT INTO log_entries (id, user_id, gate_id, gate_name, endpoint, model_requested, model_used, prompt_tokens,
  completion_tokens, cost_usd, latency_ms, success, status_code, error_code, error_message, session_id, attempts,
  stream, provider_request, provider_response, search, created_at)
SELECT gen_random_uuid(), $1::uuid, gate_id, gate_name,
       CASE WHEN a < 0.25 THEN '/v1/chat/completions' ELSE '/v3/chat' END,
       model, CASE WHEN failed THEN NULL WHEN via_fallback THEN fallback ELSE model END,
       prompt_tokens, completion_tokens,
       round(((prompt_tokens * in_price + completion_tokens * out_price) / 1e6)::numeric, 8),
       latency_ms, NOT failed, status, error_code,
       CASE error_code WHEN 'upstream_error' THEN 'Provider answered 503: overloaded'
                       WHEN 'rate_limited' THEN 'Provider answered 429: rate limit reached'
                       WHEN 'upstream_timeout' THEN 'The provider did not answer in time' END,
       CASE WHEN b < 0.3 THEN 'session-' || (i % 20000) END,
       CASE WHEN via_fallback THEN jsonb_build_array(
              jsonb_build_object('model', model, 'provider', provider, 'ok', false, 'status', 503,
                                 'error', 'Provider answered 503', 'latencyMs', 80),
              jsonb_build_object('model', fallback, 'provider', split_part(fallback, '/', 1), 'ok', true,
                                 'status', 200, 'error', NULL, 'latencyMs', latency_ms - 80))
            ELSE jsonb_build_array(jsonb_build_object('model', model, 'provider', provider, 'ok', NOT failed,
                                 'status', CASE status WHEN 502 THEN 503 WHEN 504 THEN NULL ELSE status END,
                                 'error', CASE WHEN failed THEN error_code END, 'latencyMs', latency_ms)) END,
       c < 0.3,
       jsonb_build_object('model', CASE WHEN via_fallback THEN split_part(fallback, '/', 2) ELSE provider_model END,
         'messages', jsonb_build_array(
         jsonb_build_object('role', 'user', 'content', 'Summarise ticket #' || i || ' for the support team'))),
       CASE WHEN failed THEN jsonb_build_object('error', jsonb_build_object('message', error_code))
            ELSE jsonb_build_object('id', 'chatcmpl-' || i, 'object', 'chat.completion',
              'model', CASE WHEN via_fallback THEN split_part(fallback, '/', 2) ELSE provider_model END,
              'choices', jsonb_build_array(jsonb_build_object('index', 0, 'finish_reason', 'stop',
                'message', jsonb_build_object('role', 'assistant', 'content', 'Ticket #' || i || ' summarised.'))),
              'usage', jsonb_build_object('prompt_tokens', prompt_tokens, 'completion_tokens', completion_tokens)) END,
       -- The words the log writer would index (logSearchText.ts): the error, the prompt, the answer;
       -- on these plain ASCII words PostgreSQL's parser cuts what domain/searchWords.ts would.
       to_tsvector('simple', concat_ws(' ', CASE error_code WHEN 'upstream_error' THEN 'Provider answered 503: overloaded'
                       WHEN 'rate_limited' THEN 'Provider answered 429: rate limit reached'
                       WHEN 'upstream_timeout' THEN 'The provider did not answer in time' END,
         'Summarise ticket #' || i || ' for the support team',
         CASE WHEN failed THEN error_code ELSE 'Ticket #' || i || ' summarised.' END)),
       $11::timestamptz + make_interval(secs => (i - 1 + c) * $12::float8 / $10::float8 / 1000)
FROM x`;

async function insertEntries(
  db: Database,
  userId: string,
  gates: SeedGate[],
  rows: number,
  start: Date,
  spanMs: number,
  failureRate: number,
  log: (line: string) => void,
) {
  for (let from = 1; from <= rows; from += CHUNK) {
    const to = Math.min(rows, from + CHUNK - 1);
    const t = performance.now();
    await db.driver.query(INSERT_CHUNK, [
      userId,
      gates.map((g) => g.id),
      gates.map((g) => g.name),
      gates.map((g) => g.model),
      gates.map((g) => g.providerModel),
      gates.map((g) => g.provider),
      gates.map((g) => g.inPrice),
      from,
      to,
      rows,
      start.toISOString(),
      spanMs,
      gates.map((g) => g.outPrice),
      gates.map((g) => g.fallback),
      failureRate,
    ]);
    if (rows > CHUNK)
      log(`  entries ${from.toLocaleString('en')}–${to.toLocaleString('en')} in ${secs(t)} s`);
  }
}

/** The hourly totals of these users, recomputed from their entries in one statement. */
async function rollUp(db: Database, userIds: string[]) {
  await db.driver.query(
    `INSERT INTO log_rollups AS r (user_id, gate_id, hour, requests, errors, cost_usd, latency_ms_sum, prompt_tokens, completion_tokens)
     SELECT user_id, gate_id, date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*),
            count(*) FILTER (WHERE NOT success), sum(cost_usd), sum(latency_ms), sum(prompt_tokens), sum(completion_tokens)
     FROM log_entries WHERE user_id = ANY($1::uuid[]) AND gate_id IS NOT NULL
     GROUP BY 1, 2, 3
     ON CONFLICT (user_id, gate_id, hour) DO UPDATE SET
       requests = excluded.requests, errors = excluded.errors, cost_usd = excluded.cost_usd,
       latency_ms_sum = excluded.latency_ms_sum, prompt_tokens = excluded.prompt_tokens,
       completion_tokens = excluded.completion_tokens`,
    [userIds],
  );
}

const secs = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

/** Seeds the database `connectDatabase` opened last (the domain functions use it too). */
export async function seedLogs(db: Database, opts: SeedOptions): Promise<SeedResult> {
  const log = opts.log ?? console.log;
  const gateCount = opts.gates ?? 50;
  const days = opts.days ?? 30;
  const failureRate = opts.failureRate ?? 0.05;
  const until = opts.until ?? new Date();
  const spanMs = days * DAY_MS;
  const start = new Date(until.getTime() - spanMs);
  const began = performance.now();

  const password = `seed-${randomUUID()}`;
  const email = opts.email ?? `logs-seed-${randomUUID().slice(0, 8)}@example.test`;
  const account = {
    openSignup: true,
    sessionDays: 1,
    signUpLimits: { addressAttempts: 1_000_000, windowSeconds: 60 },
  };
  // The seed signs its two accounts up itself, from no address.
  const from = { address: 'seed' };
  const { grant, issued } = await registerAccount({ email, password }, account, from);
  const ownerId = grant.user.id;
  // The Pro plan keeps 90 days of logs and allows 100 gates: the retention job leaves the seed be.
  await db.prisma.user.update({ where: { id: ownerId }, data: { plan: 'pro' } });
  const otherEmail = opts.otherEmail ?? `logs-seed-other-${randomUUID().slice(0, 8)}@example.test`;
  const other = await registerAccount({ email: otherEmail, password: `seed-${randomUUID()}` }, account, from);
  const otherId = other.grant.user.id;

  const gates = await makeGates(ownerId, gateCount, 'Seeded gate');
  const otherGates = await makeGates(otherId, 2, 'Other gate');
  log(`accounts and ${gateCount + 2} gates in ${secs(began)} s`);

  let t = performance.now();
  // The search words' GIN index is built once after the rows rather than row by row (its own
  // definition, from the migration, again): several times faster for a large seed.
  const [searchIndex] = await db.driver.query<{ def: string }>(
    // The index of the schema in use (search_path): another schema's has the same name.
    `SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
     WHERE i.indexrelid = to_regclass('log_entries_search_idx')`,
  );
  if (searchIndex) await db.driver.exec('DROP INDEX log_entries_search_idx');
  try {
    await insertEntries(db, ownerId, gates, opts.rows, start, spanMs, failureRate, log);
    const otherRows = Math.min(1000, Math.max(10, Math.round(opts.rows / 1000)));
    await insertEntries(db, otherId, otherGates, otherRows, start, spanMs, failureRate, log);
    log(`${(opts.rows + otherRows).toLocaleString('en')} log entries in ${secs(t)} s`);
  } finally {
    if (searchIndex) {
      const indexed = performance.now();
      await db.driver.exec(searchIndex.def);
      log(`search index in ${secs(indexed)} s`);
    }
  }

  t = performance.now();
  await rollUp(db, [ownerId, otherId]);
  await rebuildModelRollups([ownerId, otherId]);
  log(`hourly totals in ${secs(t)} s`);

  t = performance.now();
  await db.driver.exec('ANALYZE log_entries; ANALYZE log_rollups; ANALYZE model_rollups');
  log(`ANALYZE in ${secs(t)} s`);

  const seconds = (performance.now() - began) / 1000;
  return {
    owner: { id: ownerId, email, password, apiKey: issued.key },
    other: { id: otherId, email: otherEmail },
    gateIds: gates.map((g) => g.id),
    rows: opts.rows,
    seconds,
  };
}

function intFlag(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (!arg) return fallback;
  const value = Number(arg.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} must be a positive integer`);
    process.exit(1);
  }
  return value;
}

async function main() {
  const config = loadConfig();
  const rows = intFlag('rows', 1_000_000);
  const gates = intFlag('gates', 50);
  const days = intFlag('days', 30);
  if (gates > 100) {
    console.error('--gates is at most 100 (the Pro plan’s limit)');
    process.exit(1);
  }
  const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`;
  console.log(
    `Seeding ${rows.toLocaleString('en')} log entries over ${gates} gates and ${days} days into ${where}`,
  );
  const db = await connectDatabase(config);
  try {
    const result = await seedLogs(db, { rows, gates, days });
    console.log(`Done in ${result.seconds.toFixed(1)} s.`);
    console.log(`Sign in as ${result.owner.email} / ${result.owner.password}`);
    console.log(`API key: ${result.owner.apiKey}  (curl -H "authorization: Bearer …" /v1/logs)`);
  } finally {
    await db.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
