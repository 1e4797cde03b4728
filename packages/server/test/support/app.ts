/**
 * Test harness: each test file gets its own database (an in-memory PGlite, or a fresh schema in
 * the PostgreSQL named by GATEHOUSE_TEST_DATABASE_URL) and the real app, driven through
 * app.request like any HTTP client.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { createApp } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { connectDatabase, type Database } from '../../src/db/client.ts';
import { closeRedis, openRedis } from '../../src/db/redis.ts';
import { createRuntime, type Runtime } from '../../src/runtime.ts';

export const testDatabaseUrl = process.env.GATEHOUSE_TEST_DATABASE_URL || undefined;
export const databaseKind = testDatabaseUrl ? 'postgres' : 'pglite';

/**
 * The environment of a gateway sharing the machine's Redis (GATEHOUSE_TEST_REDIS_URL, or the local
 * one), under keys of its own so test files running at once never meet; no fence after a restart,
 * unless a test asks for one.
 */
export function redisEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: process.env.GATEHOUSE_TEST_REDIS_URL || 'redis://127.0.0.1:6379',
    GATEHOUSE_REDIS_PREFIX: `test-${randomUUID()}`,
    GATEHOUSE_REDIS_FENCE_MS: '0',
    ...extra,
  };
}

/**
 * The two ways spending is decided, for suites that hold on both: the database's own ledger (in
 * memory on PGlite, row locks on PostgreSQL) and Redis's, shared by processes.
 */
export const LEDGERS: [string, Record<string, string>][] = [
  ['the database ledger', {}],
  ['the Redis ledger', redisEnv()],
];

/** Harnesses sharing the process's Redis connection: the last one closes it. */
let redisUsers = 0;

export type TestApp = {
  config: Config;
  db: Database;
  /** The data plane's parts; `runtime.logs.drain()` makes queued log entries visible. */
  runtime: Runtime;
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
};

/** `dataDir`: PGlite's directory (in memory unless given); PostgreSQL ignores it. */
export async function openTestDatabase(
  opts: { dataDir?: string; transactionTimeoutMs?: number } = {},
): Promise<{ db: Database; drop(): Promise<void> }> {
  if (!testDatabaseUrl) {
    const { dataDir = 'memory://', ...rest } = opts;
    // In memory, from the run's migrated dump (support/pgliteSnapshot.ts); migrate() then finds
    // every migration applied.
    const snapshot = dataDir === 'memory://' ? inject('pgliteSnapshot') : '';
    const from = snapshot ? new Blob([readFileSync(snapshot)]) : undefined;
    const db = await connectDatabase({ dataDir, migrate: true, from, ...rest });
    return { db, drop: () => db.close() };
  }
  const schema = `test_${randomUUID().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.end();
  const db = await connectDatabase({
    databaseUrl: testDatabaseUrl,
    dataDir: '',
    schema,
    ...(opts.transactionTimeoutMs !== undefined && { transactionTimeoutMs: opts.transactionTimeoutMs }),
  });
  return {
    db,
    drop: async () => {
      await db.close();
      const c = new pg.Client({ connectionString: testDatabaseUrl });
      await c.connect();
      await c.query(`DROP SCHEMA "${schema}" CASCADE`);
      await c.end();
    },
  };
}

/**
 * Registers beforeAll/afterAll hooks; the returned object is usable inside tests. `database` is
 * passed to openTestDatabase.
 */
export function useTestApp(env: Record<string, string> = {}, database: { dataDir?: string } = {}): TestApp {
  const harness = {} as TestApp;
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    // Every suite signs its users up from one address (app.request has no socket): no sign-up limit.
    const config = loadConfig({
      NODE_ENV: 'test',
      GATEHOUSE_OPEN_SIGNUP: '1',
      GATEHOUSE_SIGNUP_ADDRESS_LIMIT: '1000000',
      // A loaded CI machine may take seconds over one transaction: the suites test answers, not
      // the server's patience (transaction-busy.test.ts sets its own to test the 503).
      GATEHOUSE_TRANSACTION_TIMEOUT_MS: '30000',
      // With Redis, no fence after its start: the suites' Redis never restarts under them.
      GATEHOUSE_REDIS_FENCE_MS: '0',
      ...env,
    });
    const opened = await openTestDatabase({ ...database, transactionTimeoutMs: config.transactionTimeoutMs });
    drop = opened.drop;
    if (config.redisUrl) {
      redisUsers++;
      await openRedis(config.redisUrl);
    }
    const runtime = createRuntime(config);
    const app = createApp(config, runtime);
    harness.runtime = runtime;
    harness.config = config;
    harness.db = opened.db;
    harness.request = (path, init = {}) => {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
      return Promise.resolve(
        app.request(path, { ...rest, headers, ...(json !== undefined && { body: JSON.stringify(json) }) }),
      );
    };
  }, 60_000);
  afterAll(async () => {
    await harness.runtime?.close();
    if (harness.config?.redisUrl && --redisUsers === 0) await closeRedis();
    await drop();
  }, 60_000);
  return harness;
}

/**
 * The test app served over a real socket by @hono/node-server, as `pnpm start` serves it (the
 * chat routes write to the Node response there, not to a web Response); its base URL once the
 * suite has started, closed after it.
 */
export function useSocketServer(app: TestApp): { base(): string } {
  let base = '';
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const server = serve({ fetch: createApp(app.config, app.runtime).fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());
  return { base: () => base };
}
