import { createHash } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { openPgliteThread } from './pgliteThread.ts';

/** The raw connection under Prisma: the migrator and the drift test speak SQL through it. */
export type SqlDriver = {
  kind: 'pglite' | 'postgres';
  /** Runs a script of one or more statements. */
  exec(sql: string): Promise<void>;
  /**
   * `prepare`: a statement run on every request, from a constant text. PostgreSQL parses and
   * plans it once per connection as a named prepared statement (PGlite once for its thread's life).
   */
  query<T = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    opts?: { prepare?: boolean },
  ): Promise<T[]>;
  /** Runs the statements in one transaction: all of them take effect, or none. */
  transaction(statements: { sql: string; params: unknown[] }[]): Promise<void>;
  adapter: PrismaPg | PrismaPGlite;
  close(): Promise<void>;
};

/**
 * `from`: a dump of a data directory (PGlite's dumpDataDir) to start from instead of an empty
 * one, for a database in memory: the test suite's, migrated once rather than in every file.
 */
export async function openPglite(
  dataDir: string,
  where: { process?: boolean; from?: Blob | undefined } = {},
): Promise<SqlDriver> {
  // PostgreSQL's default 128 MB of shared buffers would sit in this process's memory for good;
  // the operating system's file cache backs a smaller pool just as well for a gateway's load.
  // It runs on a thread of its own (pgliteThread.ts), so its statements never block a request.
  const db = await openPgliteThread(
    dataDir,
    { postgresqlconf: ['shared_buffers=16MB'], ...(where.from && { loadDataDir: where.from }) },
    where,
  );
  return {
    kind: 'pglite',
    exec: async (sql) => {
      await db.exec(sql);
    },
    query: async <T>(sql: string, params?: unknown[], opts?: { prepare?: boolean }) =>
      (opts?.prepare ? await db.prepared<T>(sql, params ?? []) : await db.query<T>(sql, params as unknown[]))
        .rows,
    transaction: (statements) => db.batch(statements),
    adapter: new PrismaPGlite(db as unknown as PGlite),
    close: () => db.close(),
  };
}

/**
 * A name per statement text, from its hash: a statement has the same name in every process and
 * version, so a pooler sharing connections between them can never run one under another's name.
 */
const statementNames = new Map<string, string>();
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `gatehouse_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * A named statement the connection does not have (26000) or has already (42P05): the connection
 * is not the one pg prepared it on, as behind a pooler in transaction mode. Both fail before the
 * statement runs, so it is run again unnamed.
 */
const LOST_STATEMENT = new Set(['26000', '42P05']);

/** `schema` isolates a test run inside a shared database; production uses the URL's default. */
export async function openPostgres(url: string, schema?: string, prepared = true): Promise<SqlDriver> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema && { options: `-c search_path="${schema}"` }),
  });
  // Fail at start-up, with the server's own message, rather than at the first request.
  const probe = await pool.connect();
  probe.release();
  let warnedLost = false;
  const unnamed = async <T>(sql: string, params?: unknown[]) =>
    (await pool.query({ text: sql, values: params })).rows as T[];
  return {
    kind: 'postgres',
    exec: async (sql) => {
      await pool.query(sql);
    },
    query: async <T>(sql: string, params?: unknown[], opts?: { prepare?: boolean }) => {
      if (!prepared || !opts?.prepare) return unnamed<T>(sql, params);
      try {
        return (await pool.query({ name: statementName(sql), text: sql, values: params })).rows as T[];
      } catch (error) {
        if (!LOST_STATEMENT.has((error as { code?: string }).code ?? '')) throw error;
        if (!warnedLost) {
          console.error(
            'postgres: a prepared statement was not on its connection (a pooler in transaction mode?): running it unnamed; GATEHOUSE_PG_PREPARE=0 stops naming them',
          );
          warnedLost = true;
        }
        return unnamed<T>(sql, params);
      }
    },
    transaction: async (statements) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        for (const s of statements) await client.query(s.sql, s.params);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    adapter: new PrismaPg(pool, schema ? { schema } : undefined),
    close: () => pool.end(),
  };
}
