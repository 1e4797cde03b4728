import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { reachable } from './packages/server/test/support/reachable.ts';

/**
 * The server suite runs twice: on PGlite always, and on PostgreSQL wherever one answers
 * (CI: 127.0.0.1:5432, database `test`). GATEHOUSE_REQUIRE_POSTGRES=1 makes a missing one fatal.
 */
const postgresUrl = process.env.GATEHOUSE_TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/**
 * GATEHOUSE_TEST_DATABASES (`pglite`, `postgres`, or both, comma-separated; both when unset) picks
 * the server suite's databases: the test command runs each once, on a different Node. Asked for
 * PostgreSQL where none answers (and none is required), the suite runs on PGlite instead.
 */
const asked = new Set((process.env.GATEHOUSE_TEST_DATABASES ?? 'pglite,postgres').split(','));

export default defineConfig(async () => {
  const withPostgres = asked.has('postgres') && (await reachable(postgresUrl, 5432));
  if (asked.has('postgres') && !withPostgres) {
    if (process.env.GATEHOUSE_REQUIRE_POSTGRES === '1') {
      throw new Error(`PostgreSQL is required but ${postgresUrl} does not answer`);
    }
    console.warn(`PostgreSQL at ${postgresUrl} does not answer: running the server suite on PGlite only`);
  }
  const withPglite = asked.has('pglite') || !withPostgres;
  const server = (name: string, env: Record<string, string>) => ({
    extends: './packages/server/vitest.config.ts',
    test: { name, root: './packages/server', env },
  });
  return {
    test: {
      // One test file per core, not Vitest's default of one fewer: a file's own work waits on
      // its database thread, child processes and sockets (one at a time, the suite kept 1.2 of
      // 2 cores busy), so on 2 cores the default ran one file at a time.
      maxWorkers: availableParallelism(),
      projects: [
        ...(withPglite ? [server('server:pglite', { GATEHOUSE_TEST_DATABASE_URL: '' })] : []),
        ...(withPostgres ? [server('server:postgres', { GATEHOUSE_TEST_DATABASE_URL: postgresUrl })] : []),
        './packages/web/vitest.config.ts',
      ],
    },
  };
});
