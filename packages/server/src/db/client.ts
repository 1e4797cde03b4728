import { migrationsDir } from '../config.ts';
import { PrismaClient } from '../generated/prisma/client.ts';
import { openPglite, openPostgres, type SqlDriver } from './driver.ts';
import { migrate } from './migrate.ts';
import { isNewDataDir } from './pgliteThread.ts';
import { withRoundTrips } from './roundTrips.ts';

export type Database = { prisma: PrismaClient; driver: SqlDriver; close(): Promise<void> };

/**
 * The process's Prisma client. Modules import it (it is not carried in GraphQL context);
 * `connectDatabase` sets it once at start-up.
 */
export let prisma: PrismaClient = new Proxy({} as PrismaClient, {
  get() {
    throw new Error('connectDatabase() has not been called');
  },
});
export let driver: SqlDriver | undefined;

let txTimeoutMs = 5_000;
/** The time limit of one transaction (Config.transactionTimeoutMs); see transaction.ts. */
export const transactionTimeoutMs = () => txTimeoutMs;

/**
 * The raw driver, for the few statements on the gateway's hot path (spending, log batches):
 * Prisma's per-query overhead there is several times the statement's own cost.
 */
export function sql(): SqlDriver {
  if (!driver) throw new Error('connectDatabase() has not been called');
  return driver;
}

/**
 * Creates a new data directory and migrates it in a child process that then ends. PostgreSQL's
 * initdb grows PGlite's WebAssembly memory to some 600 MB, and WebAssembly memory never shrinks;
 * on a thread that then ended, ~140 MB of what it freed stayed with this process (glibc keeps
 * freed memory), where a process's end gives all of it back. The thread that serves opens the
 * finished directory.
 */
async function installPglite(dataDir: string): Promise<void> {
  const installer = await openPglite(dataDir, { process: true });
  try {
    await migrate(installer, migrationsDir);
  } finally {
    await installer.close();
  }
}

export async function connectDatabase(opts: {
  databaseUrl?: string | undefined;
  dataDir: string;
  migrate?: boolean;
  schema?: string;
  /** PostgreSQL only: queries asked to be prepared are (Config.preparedStatements); on unless false. */
  preparedStatements?: boolean;
  /** Config.transactionTimeoutMs; 5 s (Prisma's own default) unless given. */
  transactionTimeoutMs?: number;
  /** PGlite in memory only: the dump of a data directory to start from (openPglite). */
  from?: Blob | undefined;
}): Promise<Database> {
  const migrating = opts.migrate !== false;
  if (!opts.databaseUrl && migrating && isNewDataDir(opts.dataDir)) await installPglite(opts.dataDir);
  const sql = withRoundTrips(
    opts.databaseUrl
      ? await openPostgres(opts.databaseUrl, opts.schema, opts.preparedStatements !== false)
      : await openPglite(opts.dataDir, { from: opts.from }),
  );
  if (migrating) await migrate(sql, migrationsDir);
  const client = new PrismaClient({ adapter: sql.adapter });
  prisma = client;
  driver = sql;
  txTimeoutMs = opts.transactionTimeoutMs ?? 5_000;
  return {
    prisma: client,
    driver: sql,
    close: async () => {
      await client.$disconnect();
      await sql.close();
    },
  };
}
