/**
 * `pnpm bench:logs`: the log read side against a seeded log (scripts/seed-logs.ts: 1,000,000
 * entries over 50 gates and 30 days by default, BENCH_LOG_ROWS to change it) on PGlite in a
 * temporary directory and on PostgreSQL (database `gatehouse_bench` at BENCH_POSTGRES_URL's server,
 * skipped with a notice when none answers). A seeded database is kept and reused on the next run:
 * its marker is the owner account `bench-logs-<rows>@example.test`, written last.
 *
 * Each query runs through the domain functions the REST and GraphQL handlers call, BENCH_LOG_RUNS
 * times (default 50) after a warm-up, and the table shows p50 and p95 with the targets for
 * PostgreSQL: a page within 50 ms at p95, the overview within 150 ms; and on both databases the
 * Architect (issue 14): a suggestion over the account's last 7 days, and a gate's analysis, within
 * 50 ms at p95, read from the per-model hourly totals.
 */
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { seedLogs } from '../scripts/seed-logs.ts';
import { connectDatabase, type Database } from '../src/db/client.ts';
import { analyseStoredGate, suggestModels } from '../src/domain/architect.ts';
import { createModelNames } from '../src/domain/catalog.ts';
import { listLogs, logOverview, logSeries } from '../src/domain/logs.ts';

const ROWS = Number(process.env.BENCH_LOG_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_LOG_RUNS ?? 50);
const DEEP_PAGES = 200;
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const PGLITE_DIR = process.env.BENCH_PGLITE_DIR ?? path.join(os.tmpdir(), `gatehouse-bench-logs-${ROWS}`);
const MARKER = `bench-logs-${ROWS}@example.test`;
const DAY_MS = 86_400_000;

const TARGETS: Record<string, number> = {
  'first page': 50,
  'gate + failed, busiest gate': 50,
  'gate + failed, quietest gate': 50,
  [`page ${DEEP_PAGES + 1} (cursor)`]: 50,
  overview: 150,
  'Architect suggestion (7 days)': 50,
  'Architect analysis, busiest gate': 50,
};

type Row = { database: string; query: string; p50: number; p95: number; target: number | undefined };

/** How each database got its log: seeded in this run (seconds), or reused. */
const seeding: string[] = [];
const SLOW_SEED_S = 300;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;

async function measure(runs: number, run: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 3; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

/** The seeded owner and its gates, seeding first unless the marker says a complete seed is there. */
async function seeded(db: Database, label: string) {
  const found = await db.driver.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [MARKER]);
  let userId = found[0]?.id;
  if (userId) {
    console.log(`${label}: reusing the seeded log (marker ${MARKER})`);
    seeding.push(`${label} reused the log seeded by an earlier run`);
  } else {
    // A seed that did not finish, or one of another size: gone with its entries (ON DELETE CASCADE).
    await db.driver.query(`DELETE FROM users WHERE email LIKE 'bench-logs-%'`);
    console.log(`${label}: seeding ${ROWS.toLocaleString('en')} log entries…`);
    const result = await seedLogs(db, {
      rows: ROWS,
      email: `bench-logs-seeding-${ROWS}@example.test`,
      otherEmail: `bench-logs-other-${ROWS}@example.test`,
      log: (line) => console.log(`${label}:   ${line}`),
    });
    await db.driver.query('UPDATE users SET email = $1 WHERE id = $2::uuid', [MARKER, result.owner.id]);
    console.log(`${label}: seeded in ${result.seconds.toFixed(1)} s`);
    seeding.push(`${label} seeded in ${result.seconds.toFixed(0)} s`);
    if (result.seconds > SLOW_SEED_S) {
      console.log(
        `${label}: seeding took over ${SLOW_SEED_S / 60} minutes on this machine; it happens once (the next run ` +
          'reuses it), and BENCH_LOG_ROWS=200000 seeds a smaller log for a quicker first run',
      );
    }
    userId = result.owner.id;
  }
  const gates = await db.driver.query<{ gate_id: string; requests: string }>(
    `SELECT gate_id, sum(requests) AS requests FROM log_rollups WHERE user_id = $1::uuid
     GROUP BY gate_id ORDER BY sum(requests) DESC, gate_id`,
    [userId],
  );
  const [newest] = await db.driver.query<{ at: Date | string }>(
    'SELECT max(created_at) AS at FROM log_entries WHERE user_id = $1::uuid',
    [userId],
  );
  if (gates.length === 0 || !newest?.at) throw new Error(`${label}: the seeded log is empty`);
  return {
    userId,
    busiest: gates[0]?.gate_id as string,
    quietest: gates.at(-1)?.gate_id as string,
    until: new Date(new Date(newest.at).getTime() + 60_000),
  };
}

async function bench(label: string, db: Database): Promise<Row[]> {
  const { userId, busiest, quietest, until } = await seeded(db, label);
  const window = { since: new Date(until.getTime() - 30 * DAY_MS).toISOString(), until: until.toISOString() };

  let cursor: string | null = null;
  for (let page = 0; page < DEEP_PAGES; page++) {
    const next: Awaited<ReturnType<typeof listLogs>> = await listLogs(userId, cursor ? { cursor } : {});
    cursor = next.nextCursor;
    if (!cursor) throw new Error(`${label}: the log ends before page ${DEEP_PAGES + 1}`);
  }
  const deepCursor = cursor as string;

  // The Architect reads the providers of the seeded models over the week before the newest entry.
  const providers = await db.driver.query<{ provider: string }>(
    `SELECT DISTINCT split_part(model, '/', 1) AS provider FROM gates WHERE user_id = $1::uuid`,
    [userId],
  );
  const architect = {
    models: createModelNames(new Set()),
    reader: null,
    configured: new Set(providers.map((p) => p.provider)),
    now: () => until,
  };
  const suggestion = {
    description: 'Answer customer support tickets about orders and refunds',
    analysisMethod: 'balanced',
    maxCostPer1kTokens: 0.01,
  };
  const busiestGate = await db.prisma.gate.findUniqueOrThrow({ where: { id: busiest } });

  const queries: [string, () => Promise<unknown>, number][] = [
    ['first page', () => listLogs(userId, {}), RUNS],
    ['gate + failed, busiest gate', () => listLogs(userId, { gateId: busiest, status: 'failed' }), RUNS],
    ['gate + failed, quietest gate', () => listLogs(userId, { gateId: quietest, status: 'failed' }), RUNS],
    [`page ${DEEP_PAGES + 1} (cursor)`, () => listLogs(userId, { cursor: deepCursor }), RUNS],
    ['overview', () => logOverview(userId, window), RUNS],
    ['series, 30 days by day', () => logSeries(userId, { ...window, bucket: 'day' }), Math.min(RUNS, 10)],
    ['Architect suggestion (7 days)', () => suggestModels(userId, suggestion, architect), RUNS],
    ['Architect analysis, busiest gate', () => analyseStoredGate(busiestGate, {}, architect), RUNS],
  ];
  const rows: Row[] = [];
  for (const [query, run, runs] of queries) {
    const { p50, p95 } = await measure(runs, run);
    rows.push({ database: label, query, p50, p95, target: TARGETS[query] });
    console.log(`${label}: ${query}: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${runs} runs)`);
  }
  return rows;
}

/** The bench database on the PostgreSQL server, created when missing; null when none answers. */
async function postgresBenchUrl(): Promise<string | null> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`PostgreSQL at ${POSTGRES_URL} does not answer (${(error as Error).message}): skipping it`);
    return null;
  }
  try {
    const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'gatehouse_bench'`);
    if (exists.rowCount === 0) await admin.query('CREATE DATABASE gatehouse_bench');
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = '/gatehouse_bench';
  return url.toString();
}

function table(rows: Row[]): string {
  const head = ['database', 'query', 'p50 ms', 'p95 ms', 'target p95', 'result'];
  const body = rows.map((r) => {
    // The Architect's target (issue 14) holds on both databases; the log reads' on PostgreSQL.
    const applies = r.database === 'PostgreSQL' || r.query.startsWith('Architect');
    const target = applies && r.target !== undefined ? r.target : undefined;
    return [
      r.database,
      r.query,
      r.p50.toFixed(1),
      r.p95.toFixed(1),
      target === undefined ? '-' : `≤ ${target} ms`,
      target === undefined ? '' : r.p95 <= target ? 'ok' : 'MISSED',
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 2 && i <= 3 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

const rows: Row[] = [];
const started = performance.now();
console.log(`Log read side: ${ROWS.toLocaleString('en')} entries, ${RUNS} runs per query`);
if (ROWS >= 1_000_000) {
  console.log(
    'A first run seeds both databases: ~2–3 minutes for PGlite and ~1 for PostgreSQL on 2 cores ' +
      '(BENCH_LOG_ROWS=200000 for a smaller log); later runs reuse them.',
  );
}

const lite = await connectDatabase({ dataDir: PGLITE_DIR });
try {
  rows.push(...(await bench('PGlite', lite)));
} finally {
  await lite.close();
}

const url = await postgresBenchUrl();
if (url) {
  const postgres = await connectDatabase({ databaseUrl: url, dataDir: '' });
  try {
    rows.push(...(await bench('PostgreSQL', postgres)));
  } finally {
    await postgres.close();
  }
}

console.log('');
console.log(
  `Log read side: ${ROWS.toLocaleString('en')} entries over 50 gates and 30 days (PGlite in ${PGLITE_DIR}` +
    `${url ? ', PostgreSQL database gatehouse_bench' : ''}); ${RUNS} runs per query, the series ${Math.min(RUNS, 10)}`,
);
console.log(table(rows));
console.log(`${seeding.join('; ')}.`);
if (!url) console.log('PostgreSQL was skipped: no server answered, so no target was checked.');
console.log(`Total ${((performance.now() - started) / 1000).toFixed(0)} s`);
