import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';

/** The raw connection under Prisma: the migrator and the drift test speak SQL through it. */
export type SqlDriver = {
  kind: 'pglite' | 'postgres';
  /** Runs a script of one or more statements. */
  exec(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  adapter: PrismaPg | PrismaPGlite;
  close(): Promise<void>;
};

export async function openPglite(dataDir: string): Promise<SqlDriver> {
  // PostgreSQL's default 128 MB of shared buffers would sit in this process's memory for good;
  // the operating system's file cache backs a smaller pool just as well for a gateway's load.
  const db = await PGlite.create(dataDir, { postgresqlconf: ['shared_buffers=16MB'] });
  return {
    kind: 'pglite',
    exec: async (sql) => {
      await db.exec(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await db.query<T>(sql, params as unknown[])).rows,
    adapter: new PrismaPGlite(db),
    close: () => db.close(),
  };
}

/** `schema` isolates a test run inside a shared database; production uses the URL's default. */
export async function openPostgres(url: string, schema?: string): Promise<SqlDriver> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema && { options: `-c search_path="${schema}"` }),
  });
  // Fail at start-up, with the server's own message, rather than at the first request.
  const probe = await pool.connect();
  probe.release();
  return {
    kind: 'postgres',
    exec: async (sql) => {
      await pool.query(sql);
    },
    query: async <T>(sql: string, params?: unknown[]) => (await pool.query(sql, params)).rows as T[],
    adapter: new PrismaPg(pool, schema ? { schema } : undefined),
    close: () => pool.end(),
  };
}
