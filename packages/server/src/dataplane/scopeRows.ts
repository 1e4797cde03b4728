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
import { type HeldSpending, periodStart, type SpendingPeriod } from '../domain/spending.ts';
import { groupCommit, writtenBehind } from './groupCommit.ts';
import { settledAfter } from './spending.ts';
import { chargesMore, MAX_USD, recordableUsd, settledUsd } from './usage.ts';

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
 * One statement on a row for every call that arrived while the one before it ran (groupCommit.ts),
 * as spending.ts does for a gate's: settlements first, each replacing its hold with what the
 * request cost (in the hold's period; once the row has moved on, the cost is added to the period
 * it is in); then reservations and additions in order, a reservation granted when it fits beside
 * those before it under its limit (a limit reached refuses even a request that costs nothing), an
 * addition (no limit: a key whose limit only alerts) always counted. One statement at a time per
 * row: as a statement or two per request, each taking the row's lock and commit, a key with a
 * limit served ~250-340 requests a second at one connection and fell seconds behind at 1,000 a
 * second, on both databases.
 */
function rowStep(kind: RowScope['kind']): string {
  const { table, where, extra } = TABLE[kind];
  const s = 2 + extra;
  const [amounts, limits, now, periods] = [s, s + 1, s + 2, s + 3];
  const fits = `(asked.lim IS NULL OR (scope.current + walk.total < asked.lim
                                  AND scope.current + walk.total + asked.amount <= asked.lim))`;
  return `WITH RECURSIVE asked AS (
    SELECT amount, lim, ord FROM unnest($${amounts}::numeric[], $${limits}::numeric[]) WITH ORDINALITY AS t(amount, lim, ord)
  ), locked AS (
    SELECT spending_current, spending_period_start, cardinality($${periods}::timestamptz[]) > 0 AS settling
    FROM ${table} WHERE ${where} FOR NO KEY UPDATE
  ), scope AS (
    SELECT locked.*, settled.after,
           CASE WHEN spending_period_start < $${now}::timestamptz THEN 0 ELSE settled.after END AS current
    FROM locked CROSS JOIN LATERAL ${settledAfter(periods)}
  ), walk AS (
    SELECT 0::bigint AS ord, 0::numeric AS total, ARRAY[]::boolean[] AS granted, ARRAY[]::numeric[] AS spent
    FROM scope
    UNION ALL
    SELECT asked.ord, walk.total + CASE WHEN ${fits} THEN asked.amount ELSE 0 END,
           walk.granted || ${fits}, walk.spent || (scope.current + walk.total)
    FROM walk JOIN asked ON asked.ord = walk.ord + 1 CROSS JOIN scope
  ), decided AS (
    SELECT walk.*, (true = ANY(walk.granted)) AS any_granted FROM walk ORDER BY ord DESC LIMIT 1
  ), written AS (
    -- A batch that only refuses writes nothing (a flood of requests on a spent key adds no row
    -- versions); the row is still locked for the statement, so nothing changes it meanwhile.
    UPDATE ${table} SET
      spending_current = CASE WHEN decided.any_granted THEN LEAST(scope.current + decided.total, ${MAX_USD})
                              ELSE scope.after END,
      spending_period_start = CASE WHEN decided.any_granted THEN GREATEST(scope.spending_period_start, $${now}::timestamptz)
                                   ELSE ${table}.spending_period_start END
    FROM decided CROSS JOIN scope
    WHERE ${where} AND (decided.any_granted OR scope.settling)
    RETURNING ${table}.spending_period_start
  )
  SELECT decided.granted, decided.spent,
         coalesce((SELECT spending_period_start FROM written), scope.spending_period_start) AS period_start
  FROM decided CROSS JOIN scope`;
}

const ROW_STEP = { key: rowStep('key'), end_user: rowStep('end_user') };

/** A call on a row: a reservation under a limit, an addition (no limit), or a settlement. */
type RowCall =
  | { row: RowScope; amount: number; limit: number | null }
  | { row: RowScope; hold: RowReservation; actual: number };

type Decided = RowReservation | RowRefusal | undefined;

/** A row's name among a process's counters: a key's id, or a gate's id and an end user. */
export const keyRowKey = (keyId: string) => `k:${keyId}`;
export const rowKeyOf = (row: RowScope) =>
  row.kind === 'key' ? keyRowKey(row.keyId) : `e:${row.gateId}:${row.endUser}`;

async function runRowStep(row: RowScope, calls: RowCall[]) {
  const asked = calls.filter((c): c is Extract<RowCall, { amount: number }> => 'amount' in c);
  const settling = calls.filter((c): c is Extract<RowCall, { hold: RowReservation }> => 'hold' in c);
  return sql().query<{ granted: boolean[]; spent: (string | number)[]; period_start: Date | string }>(
    ROW_STEP[row.kind],
    [
      ...idParams(row),
      asked.map((c) => c.amount.toFixed(10)),
      asked.map((c) => (c.limit === null ? null : c.limit.toFixed(10))),
      rowPeriodStart(row.period, new Date()),
      settling.map((c) => new Date(c.hold.periodStart).toISOString()),
      settling.map((c) => c.hold.amount.toFixed(10)),
      settling.map((c) => settledUsd(c.actual, c.hold.amount).toFixed(10)),
    ],
    { prepare: true },
  );
}

const rowStepBatch = groupCommit<RowCall, Decided>(async (_rowKey, calls) => {
  // The newest call's row names the period (a key's settings may have changed meanwhile).
  const row = (calls.at(-1) as RowCall).row;
  let [found] = await runRowStep(row, calls);
  if (!found && row.kind === 'end_user' && calls.some((c) => 'amount' in c)) {
    // An end user seen for the first time: their counter starts at zero (it may have been made
    // meanwhile by another process: nothing to do then).
    await sql().query(
      `INSERT INTO end_user_spending (gate_id, end_user, spending_current, spending_period_start)
       VALUES ($1::uuid, $2, 0, $3::timestamptz) ON CONFLICT DO NOTHING`,
      [row.gateId, row.endUser, rowPeriodStart(row.period, new Date())],
    );
    [found] = await runRowStep(row, calls);
  }
  let at = 0;
  return calls.map((call): Decided => {
    if (!('amount' in call)) return undefined;
    const i = at++;
    if (call.limit === null) return undefined;
    const limit = call.limit;
    // No row: a key gone may spend nothing.
    if (!found) return { refused: true, reached: true, remaining: 0, limit, spent: limit };
    if (found.granted[i])
      return { row: call.row, amount: call.amount, periodStart: new Date(found.period_start) };
    const spent = Number(found.spent[i] ?? limit);
    const remaining = Math.max(0, limit - spent);
    return { refused: true, reached: remaining <= 0, remaining, limit, spent };
  });
});

/**
 * Reserves `amount` in the row's current period if it fits under `limit`, or tells why not. A
 * limit reached refuses even a request that costs nothing. A settlement made before it in this
 * process is applied before it is decided.
 */
export async function reserveRow(
  row: RowScope,
  limit: number,
  amount: number,
): Promise<RowReservation | RowRefusal> {
  return (await rowStepBatch(rowKeyOf(row), { row, amount, limit })) as RowReservation | RowRefusal;
}

const behind = writtenBehind();

/**
 * Replaces a hold with what the request cost (0 when it failed or another scope refused it):
 * written behind the answer when it gives back part of the hold (writtenBehind). What cannot be
 * recorded is reported, never thrown: the cost was paid.
 */
export function settleRow(reservation: RowReservation, actual: number): Promise<void> {
  const { row } = reservation;
  const key = rowKeyOf(row);
  const waitedFor = chargesMore(actual, reservation.amount);
  // Behind the answer, it may wait a moment for the next reservation on the row (groupCommit).
  const write = rowStepBatch(key, { row, hold: reservation, actual }, { linger: !waitedFor }).then(
    () => undefined,
    (error) => console.error('spending: could not record', actual, 'USD for', key, error),
  );
  return behind.add(key, write, waitedFor);
}

/** Resolves once every row settlement made so far in this process is in the database. */
export const rowSettlementsLanded = () => behind.landed();

/** Adds a cost where nothing is reserved (a key whose limit only alerts). */
export async function addToRow(row: RowScope, amount: number): Promise<void> {
  const usd = recordableUsd(amount);
  if (usd <= 0) return;
  await rowStepBatch(rowKeyOf(row), { row, amount: usd, limit: null });
}

/**
 * A key's and an end user's counters, as a request's limits use them (limits.ts): by default one
 * statement on the row per batch of calls (this module); the embedded database's ledger keeps
 * them in memory instead (localLedger.ts).
 */
export type RowCounters = {
  reserve(row: RowScope, limit: number, amount: number): Promise<RowReservation | RowRefusal>;
  settle(reservation: RowReservation, actual: number): Promise<void>;
  add(row: RowScope, amount: number): Promise<void>;
};

export const SQL_ROWS: RowCounters = { reserve: reserveRow, settle: settleRow, add: addToRow };

/** The row's spending in the period starting at `start` (a Redis counter's starting point). */
export async function rowSpent(row: RowScope, start: Date): Promise<number | null> {
  return (await rowCounter(row, start))?.current ?? null;
}

/**
 * The row's counter as a statement on it would see it in the period starting at `start`: what it
 * spent (zero when its own period is older) and its period's start (the later of the two, as a
 * statement writes it: a `total` key's row keeps the day it started). An end user not seen yet has
 * spent nothing; a key gone: null, it may spend nothing.
 */
export async function rowCounter(row: RowScope, start: Date): Promise<HeldSpending | null> {
  const { table, where, extra } = TABLE[row.kind];
  const [found] = await sql().query<{ c: string | number; s: Date | string }>(
    `SELECT ${current(2 + extra)} AS c, GREATEST(spending_period_start, $${2 + extra}::timestamptz) AS s
     FROM ${table} WHERE ${where}`,
    [...idParams(row), start],
  );
  if (!found) return row.kind === 'end_user' ? { current: 0, periodStart: start } : null;
  return { current: Number(found.c), periodStart: new Date(found.s) };
}

/** What a reservation settled in Redis charged a row: written here once per reservation. */
export async function applyRowSettlement(
  reservationId: string,
  row: RowScope,
  start: Date,
  amount: number,
): Promise<void> {
  const { table, where, extra } = TABLE[row.kind];
  const scope = rowKeyOf(row);
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
  // over (the row moved on): nothing changes. A `total` period has no next one: NULL, a WHEN never met
  // (a far date instead, written as JavaScript writes it, `+275760-…`, is no timestamp to PGlite).
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
    [...idParams(row), start, nextStart(row.period, start), amount.toFixed(10), reservationId, scope],
  );
}
