/**
 * PostgreSQL's named prepared statements (driver.ts): the per-request spending statements are
 * parsed and planned once per connection, unless GATEHOUSE_PG_PREPARE=0 turns them off for a
 * pooler that cannot keep them.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { openPostgres } from '../src/db/driver.ts';
import { testDatabaseUrl } from './support/app.ts';

describe.runIf(testDatabaseUrl)('prepared statements on PostgreSQL', () => {
  const preparedHere = async (prepared: boolean) => {
    const db = await openPostgres(testDatabaseUrl as string, undefined, prepared);
    try {
      // One query at a time: the pool hands the same idle connection back.
      const [sum] = await db.query<{ n: number }>('SELECT $1::int + 1 AS n', [41], { prepare: true });
      expect(sum?.n).toBe(42);
      const [row] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE 'SELECT $1::int + 1%'",
      );
      return row?.n;
    } finally {
      await db.close();
    }
  };

  it('keeps a statement asked to be prepared on its connection, and none when turned off', async () => {
    expect(await preparedHere(true)).toBe(1);
    expect(await preparedHere(false)).toBe(0);
  });

  it('is on unless GATEHOUSE_PG_PREPARE is 0 or false', () => {
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ GATEHOUSE_PG_PREPARE: '0' }).preparedStatements).toBe(false);
    expect(loadConfig({ GATEHOUSE_PG_PREPARE: 'false' }).preparedStatements).toBe(false);
    expect(() => loadConfig({ GATEHOUSE_PG_PREPARE: 'maybe' })).toThrow(/GATEHOUSE_PG_PREPARE/);
  });
});
