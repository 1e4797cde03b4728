/**
 * A PostgreSQL database of its own for a file's real gateway processes, on the server named by
 * GATEHOUSE_TEST_DATABASE_URL: `create()` makes it and answers the DATABASE_URL to start them
 * with; after the file its processes are killed and the database dropped.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { testDatabaseUrl } from './app.ts';
import type { ServerProcess } from './process.ts';

export function useProcessDatabase(name: string) {
  const database = `gatehouse_${name}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  /** The processes to kill after the file. */
  const servers: ServerProcess[] = [];
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: testDatabaseUrl });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  const url = () => {
    const u = new URL(testDatabaseUrl as string);
    u.pathname = `/${database}`;
    return u.toString();
  };
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGKILL');
    if (testDatabaseUrl) await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  }, 60_000);
  return {
    /** The database's name. */
    database,
    servers,
    url,
    async create(): Promise<string> {
      await admin(`CREATE DATABASE "${database}"`);
      return url();
    },
  };
}
