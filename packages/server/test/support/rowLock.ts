/**
 * Another connection holding a gate's row locked (FOR UPDATE), as a long change would, until
 * released. PostgreSQL only: PGlite has one connection, so nothing else can hold a lock while a
 * request waits. Released anyway after `safetyMs`, so code that waits for the lock answers late
 * rather than hangs; every lock still held is let go after each test.
 */
import pg from 'pg';
import { afterEach } from 'vitest';
import { type TestApp, testDatabaseUrl } from './app.ts';

export function useGateRowLock(app: TestApp) {
  const holders = new Set<pg.Client>();
  const timers = new Set<NodeJS.Timeout>();
  afterEach(async () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    for (const holder of holders) {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end().catch(() => {});
    }
    holders.clear();
  });
  return async function holdGateRow(gateId: string, safetyMs = 10_000) {
    const [row] = await app.db.prisma.$queryRaw<{ schema: string }[]>`SELECT current_schema() AS schema`;
    const holder = new pg.Client({
      connectionString: testDatabaseUrl,
      options: `-c search_path="${row?.schema}"`,
    });
    holders.add(holder);
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM gates WHERE id = $1 FOR UPDATE', [gateId]);
    const safety = setTimeout(() => holder.query('COMMIT').catch(() => {}), safetyMs);
    timers.add(safety);
    return async () => {
      clearTimeout(safety);
      timers.delete(safety);
      await holder.query('COMMIT');
    };
  };
}
