/**
 * PostgreSQL's named prepared statements (driver.ts): the per-request spending statements are
 * parsed and planned once per connection, unless GATEHOUSE_PG_PREPARE=0 turns them off; a
 * statement missing from its connection (a pooler in between) runs unnamed instead of failing.
 */
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../src/db/driver.ts';
import { testDatabaseUrl } from './support/app.ts';

const SUM = 'SELECT $1::int + 1 AS n';
const PREPARED_HERE = `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = '${SUM}'`;

// One query at a time: the pool hands the same idle connection back each time.
describe.runIf(testDatabaseUrl)('prepared statements on PostgreSQL', () => {
  it('keeps a statement asked to be prepared on its connection, and none when turned off', async () => {
    for (const prepared of [true, false]) {
      const db = await openPostgres(testDatabaseUrl as string, undefined, prepared);
      try {
        const [sum] = await db.query<{ n: number }>(SUM, [41], { prepare: true });
        expect(sum?.n).toBe(42);
        const [here] = await db.query<{ n: number }>(PREPARED_HERE);
        expect(here?.n).toBe(prepared ? 1 : 0);
      } finally {
        await db.close();
      }
    }
  });

  it('runs a statement unnamed when its connection lost it, as behind a pooler', async () => {
    const db = await openPostgres(testDatabaseUrl as string);
    try {
      await db.query(SUM, [1], { prepare: true });
      // The server forgets it; pg still believes the connection has it.
      await db.query('DEALLOCATE ALL');
      const [sum] = await db.query<{ n: number }>(SUM, [41], { prepare: true });
      expect(sum?.n).toBe(42);
    } finally {
      await db.close();
    }
  });
});
