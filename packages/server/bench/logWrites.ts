/**
 * `pnpm --filter @gatehouse/server bench:log-writes`: the log writer's cost per entry, on PGlite in
 * a temporary directory and on PostgreSQL (database `gatehouse_bench_writes` at BENCH_POSTGRES_URL's
 * server, skipped when none answers). BENCH_WRITE_ROWS entries (default 5,000) of a chat request
 * and answer (~1.5 kB of text each) go through createLogWriter in its default batches, three
 * rounds; it prints entries per second and the table's size with its indexes per entry.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLogWriter as current } from '../src/dataplane/logWriter.ts';

// BENCH_WRITER=<module path>: another writer to compare (an earlier version copied beside it).
const createLogWriter: typeof current = process.env.BENCH_WRITER
  ? (await import(process.env.BENCH_WRITER)).createLogWriter
  : current;

import { connectDatabase, type Database } from '../src/db/client.ts';

const ROWS = Number(process.env.BENCH_WRITE_ROWS ?? 5000);
const ROUNDS = 3;
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const WORDS = 'the order refund ticket customer shipping invoice account delivery parcel warehouse'.split(
  ' ',
);

const sentence = (i: number, n: number) =>
  Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ');

function entry(userId: string, i: number) {
  return {
    userId,
    endpoint: '/v1/chat/completions',
    modelRequested: 'openai/gpt-4o-mini',
    modelUsed: 'openai/gpt-4o-mini',
    promptTokens: 300,
    completionTokens: 120,
    costUsd: 0.0002,
    latencyMs: 800,
    success: true,
    statusCode: 200,
    attempts: [{ model: 'openai/gpt-4o-mini', provider: 'openai', ok: true, status: 200, latencyMs: 800 }],
    providerRequest: {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You answer support tickets politely and briefly.' },
        { role: 'user', content: `Ticket ${i}: ${sentence(i, 150)}` },
      ],
    },
    providerResponse: {
      id: `chatcmpl-${i}`,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: sentence(i + 1, 80) } }],
      usage: { prompt_tokens: 300, completion_tokens: 120 },
    },
  };
}

async function run(label: string, db: Database) {
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const userId = randomUUID();
    await db.driver.query(
      `INSERT INTO users (id, email, password_hash, updated_at) VALUES ($1::uuid, $2, 'x', now())`,
      [userId, `bench-writes-${userId}@example.test`],
    );
    const writer = createLogWriter();
    const t = performance.now();
    for (let i = 0; i < ROWS; i++) await writer.add(entry(userId, i));
    await writer.close();
    const s = (performance.now() - t) / 1000;
    rates.push(ROWS / s);
    console.log(`${label}: round ${round + 1}: ${ROWS} entries in ${s.toFixed(2)} s`);
  }
  const [size] = await db.driver.query<{ table: string; indexes: string; rows: string }>(
    `SELECT pg_table_size('log_entries') AS table, pg_indexes_size('log_entries') AS indexes,
            (SELECT count(*) FROM log_entries) AS rows`,
  );
  const perRow = (b: unknown) => (Number(b) / Number(size?.rows ?? 1)).toFixed(0);
  rates.sort((a, b) => a - b);
  console.log(
    `${label}: median ${rates[1]?.toFixed(0)} entries/s; per entry ${perRow(size?.table)} B of table, ` +
      `${perRow(size?.indexes)} B of indexes`,
  );
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-writes-'));
const lite = await connectDatabase({ dataDir: dir });
try {
  await run('PGlite', lite);
} finally {
  await lite.close();
  rmSync(dir, { recursive: true, force: true });
}

const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
let url: string | null = null;
try {
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS gatehouse_bench_writes');
  await admin.query('CREATE DATABASE gatehouse_bench_writes');
  const u = new URL(POSTGRES_URL);
  u.pathname = '/gatehouse_bench_writes';
  url = u.toString();
} catch (error) {
  console.log(`PostgreSQL at ${POSTGRES_URL} skipped: ${(error as Error).message}`);
} finally {
  await admin.end().catch(() => {});
}
if (url) {
  const postgres = await connectDatabase({ databaseUrl: url, dataDir: '' });
  try {
    await run('PostgreSQL', postgres);
  } finally {
    await postgres.close();
  }
}
