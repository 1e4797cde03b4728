import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SqlDriver } from './driver.ts';

export type Migration = { name: string; sql: string; checksum: string };

const LOCK_KEY = 727_001; // pg_advisory_lock key: one migrator at a time across processes

export async function readMigrations(dir: string): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/**
 * Applies the migrations not yet recorded, each in its own transaction, and records them.
 * Refuses to run when an applied migration's file has changed since: that database and this
 * code no longer agree on what the schema is.
 */
export async function migrate(db: Pick<SqlDriver, 'exec' | 'query'>, dir: string): Promise<string[]> {
  const migrations = await readMigrations(dir);
  await db.exec(`CREATE TABLE IF NOT EXISTS "_gatehouse_migrations" (
    "name" TEXT PRIMARY KEY,
    "checksum" TEXT NOT NULL,
    "applied_at" TIMESTAMPTZ NOT NULL DEFAULT now()
  )`);
  await db.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
  try {
    const rows = await db.query<{ name: string; checksum: string }>(
      'SELECT name, checksum FROM "_gatehouse_migrations"',
    );
    const applied = new Map(rows.map((r) => [r.name, r.checksum]));
    const ran: string[] = [];
    for (const m of migrations) {
      const recorded = applied.get(m.name);
      if (recorded !== undefined) {
        if (recorded !== m.checksum) {
          throw new Error(`Migration ${m.name} was changed after it was applied to this database`);
        }
        continue;
      }
      const name = m.name.replaceAll("'", "''");
      await db.exec(
        `BEGIN;\n${m.sql}\n;INSERT INTO "_gatehouse_migrations" (name, checksum) VALUES ('${name}', '${m.checksum}');\nCOMMIT;`,
      );
      ran.push(m.name);
    }
    return ran;
  } catch (error) {
    await db.exec('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    await db.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]);
  }
}

/** For /readyz: true when every migration file is recorded as applied. */
export async function pendingMigrations(db: SqlDriver, dir: string): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const rows = await db.query<{ name: string }>('SELECT name FROM "_gatehouse_migrations"');
  const applied = new Set(rows.map((r) => r.name));
  return migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
}
