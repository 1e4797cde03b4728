/**
 * Spending counters of the scopes that are not gates: an API key's own limit (api_keys) and an end
 * user's spending through a gate (end_user_spending). Every decision is one SQL statement on the
 * scope's row, as the SQL ledger does for gates, so concurrent requests (and processes sharing
 * PostgreSQL) never push one past its limit; the embedded database runs them the same way. With
 * Redis, the shared ledger decides and these rows are its durable copy (applySettled).
 * Periods reset lazily: the first write of a new period starts the counter at zero; a key's
 * `total` period never ends.
 */
import { sql } from '../db/client.ts';
import { periodStart, type SpendingPeriod } from '../domain/spending.ts';
import { MAX_USD, recordableUsd, settledUsd } from './usage.ts';

export type RowScope =
  | { kind: 'key'; keyId: string; period: string }
  | { kind: 'end_user'; gateId: string; endUser: string; period: string };

/** A row's hold: what was reserved, in which period. */
export type RowReservation = { row: RowScope; amount: number; periodStart: Date };

export type RowRefusal = { refused: true; reached: boolean; remaining: number; limit: number; spent: number };

/** Start of the period that contains `at`; a key's `total` period starts at the epoch. */
export function rowPeriodStart(period: string, at: Date): Date {
  return period === 'total' ? new Date(0) : periodStart(period as SpendingPeriod, at);
}

/** The next period's start; never, for `total`. */
function nextStart(period: string, start: Date): Date | null {
  if (period === 'total') return null;
  return period === 'daily'
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

const TABLE = {
  key: { table: 'api_keys', where: 'id = $1::uuid', extra: 0 },
  end_user: { table: 'end_user_spending', where: 'gate_id = $1::uuid AND end_user = $2', extra: 1 },
} as const;

function idParams(row: RowScope): unknown[] {
  return row.kind === 'key' ? [row.keyId] : [row.gateId, row.endUser];
}

/** The counter as it stands in `start`'s period: what an older period spent counts as zero. */
const current = (p: number) =>
  `(CASE WHEN spending_period_start < $${p}::timestamptz THEN 0 ELSE spending_current END)`;

/**
 * Reserves `amount` in the row's current period if it fits under `limit`, or tells why not. A
 * limit reached refuses even a request that costs nothing.
 */
export async function reserveRow(
  row: RowScope,
  limit: number,
  amount: number,
): Promise<RowReservation | RowRefusal> {
  const { table, where, extra } = TABLE[row.kind];
  const start = rowPeriodStart(row.period, new Date());
  const ids = idParams(row);
  if (row.kind === 'end_user') {
    await sql().query(
      `INSERT INTO end_user_spending (gate_id, end_user, spending_current, spending_period_start)
       VALUES ($1::uuid, $2, 0, $3::timestamptz) ON CONFLICT DO NOTHING`,
      [row.gateId, row.endUser, start],
    );
  }
  const s = 2 + extra;
  // The period the hold lands in is the row's own, as the statement leaves it (another may have
  // moved it on meanwhile): its settlement replaces the hold only in that period.
  const rows = await sql().query<{ period_start: Date | string }>(
    `UPDATE ${table} SET spending_current = ${current(s)} + $${s + 1}::numeric,
       spending_period_start = GREATEST(spending_period_start, $${s}::timestamptz)
     WHERE ${where} AND ${current(s)} < $${s + 2}::numeric AND ${current(s)} + $${s + 1}::numeric <= $${s + 2}::numeric
     RETURNING spending_period_start AS period_start`,
    [...ids, start, amount.toFixed(10), limit.toFixed(10)],
  );
  if (rows[0]) return { row, amount, periodStart: new Date(rows[0].period_start) };
  const [now] = await sql().query<{ c: string | number }>(
    `SELECT ${current(s)} AS c FROM ${table} WHERE ${where}`,
    [...ids, start],
  );
  const spent = Number(now?.c ?? limit);
  const remaining = Math.max(0, limit - spent);
  return { refused: true, reached: remaining <= 0, remaining, limit, spent };
}

/** Replaces a hold with what the request cost (0 when it failed or another scope refused it). */
export async function settleRow(reservation: RowReservation, actual: number): Promise<void> {
  const { row } = reservation;
  const { table, where, extra } = TABLE[row.kind];
  const s = 2 + extra;
  // In the hold's period the hold is replaced; once the row has moved on, the cost is added to
  // the period it is in (as the gates' ledgers do).
  await sql().query(
    `UPDATE ${table} SET
       spending_current = LEAST(GREATEST(CASE WHEN spending_period_start = $${s}::timestamptz THEN spending_current - $${s + 1}::numeric
                                              ELSE spending_current END + $${s + 2}::numeric, 0), ${MAX_USD})
     WHERE ${where}`,
    [
      ...idParams(row),
      reservation.periodStart,
      reservation.amount.toFixed(10),
      settledUsd(actual, reservation.amount).toFixed(10),
    ],
  );
}

/** Adds a cost where nothing is reserved (a key whose limit only alerts). */
export async function addToRow(row: RowScope, amount: number): Promise<void> {
  const usd = recordableUsd(amount);
  if (usd <= 0) return;
  const { table, where, extra } = TABLE[row.kind];
  const s = 2 + extra;
  await sql().query(
    `UPDATE ${table} SET spending_current = LEAST(${current(s)} + $${s + 1}::numeric, ${MAX_USD}),
       spending_period_start = GREATEST(spending_period_start, $${s}::timestamptz)
     WHERE ${where}`,
    [...idParams(row), rowPeriodStart(row.period, new Date()), usd.toFixed(10)],
  );
}

/** The row's spending in the period starting at `start` (a Redis counter's starting point). */
export async function rowSpent(row: RowScope, start: Date): Promise<number | null> {
  const { table, where, extra } = TABLE[row.kind];
  const [found] = await sql().query<{ c: string | number }>(
    `SELECT ${current(2 + extra)} AS c FROM ${table} WHERE ${where}`,
    [...idParams(row), start],
  );
  // An end user not seen yet has spent nothing; a key gone may spend nothing.
  if (!found) return row.kind === 'end_user' ? 0 : null;
  return Number(found.c);
}

/** What a reservation settled in Redis charged a row: written here once per reservation. */
export async function applyRowSettlement(
  reservationId: string,
  row: RowScope,
  start: Date,
  amount: number,
): Promise<void> {
  const { table, where, extra } = TABLE[row.kind];
  const scope = row.kind === 'key' ? `k:${row.keyId}` : `e:${row.gateId}:${row.endUser}`;
  if (row.kind === 'end_user') {
    // The gate may have been deleted since: its end users' counters went with it.
    await sql().query(
      `INSERT INTO end_user_spending (gate_id, end_user, spending_current, spending_period_start)
       SELECT $1::uuid, $2, 0, $3::timestamptz WHERE EXISTS (SELECT 1 FROM gates WHERE id = $1::uuid)
       ON CONFLICT DO NOTHING`,
      [row.gateId, row.endUser, start],
    );
  }
  const s = 2 + extra;
  // The entry's period still running: the counter grows; a new one: it starts there; one that is
  // over (the row moved on): nothing changes.
  await sql().query(
    `WITH fresh AS (
       INSERT INTO spending_settlements (reservation_id, scope) VALUES ($${s + 3}::uuid, $${s + 4})
       ON CONFLICT DO NOTHING RETURNING 1
     )
     UPDATE ${table} SET
       spending_current = CASE WHEN spending_period_start >= $${s + 1}::timestamptz THEN spending_current
                               WHEN spending_period_start >= $${s}::timestamptz THEN LEAST(spending_current + $${s + 2}::numeric, ${MAX_USD})
                               ELSE LEAST($${s + 2}::numeric, ${MAX_USD}) END,
       spending_period_start = GREATEST(spending_period_start, $${s}::timestamptz)
     WHERE ${where} AND EXISTS (SELECT 1 FROM fresh)`,
    [
      ...idParams(row),
      start,
      nextStart(row.period, start) ?? new Date(8.64e15),
      amount.toFixed(10),
      reservationId,
      scope,
    ],
  );
}
