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

export async function purgeExpiredLogs(
  now = new Date(),
): Promise<{ entries: number; rollups: number; videoJobs: number }> {
  let entries = 0;
  let rollups = 0;
  let videoJobs = 0;
  const known = Object.keys(PLANS);
  for (const plan of Object.values(PLANS)) {
    const cutoff = new Date(now.getTime() - plan.logRetentionDays * DAY_MS).toISOString();
    // Users on a plan this code does not know are held to the free plan, as planOf() does.
    const planFilter = `(u.plan = $1 OR ($1 = 'free' AND u.plan <> ALL($3::text[])))`;
    for (;;) {
      const deleted = await sql().query<{ id: string }>(
        `DELETE FROM log_entries WHERE id IN (
           SELECT l.id FROM log_entries l JOIN users u ON u.id = l.user_id
           WHERE ${planFilter} AND l.created_at < $2::timestamptz LIMIT ${BATCH})
         RETURNING id`,
        [plan.id, cutoff, known],
      );
      entries += deleted.length;
      if (deleted.length < BATCH) break;
    }
    const gone = await sql().query<{ hour: Date }>(
      `DELETE FROM log_rollups r USING users u
       WHERE u.id = r.user_id AND ${planFilter} AND r.hour < $2::timestamptz RETURNING r.hour`,
      [plan.id, cutoff, known],
    );
    rollups += gone.length;
    const goneModels = await sql().query<{ hour: Date }>(
      `DELETE FROM model_rollups r USING users u
       WHERE u.id = r.user_id AND ${planFilter} AND r.hour < $2::timestamptz RETURNING r.hour`,
      [plan.id, cutoff, known],
    );
    rollups += goneModels.length;
    for (;;) {
      const deleted = await sql().query<{ id: string }>(
        `DELETE FROM video_jobs WHERE id IN (
           SELECT j.id FROM video_jobs j JOIN users u ON u.id = j.user_id
           WHERE ${planFilter} AND j.created_at < $2::timestamptz LIMIT ${VIDEO_BATCH})
         RETURNING id`,
        [plan.id, cutoff, known],
      );
      videoJobs += deleted.length;
      if (deleted.length < VIDEO_BATCH) break;
    }
  }
  return { entries, rollups, videoJobs };
}

/** Runs the purge now and then every `intervalMs`; stop() ends it. */
export function scheduleRetention(intervalMs = 3_600_000) {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = purgeExpiredLogs().catch((error) => console.error('retention: purge failed', error));
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
