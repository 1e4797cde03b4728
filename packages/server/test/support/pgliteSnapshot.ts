/**
 * Vitest's global setup for the server suite on PGlite: one in-memory database, migrated, dumped
 * to a file that every test file's database then starts from (openTestDatabase). A new PGlite
 * spends some 2 s in initdb and the migrations, once per test file otherwise; from the dump it
 * opens in about a quarter of that. Made at the start of every run from the migrations as they are,
 * by the same migrate(); migrations.test.ts and the e2e servers still start from empty ones.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { migrationsDir } from '../../src/config.ts';
import type { SqlDriver } from '../../src/db/driver.ts';
import { migrate } from '../../src/db/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database's dump, or '' on PostgreSQL. */
    pgliteSnapshot: string;
  }
}

export default async function setup(project: TestProject) {
  if (project.config.env?.GATEHOUSE_TEST_DATABASE_URL) {
    project.provide('pgliteSnapshot', '');
    return;
  }
  const db = await PGlite.create('memory://');
  const driver = {
    exec: async (sql: string) => {
      await db.exec(sql);
    },
    query: async (sql: string, params?: unknown[]) => (await db.query(sql, params)).rows,
  } as unknown as SqlDriver;
  await migrate(driver, migrationsDir);
  const dump = await db.dumpDataDir('none');
  await db.close();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-snapshot-'));
  const file = path.join(dir, 'migrated.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteSnapshot', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
