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

/** Why a block gate refused a reservation, with the figures its message gives. */
export type Refusal = {
  refused: true;
  /** Spending (with the holds of requests under way) has reached the limit: the gate is suspended. */
  reached: boolean;
  /** What is left of the limit (0 when reached). */
  remaining: number;
  limit: number;
  /** This period's spending with the holds of requests under way, as the refusal saw it. */
  spent: number;
};

/** A reservation made, or why not. */
export type Reserved = Reservation | Refusal;

export const isRefusal = (r: Reserved): r is Refusal => 'refused' in r;

/**
 * Reserves a batch of worst-case amounts in one statement, in order, each one that fits beside
 * those granted before it: exactly what reserving them one by one would do. A request too big
 * for what is left is refused without suspending the gate, so a smaller one after it may fit.
 * The gate is suspended when its spending (holds included) reaches the limit, in the same
 * statement. NO KEY UPDATE: the lock a log insert's foreign key takes on the gate does not wait.
 */
const RESERVE = `WITH RECURSIVE asked AS (
    SELECT amount, ord FROM unnest($2::numeric[]) WITH ORDINALITY AS t(amount, ord)
  ), gate AS (
    SELECT ${CURRENT} AS current, spending_limit AS lim,
           (spending_enforcement = 'block' AND spending_limit IS NOT NULL) AS blocking
    FROM gates WHERE id = $1::uuid FOR NO KEY UPDATE
  ), walk AS (
    SELECT 0::bigint AS ord, 0::numeric AS total, ARRAY[]::boolean[] AS granted, ARRAY[]::numeric[] AS remaining,
           ARRAY[]::numeric[] AS spent
    FROM gate
    UNION ALL
    SELECT asked.ord,
           walk.total + CASE WHEN NOT gate.blocking OR (gate.current + walk.total < gate.lim
                                  AND gate.current + walk.total + asked.amount <= gate.lim)
                             THEN asked.amount ELSE 0 END,
           -- A limit reached refuses even a request that costs nothing.
           walk.granted || (NOT gate.blocking OR (gate.current + walk.total < gate.lim
                                                  AND gate.current + walk.total + asked.amount <= gate.lim)),
           walk.remaining || GREATEST(coalesce(gate.lim, 0) - gate.current - walk.total, 0),
           walk.spent || (gate.current + walk.total)
    FROM walk JOIN asked ON asked.ord = walk.ord + 1 CROSS JOIN gate
  ), decided AS (
    SELECT walk.*, (true = ANY(walk.granted)) AS any_granted FROM walk ORDER BY ord DESC LIMIT 1
  )
  UPDATE gates SET
    spending_current = CASE WHEN decided.any_granted THEN ${CURRENT} + decided.total ELSE spending_current END,
    spending_period_start = CASE WHEN decided.any_granted THEN GREATEST(spending_period_start, ${PERIOD_START})
                                 ELSE spending_period_start END,
    spending_status = CASE WHEN NOT decided.any_granted THEN spending_status
      WHEN spending_enforcement = 'block' AND spending_limit IS NOT NULL
       AND ${CURRENT} + decided.total >= spending_limit THEN 'suspended'
      ELSE 'active' END
  FROM decided
  WHERE id = $1::uuid
  RETURNING decided.granted, decided.remaining, decided.spent, spending_limit, spending_period_start`;

const reserveBatch = groupCommit<number, Reserved>(async (gateId, amounts) => {
  const [row] = await sql().query<{
    granted: boolean[];
    remaining: (string | number)[];
    spent: (string | number)[];
    spending_limit: string | number | null;
    spending_period_start: Date;
  }>(RESERVE, [gateId, amounts.map((a) => a.toFixed(10))], { prepare: true });
  return amounts.map((amount, i): Reserved => {
    // No row: the gate is gone, and nothing may be spent on it.
    if (!row) return { refused: true, reached: true, remaining: 0, limit: 0, spent: 0 };
    if (row.granted[i]) return { gateId, amount, periodStart: row.spending_period_start };
    const remaining = Number(row.remaining[i] ?? 0);
    return {
      refused: true,
      reached: remaining <= 0,
      remaining,
      limit: Number(row.spending_limit ?? 0),
      spent: Number(row.spent[i] ?? 0),
    };
  });
});

/**
 * Reserves `amount` (the request's worst-case cost) on a block gate, or tells why it cannot: the
 * limit is reached (the gate is suspended), or this amount does not fit in what is left.
 */
export function reserve(gateId: string, amount: number): Promise<Reserved> {
  return reserveBatch(gateId, amount);
}

export type Settlement = {
  /** Spending has reached an alert_only limit. */
  overLimit: boolean;
  /** This request is the one that crossed it (first time this period): alert once. */
  crossed: boolean;
  /** This period's spending after the charge, where the ledger knows it. */
  current?: number;
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
      `UPDATE gates SET spending_current = settled.current,
         spending_status = CASE WHEN spending_enforcement = 'block' AND spending_limit IS NOT NULL
           AND spending_period_start >= ${PERIOD_START} AND settled.current >= spending_limit
           THEN 'suspended' ELSE 'active' END
       FROM (SELECT id AS settled_id, LEAST(GREATEST(CASE WHEN spending_period_start = $2 THEN spending_current - $3::numeric
                                                          ELSE spending_current END + $4::numeric, 0), ${MAX_USD}) AS current
             FROM gates WHERE id = $1::uuid FOR NO KEY UPDATE) AS settled
       WHERE id = settled.settled_id`,
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
  const rows = await sql().query<{ over: boolean; crossed: boolean; current: string | number }>(
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
               (spending_alerted_at IS DISTINCT FROM before.alerted_before) AS crossed,
               spending_current AS current`,
    [gateId, recordableUsd(amount).toFixed(10)],
    { prepare: true },
  );
  const row = rows[0];
  return {
    overLimit: row?.over ?? false,
    crossed: row?.crossed ?? false,
    current: Number(row?.current ?? 0),
  };
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
    flush: () => flush(),
    async close() {
      clearInterval(timer);
      await flush(true);
    },
  };
}
