/**
 * Spending against a gate's limit, in single SQL statements so that concurrent requests (and
 * several gateway processes sharing PostgreSQL) can never push a block gate past its limit.
 * Periods reset lazily: the first write of a new period starts the counter at zero.
 */
import { sql } from '../db/client.ts';
import { SQL_PERIOD_START as PERIOD_START } from '../domain/spending.ts';
import { groupCommit } from './groupCommit.ts';
import { MAX_USD, recordableUsd, settledUsd } from './usage.ts';

const CURRENT = `(CASE WHEN spending_period_start < ${PERIOD_START} THEN 0 ELSE spending_current END)`;

export type Reservation = { gateId: string; amount: number; periodStart: Date };

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
 * A row's counter once a statement's settlements are applied (`settled.after`, from the row
 * locked as `locked`, with `settling` true when there are any): each hold taken back in its own
 * period, nothing once the row has moved on, and what each request cost added; kept within
 * $0–MAX_USD. The settlements are three arrays from parameter `$p` on: the holds' periods, their
 * amounts and the costs. A gate's statement and a key's or an end user's (scopeRows.ts) share it.
 */
export const settledAfter = (p: number) => `(
      SELECT CASE WHEN NOT locked.settling THEN locked.spending_current
        ELSE LEAST(GREATEST(locked.spending_current
          + coalesce(sum(CASE WHEN s.p = locked.spending_period_start THEN -s.r ELSE 0 END), 0)
          + LEAST(coalesce(sum(s.a), 0), ${MAX_USD}), 0), ${MAX_USD}) END AS after
      FROM unnest($${p}::timestamptz[], $${p + 1}::numeric[], $${p + 2}::numeric[]) AS s(p, r, a)
    ) AS settled`;

/**
 * One statement on a gate's row for every call that arrived while the one before it ran:
 * settlements first, then reservations.
 *
 * Settlements replace their holds with what the requests cost (in the hold's period; once the
 * row has moved on, the cost is added to the period it is in). Reservations are decided in
 * order, each one that fits beside those granted before it: exactly what reserving them one by
 * one would do. A request too big for what is left is refused without suspending the gate, so a
 * smaller one after it may fit; the gate is suspended when its spending (holds included)
 * reaches the limit, in the same statement. NO KEY UPDATE: the lock a log insert's foreign key
 * takes on the gate does not wait.
 *
 * Both in one statement because both take the gate's row: as two statements, one queue each, a
 * busy gate's reservations and settlements waited on each other's row lock and commit.
 * Measured on 2 cores, PostgreSQL, a block gate at 1,000 req/s: 2,251 reservation statements of
 * ~2.2 calls and 2,496 settlement statements in 5 s, each ~1.8 ms, and the gateway's p50 was
 * 6.1–9.4 ms against 1.6–1.7 ms on a gate without a limit.
 */
const GATE_STEP = `WITH RECURSIVE asked AS (
    SELECT amount, ord FROM unnest($2::numeric[]) WITH ORDINALITY AS t(amount, ord)
  ), locked AS (
    SELECT spending_current, spending_period_start, spending_limit, spending_enforcement,
           ${PERIOD_START} AS period_now, cardinality($3::timestamptz[]) > 0 AS settling
    FROM gates WHERE id = $1::uuid FOR NO KEY UPDATE
  ), gate AS (
    SELECT locked.*, settled.after, (spending_enforcement = 'block' AND spending_limit IS NOT NULL) AS blocking,
           spending_limit AS lim,
           CASE WHEN spending_period_start < period_now THEN 0 ELSE after END AS current
    FROM locked CROSS JOIN LATERAL ${settledAfter(3)}
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
    spending_current = CASE WHEN decided.any_granted THEN gate.current + decided.total ELSE gate.after END,
    spending_period_start = CASE WHEN decided.any_granted THEN GREATEST(gate.spending_period_start, gate.period_now)
                                 ELSE gates.spending_period_start END,
    spending_status = CASE
      WHEN decided.any_granted THEN
        CASE WHEN gate.blocking AND gate.current + decided.total >= gate.lim THEN 'suspended' ELSE 'active' END
      WHEN gate.settling THEN
        CASE WHEN gate.blocking AND gate.spending_period_start >= gate.period_now AND gate.after >= gate.lim
             THEN 'suspended' ELSE 'active' END
      ELSE gates.spending_status END
  FROM decided CROSS JOIN gate
  WHERE id = $1::uuid
  RETURNING decided.granted, decided.remaining, decided.spent, gates.spending_limit, gates.spending_period_start`;

/** A call on a gate's row: a reservation's amount, or a settlement. */
type GateCall = { amount: number } | { reservation: Reservation; actual: number };

const gateStep = groupCommit<GateCall, Reserved | undefined>(async (gateId, calls) => {
  const amounts: string[] = [];
  const periods: string[] = [];
  const held: string[] = [];
  const costs: string[] = [];
  for (const call of calls) {
    if ('amount' in call) {
      amounts.push(call.amount.toFixed(10));
      continue;
    }
    const { reservation, actual } = call;
    periods.push(new Date(reservation.periodStart).toISOString());
    held.push(reservation.amount.toFixed(10));
    costs.push(settledUsd(actual, reservation.amount).toFixed(10));
  }
  const [row] = await sql().query<{
    granted: boolean[];
    remaining: (string | number)[];
    spent: (string | number)[];
    spending_limit: string | number | null;
    spending_period_start: Date;
  }>(GATE_STEP, [gateId, amounts, periods, held, costs], { prepare: true });
  let i = 0;
  return calls.map((call): Reserved | undefined => {
    if (!('amount' in call)) return undefined;
    const at = i++;
    // No row: the gate is gone, and nothing may be spent on it.
    if (!row) return { refused: true, reached: true, remaining: 0, limit: 0, spent: 0 };
    if (row.granted[at]) return { gateId, amount: call.amount, periodStart: row.spending_period_start };
    const remaining = Number(row.remaining[at] ?? 0);
    return {
      refused: true,
      reached: remaining <= 0,
      remaining,
      limit: Number(row.spending_limit ?? 0),
      spent: Number(row.spent[at] ?? 0),
    };
  });
});

/**
 * Reserves `amount` (the request's worst-case cost) on a block gate, or tells why it cannot: the
 * limit is reached (the gate is suspended), or this amount does not fit in what is left. A
 * settlement made before it in this process is applied before it is decided.
 */
export async function reserve(gateId: string, amount: number): Promise<Reserved> {
  return (await gateStep(gateId, { amount })) as Reserved;
}

export type Settlement = {
  /** Spending has reached an alert_only limit. */
  overLimit: boolean;
  /** This request is the one that crossed it (first time this period): alert once. */
  crossed: boolean;
  /** This period's spending after the charge, where the ledger knows it. */
  current?: number;
};

/**
 * Replaces a reservation with the actual cost (0 when the request failed). `linger`: it is written
 * behind the answer (ledger.ts), so it may wait a moment for the client's next reservation on the
 * gate (groupCommit).
 */
export async function settle(
  reservation: Reservation,
  actual: number,
  opts: { linger?: boolean } = {},
): Promise<void> {
  await gateStep(reservation.gateId, { reservation, actual }, opts);
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
