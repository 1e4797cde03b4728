/**
 * Spending against a gate's limit, in single SQL statements so that concurrent requests (and
 * several gateway processes sharing PostgreSQL) can never push a block gate past its limit.
 * Periods reset lazily: the first write of a new period starts the counter at zero.
 */
import { sql } from '../db/client.ts';
import { SQL_PERIOD_START as PERIOD_START } from '../domain/spending.ts';

const CURRENT = `(CASE WHEN spending_period_start < ${PERIOD_START} THEN 0 ELSE spending_current END)`;

export type Reservation = { gateId: string; amount: number; periodStart: Date };

/**
 * Reserves `amount` (the request's worst-case cost) on a block gate. Returns null, and suspends
 * the gate, when the reservation would pass the limit or the gate is suspended already.
 */
export async function reserve(gateId: string, amount: number): Promise<Reservation | null> {
  const rows = await sql().query<{ spending_period_start: Date }>(
    `UPDATE gates SET
       spending_current = ${CURRENT} + $2::numeric,
       spending_status = 'active',
       spending_period_start = GREATEST(spending_period_start, ${PERIOD_START})
     WHERE id = $1::uuid
       AND (spending_status = 'active' OR spending_period_start < ${PERIOD_START})
       AND (spending_enforcement <> 'block' OR spending_limit IS NULL OR ${CURRENT} + $2::numeric <= spending_limit)
     RETURNING spending_period_start`,
    [gateId, amount],
  );
  const row = rows[0];
  if (row) return { gateId, amount, periodStart: row.spending_period_start };
  await sql().query(
    `UPDATE gates SET spending_status = 'suspended'
     WHERE id = $1::uuid AND spending_enforcement = 'block' AND spending_limit IS NOT NULL`,
    [gateId],
  );
  return null;
}

export type Settlement = {
  /** Spending has reached an alert_only limit. */
  overLimit: boolean;
  /** This request is the one that crossed it (first time this period): alert once. */
  crossed: boolean;
};

/** Replaces a reservation with the actual cost (0 when the request failed). */
export async function settle(reservation: Reservation, actual: number): Promise<void> {
  await sql().query(
    `UPDATE gates SET spending_current = GREATEST(
       CASE WHEN spending_period_start = $2 THEN spending_current - $3::numeric ELSE spending_current END + $4::numeric, 0)
     WHERE id = $1::uuid`,
    [reservation.gateId, reservation.periodStart, reservation.amount, actual],
  );
}

/** Adds a cost to a gate without a block limit, and tells whether an alert_only limit is reached. */
export async function addSpending(gateId: string, amount: number): Promise<Settlement> {
  // `crossed` compares the alert time with the one the locked row had before: comparing it with
  // now() fails on PostgreSQL, whose now() has microseconds the millisecond column does not keep.
  const rows = await sql().query<{ over: boolean; crossed: boolean }>(
    `UPDATE gates SET
       spending_current = ${CURRENT} + $2::numeric,
       spending_period_start = GREATEST(spending_period_start, ${PERIOD_START}),
       spending_alerted_at = CASE
         WHEN spending_enforcement = 'alert_only' AND spending_limit IS NOT NULL
          AND ${CURRENT} + $2::numeric >= spending_limit
          AND (spending_alerted_at IS NULL OR spending_alerted_at < ${PERIOD_START})
         THEN now() ELSE spending_alerted_at END
     FROM (SELECT id AS locked_id, spending_alerted_at AS alerted_before
           FROM gates WHERE id = $1::uuid FOR UPDATE) AS before
     WHERE id = before.locked_id
     RETURNING (spending_limit IS NOT NULL AND spending_current >= spending_limit) AS over,
               (spending_alerted_at IS DISTINCT FROM before.alerted_before) AS crossed`,
    [gateId, amount],
  );
  return { overLimit: rows[0]?.over ?? false, crossed: rows[0]?.crossed ?? false };
}

/**
 * Costs of gates without a limit, summed in memory and written every `intervalMs`: nothing is
 * enforced on them, so the hot path need not wait for a write.
 */
export function createSpendingAccumulator(intervalMs = 250) {
  const pending = new Map<string, number>();
  let flushing: Promise<void> = Promise.resolve();
  const flush = () => {
    flushing = flushing.then(async () => {
      const batch = [...pending];
      pending.clear();
      for (const [gateId, amount] of batch) {
        await addSpending(gateId, amount).catch((error) => {
          console.error('spending: could not record', amount, 'for gate', gateId, error);
        });
      }
    });
    return flushing;
  };
  const timer = setInterval(() => {
    if (pending.size > 0) void flush();
  }, intervalMs);
  timer.unref();
  return {
    add(gateId: string, amount: number) {
      if (amount > 0) pending.set(gateId, (pending.get(gateId) ?? 0) + amount);
    },
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

export type SpendingAccumulator = ReturnType<typeof createSpendingAccumulator>;
