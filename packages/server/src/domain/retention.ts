/**
 * Log retention: each plan keeps log entries (and their hourly totals, per gate and per model) for logRetentionDays;
 * what is older is deleted in bounded batches, so a large backlog never holds one long lock. A
 * video job (its row holds the video itself) goes with them: the log entry it answered is gone.
 */
import { sql } from '../db/client.ts';
import { PLANS } from './plans.ts';

const BATCH = 5000;
/** Video jobs hold their videos (megabytes each): fewer a statement. */
const VIDEO_BATCH = 100;
const DAY_MS = 86_400_000;

// Users on a plan this code does not know are held to the free plan, as planOf() does.
// $1: the plan, $2: its cutoff, $3: the plans this code knows.
const PLAN_FILTER = `(u.plan = $1 OR ($1 = 'free' AND u.plan <> ALL($3::text[])))`;

/** Deletes the plan's rows of `table` created before the cutoff, `batch` a statement; how many. */
async function purgeRows(table: 'log_entries' | 'video_jobs', batch: number, params: unknown[]) {
  let count = 0;
  for (;;) {
    const deleted = await sql().query<{ id: string }>(
      `DELETE FROM ${table} WHERE id IN (
         SELECT t.id FROM ${table} t JOIN users u ON u.id = t.user_id
         WHERE ${PLAN_FILTER} AND t.created_at < $2::timestamptz LIMIT ${batch})
       RETURNING id`,
      params,
    );
    count += deleted.length;
    if (deleted.length < batch) return count;
  }
}

/**
 * PGlite has no autovacuum: the room of deleted rows is never reused until a VACUUM, so without
 * one its data directory only grows, whatever retention deletes (measured: 20,000 entries in and
 * out three times took a table from 12.7 to 37.9 MB with no row left). After a purge that deleted
 * rows, the tables it deleted from are vacuumed (an entry's files go with it). On PGlite this
 * holds the database thread meanwhile, log writes and dashboard reads waiting, about as long as
 * the deletes themselves: on a 300,000-entry (450 MB) log, 0.35-0.55 s after 10,000-30,000
 * entries in and out (the deletes 0.6 s), 0.9 s the first time, since VACUUM reads only the
 * pages changed since the last one (and each index once). No ANALYZE: it took 1.7 s on that log,
 * and the planner's estimate of the log's size comes from VACUUM too. PostgreSQL's autovacuum
 * does this work there, on its own connections.
 */
async function reclaim(tables: string[]) {
  if (tables.length === 0 || sql().kind !== 'pglite') return;
  // The purge stands either way; the next purge that deletes from these tables tries again.
  await sql()
    .exec(`VACUUM ${tables.join(', ')}`)
    .catch((error) => console.error(`retention: VACUUM ${tables.join(', ')} failed`, error));
}

/** Deletes the plan's hourly totals in `table` before the cutoff; how many. */
async function purgeTotals(table: 'log_rollups' | 'model_rollups', params: unknown[]) {
  const gone = await sql().query<{ hour: Date }>(
    `DELETE FROM ${table} r USING users u
     WHERE u.id = r.user_id AND ${PLAN_FILTER} AND r.hour < $2::timestamptz RETURNING r.hour`,
    params,
  );
  return gone.length;
}

export async function purgeExpiredLogs(
  now = new Date(),
): Promise<{ entries: number; rollups: number; videoJobs: number }> {
  let entries = 0;
  let rollups = 0;
  let videoJobs = 0;
  const known = Object.keys(PLANS);
  for (const plan of Object.values(PLANS)) {
    const cutoff = new Date(now.getTime() - plan.logRetentionDays * DAY_MS).toISOString();
    const params = [plan.id, cutoff, known];
    entries += await purgeRows('log_entries', BATCH, params);
    rollups += await purgeTotals('log_rollups', params);
    rollups += await purgeTotals('model_rollups', params);
    videoJobs += await purgeRows('video_jobs', VIDEO_BATCH, params);
  }
  await reclaim([
    ...(entries > 0 ? ['log_entries', 'log_media'] : []),
    ...(rollups > 0 ? ['log_rollups', 'model_rollups'] : []),
    ...(videoJobs > 0 ? ['video_jobs'] : []),
  ]);
  return { entries, rollups, videoJobs };
}

/**
 * Forgets which Redis settlements were written to PostgreSQL once no copy of them can come back:
 * Redis's own marker of a settlement lives two days; these are kept three.
 */
export async function purgeSettlements(now = new Date()): Promise<number> {
  const gone = await sql().query(
    'DELETE FROM spending_settlements WHERE created_at < $1::timestamptz RETURNING scope',
    [new Date(now.getTime() - 3 * DAY_MS).toISOString()],
  );
  await reclaim(gone.length > 0 ? ['spending_settlements'] : []);
  return gone.length;
}

/** Runs the purge now and then every `intervalMs`; stop() ends it. */
export function scheduleRetention(intervalMs = 3_600_000) {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = purgeExpiredLogs()
      .then(() => purgeSettlements())
      .catch((error) => console.error('retention: purge failed', error));
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
