/**
 * Spending against a gate's limit, in single SQL statements so that concurrent requests (and
 * several gateway processes sharing PostgreSQL) can never push a block gate past its limit.
 * Periods reset lazily: the first write of a new period starts the counter at zero.
 */
import { sql } from '../db/client.ts';
import { SQL_PERIOD_START as PERIOD_START } from '../domain/spending.ts';
import { MAX_USD, recordableUsd, settledUsd } from './usage.ts';

const CURRENT = `(CASE WHEN spending_period_start < ${PERIOD_START} THEN 0 ELSE spending_current END)`;

export type Reservation = { gateId: string; amount: number; periodStart: Date };

/**
 * Group commit, per gate: one statement at a time, carrying every call that arrived while the
 * one before it ran. Each call's row lock is taken once per batch instead of once per request,
 * so a busy gate's requests stop queueing on it one by one.
 */
function groupCommit<T, R>(run: (gateId: string, batch: T[]) => Promise<R[]>) {
  type Waiting = { item: T; resolve(r: R): void; reject(e: unknown): void };
  const queues = new Map<string, Waiting[]>();
  const busy = new Set<string>();

  async function drain(gateId: string): Promise<void> {
    busy.add(gateId);
    try {
      for (let batch = queues.get(gateId); batch && batch.length > 0; batch = queues.get(gateId)) {
        queues.delete(gateId);
        try {
          const results = await run(
            gateId,
            batch.map((w) => w.item),
          );
          batch.forEach((w, i) => {
            w.resolve(results[i] as R);
          });
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      busy.delete(gateId);
    }
  }

  return (gateId: string, item: T): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      const queue = queues.get(gateId) ?? [];
      queue.push({ item, resolve, reject });
      queues.set(gateId, queue);
      if (!busy.has(gateId)) void drain(gateId);
    });
}

/**
 * Reserves a batch of worst-case amounts, in order, in one statement: the longest prefix that
 * fits under the limit is reserved (amounts are positive, so the ones that fit are a prefix),
 * exactly what reserving them one by one would do, since the first refusal suspends the gate.
 * The suspension is part of the same statement, so a batch is decided and recorded whole.
 * NO KEY UPDATE: the lock a log insert's foreign key takes on the gate does not wait for it.
 */
const RESERVE = `WITH asked AS (
    SELECT ord, sum(amount) OVER (ORDER BY ord) AS running
    FROM unnest($2::numeric[]) WITH ORDINALITY AS t(amount, ord)
  ), gate AS (
    SELECT ${CURRENT} AS current, spending_limit, spending_enforcement,
           (spending_status = 'active' OR spending_period_start < ${PERIOD_START}) AS open
    FROM gates WHERE id = $1::uuid FOR NO KEY UPDATE
  ), fits AS (
    SELECT max(asked.ord) AS n, max(asked.running) AS total FROM asked, gate
    WHERE gate.open AND (gate.spending_enforcement <> 'block' OR gate.spending_limit IS NULL
                         OR gate.current + asked.running <= gate.spending_limit)
  )
  UPDATE gates SET
    spending_current = CASE WHEN fits.n IS NULL THEN spending_current ELSE ${CURRENT} + fits.total END,
    spending_period_start = CASE WHEN fits.n IS NULL THEN spending_period_start
                                 ELSE GREATEST(spending_period_start, ${PERIOD_START}) END,
    spending_status = CASE
      WHEN coalesce(fits.n, 0) < cardinality($2::numeric[])
       AND spending_enforcement = 'block' AND spending_limit IS NOT NULL THEN 'suspended'
      WHEN fits.n IS NULL THEN spending_status
      ELSE 'active' END
  FROM fits
  WHERE id = $1::uuid
  RETURNING coalesce(fits.n, 0)::integer AS n, spending_period_start`;

const reserveBatch = groupCommit<number, Reservation | null>(async (gateId, amounts) => {
  const [row] = await sql().query<{ n: number; spending_period_start: Date }>(
    RESERVE,
    [gateId, amounts.map((a) => a.toFixed(10))],
    { prepare: true },
  );
  const accepted = row?.n ?? 0;
  return amounts.map((amount, i) =>
    row && i < accepted ? { gateId, amount, periodStart: row.spending_period_start } : null,
  );
});

/**
 * Reserves `amount` (the request's worst-case cost) on a block gate. Returns null, and suspends
 * the gate, when the reservation would pass the limit or the gate is suspended already.
 */
export function reserve(gateId: string, amount: number): Promise<Reservation | null> {
  return reserveBatch(gateId, amount);
}

export type Settlement = {
  /** Spending has reached an alert_only limit. */
  overLimit: boolean;
  /** This request is the one that crossed it (first time this period): alert once. */
  crossed: boolean;
};

const settleBatch = groupCommit<{ reservation: Reservation; actual: number }, void>(async (gateId, batch) => {
  // One statement per period the reservations were made in (almost always one).
  const byPeriod = new Map<number, { periodStart: Date; reserved: number; actual: number }>();
  for (const { reservation, actual } of batch) {
    const key = new Date(reservation.periodStart).getTime();
    const sum = byPeriod.get(key) ?? { periodStart: reservation.periodStart, reserved: 0, actual: 0 };
    sum.reserved += reservation.amount;
    sum.actual += settledUsd(actual, reservation.amount);
    byPeriod.set(key, sum);
  }
  for (const sum of byPeriod.values()) {
    await sql().query(
      `UPDATE gates SET spending_current = LEAST(GREATEST(
         CASE WHEN spending_period_start = $2 THEN spending_current - $3::numeric ELSE spending_current END + $4::numeric, 0), ${MAX_USD})
       WHERE id = $1::uuid`,
      [gateId, sum.periodStart, sum.reserved.toFixed(10), Math.min(sum.actual, MAX_USD).toFixed(10)],
      { prepare: true },
    );
  }
  return batch.map(() => undefined);
});

/** Replaces a reservation with the actual cost (0 when the request failed). */
export function settle(reservation: Reservation, actual: number): Promise<void> {
  return settleBatch(reservation.gateId, { reservation, actual });
}

/** Adds a cost to a gate without a block limit, and tells whether an alert_only limit is reached. */
export async function addSpending(gateId: string, amount: number): Promise<Settlement> {
  // `crossed` compares the alert time with the one the locked row had before: comparing it with
  // now() fails on PostgreSQL, whose now() has microseconds the millisecond column does not keep.
  const rows = await sql().query<{ over: boolean; crossed: boolean }>(
    `UPDATE gates SET
       spending_current = LEAST(${CURRENT} + $2::numeric, ${MAX_USD}),
       spending_period_start = GREATEST(spending_period_start, ${PERIOD_START}),
       spending_alerted_at = CASE
         WHEN spending_enforcement = 'alert_only' AND spending_limit IS NOT NULL
          AND ${CURRENT} + $2::numeric >= spending_limit
          AND (spending_alerted_at IS NULL OR spending_alerted_at < ${PERIOD_START})
         THEN now() ELSE spending_alerted_at END
     FROM (SELECT id AS locked_id, spending_alerted_at AS alerted_before
           FROM gates WHERE id = $1::uuid FOR NO KEY UPDATE) AS before
     WHERE id = before.locked_id
     RETURNING (spending_limit IS NOT NULL AND spending_current >= spending_limit) AS over,
               (spending_alerted_at IS DISTINCT FROM before.alerted_before) AS crossed`,
    [gateId, recordableUsd(amount).toFixed(10)],
    { prepare: true },
  );
  return { overLimit: rows[0]?.over ?? false, crossed: rows[0]?.crossed ?? false };
}

/**
 * Costs of gates without a limit, summed in memory and written every `intervalMs`: nothing is
 * enforced on them, so the hot path need not wait for a write. A cost the database refuses
 * (unreachable, say) stays pending and goes with the next write: it was paid, so it is counted.
 * (A write that committed but whose answer was lost would be counted twice: an overcount on a
 * gate that enforces nothing, where dropping it would leave a paid cost out.)
 */
export function createSpendingAccumulator(intervalMs = 250) {
  const pending = new Map<string, number>();
  let flushing: Promise<void> = Promise.resolve();
  /** Failing since: reported once per outage, not on every tick. */
  let failing = false;
  const flush = (last = false) => {
    flushing = flushing.then(async () => {
      const batch = [...pending];
      pending.clear();
      for (const [gateId, amount] of batch) {
        try {
          await addSpending(gateId, amount);
          if (failing) console.error('spending: recording again');
          failing = false;
        } catch (error) {
          if (last) {
            console.error(
              'spending: could not record',
              amount,
              'USD for gate',
              gateId,
              'before closing',
              error,
            );
            continue;
          }
          pending.set(gateId, (pending.get(gateId) ?? 0) + amount);
          if (!failing) console.error('spending: cannot record; costs stay pending until it can', error);
          failing = true;
        }
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
      const usd = recordableUsd(amount);
      if (usd > 0) pending.set(gateId, Math.min((pending.get(gateId) ?? 0) + usd, MAX_USD));
    },
    async close() {
      clearInterval(timer);
      await flush(true);
    },
  };
}
