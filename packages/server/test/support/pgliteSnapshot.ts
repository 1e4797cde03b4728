/**
 * Vitest's global setup for the server suite on PGlite: one in-memory database, migrated, dumped
 * to a file that every test file's database then starts from (openTestDatabase). A new PGlite
 * spends some 2 s in initdb and the migrations, once per test file otherwise; from the dump it
 * opens in about a quarter of that. Made at the start of every run from the migrations as they are,
 * by the same migrate(); migrations.test.ts and the e2e servers still start from empty ones.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { migrationsDir } from '../../src/config.ts';
import { migrate } from '../../src/db/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database's dump, or '' on PostgreSQL. */
    pgliteSnapshot: string;
  }
}

const PREFIX = 'gatehouse-test-snapshot-';

/**
 * Dumps a run left behind (41 MB each) when it was killed before its teardown: those of a process
 * that is gone, by the pid in their name (or with none, as the first ones were named), and an
 * hour old, so that a run this machine cannot see (another pid namespace) or an older checkout's
 * run is never cut short. One it may not remove (another user's) stays.
 */
function removeLeftBehind() {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of readdirSync(os.tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(PREFIX.length))?.[1]);
    if (pid && isAlive(pid)) continue;
    const dir = path.join(os.tmpdir(), name);
    try {
      if (statSync(dir).mtimeMs < hourAgo) rmSync(dir, { recursive: true, force: true });
    } catch {}
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export default async function setup(project: TestProject) {
  if (project.config.env?.GATEHOUSE_TEST_DATABASE_URL) {
    project.provide('pgliteSnapshot', '');
    return;
  }
  removeLeftBehind();
  const db = await PGlite.create('memory://');
  await migrate(
    {
      exec: async (sql) => {
        await db.exec(sql);
      },
      query: async <T>(sql: string, params?: unknown[]) => (await db.query<T>(sql, params)).rows,
    },
    migrationsDir,
  );
  const dump = await db.dumpDataDir('none');
  await db.close();
  const dir = mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`));
  const file = path.join(dir, 'migrated.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteSnapshot', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
