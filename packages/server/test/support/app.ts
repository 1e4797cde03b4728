/**
 * Test harness: each test file gets its own database (an in-memory PGlite, or a fresh schema in
 * the PostgreSQL named by GATEHOUSE_TEST_DATABASE_URL) and the real app, driven through
 * app.request like any HTTP client.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { createApp } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { connectDatabase, type Database } from '../../src/db/client.ts';
import { createRuntime, type Runtime } from '../../src/runtime.ts';

export const testDatabaseUrl = process.env.GATEHOUSE_TEST_DATABASE_URL || undefined;
export const databaseKind = testDatabaseUrl ? 'postgres' : 'pglite';

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
    const db = await connectDatabase({ dataDir, migrate: true, ...rest });
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
      ...env,
    });
    const opened = await openTestDatabase({ ...database, transactionTimeoutMs: config.transactionTimeoutMs });
    drop = opened.drop;
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
    await drop();
  }, 60_000);
  return harness;
}
