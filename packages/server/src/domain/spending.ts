/** Spending periods and the spendingStatus rule; shared by gate updates and the data plane. */
import type { KeySpendingPeriod } from '@gatehouse/rules/account';
import { EARLIEST_DATE } from '@gatehouse/rules/dates';
import type { SPENDING_ENFORCEMENTS, SPENDING_PERIODS, SPENDING_STATUSES } from '@gatehouse/rules/gate';
import { sql } from '../db/client.ts';

export type SpendingPeriod = (typeof SPENDING_PERIODS)[number];
export type SpendingEnforcement = (typeof SPENDING_ENFORCEMENTS)[number];
export type SpendingStatus = (typeof SPENDING_STATUSES)[number];
export type { KeySpendingPeriod };

/**
 * Start (UTC) of the period that contains `at`. A key's `total` period is its whole life: it
 * started at the epoch and never rolls over.
 */
export function periodStart(period: KeySpendingPeriod, at: Date): Date {
  if (period === 'total') return EARLIEST_DATE;
  return period === 'daily'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/**
 * A gate is suspended when it blocks at a limit that this period's spending (with the holds of
 * requests under way) has reached. A request whose worst case does not fit in what is left is
 * refused on its own (402) and suspends nothing: smaller requests still pass. One rule for the
 * control plane's reads and both ledgers' writes.
 */
export function spendingStatusFor(gate: {
  spendingLimit: number | null;
  spendingEnforcement: SpendingEnforcement;
  spendingCurrent: number;
}): SpendingStatus {
  return gate.spendingEnforcement === 'block' &&
    gate.spendingLimit !== null &&
    gate.spendingCurrent >= gate.spendingLimit
    ? 'suspended'
    : 'active';
}

/**
 * Spending as it stands at `now`: a period that has ended counts as zero. The stored counter is
 * reset lazily by the next write, so reads never need one.
 */
export function effectiveSpending<P extends KeySpendingPeriod>(
  gate: { spendingLimitPeriod: P; spendingPeriodStart: Date; spendingCurrent: number },
  now: Date,
): { current: number; periodStart: Date; resetsAt: P extends 'total' ? null : Date } {
  const start = periodStart(gate.spendingLimitPeriod, now);
  const rolledOver = start.getTime() > gate.spendingPeriodStart.getTime();
  return {
    current: rolledOver ? 0 : gate.spendingCurrent,
    // The period's own start (a UTC day or month), not when the counter was first written.
    periodStart: start,
    resetsAt: nextPeriodStart(gate.spendingLimitPeriod, start) as P extends 'total' ? null : Date,
  };
}

/** When the period that began at `start` ends; null for `total`, which never does. */
export function nextPeriodStart(period: SpendingPeriod, start: Date): Date;
export function nextPeriodStart(period: KeySpendingPeriod, start: Date): Date | null;
export function nextPeriodStart(period: KeySpendingPeriod, start: Date): Date | null {
  if (period === 'total') return null;
  return period === 'daily'
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/**
 * Re-evaluates a gate's spendingStatus after its limit, enforcement or period changed: raising
 * or lifting a limit resumes a suspended gate, lowering it to this period's spending suspends a
 * blocking one. What a ledger does on settingsChanged when the row holds all it knows.
 */
export async function reevaluateSpendingStatus(gateId: string): Promise<void> {
  await sql().query(
    `UPDATE gates SET spending_status = CASE
       WHEN spending_enforcement = 'block' AND spending_limit IS NOT NULL
        AND spending_period_start >= ${SQL_PERIOD_START} AND spending_current >= spending_limit
       THEN 'suspended' ELSE 'active' END
     WHERE id = $1::uuid`,
    [gateId],
  );
}

/** The start of the gate's current period (UTC day or month), computed by the database. */
export const SQL_PERIOD_START = `(date_trunc(CASE WHEN spending_limit_period = 'daily' THEN 'day' ELSE 'month' END, now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;

export type HeldSpending = { current: number; periodStart: Date };

/**
 * What the control plane asks of the data plane's spending ledger (runtime.ts hands it over):
 * the counters it holds that the gate's row may not show yet, and that a gate's limit, period
 * or enforcement changed, to be decided again at once.
 */
export type SpendingCounters = {
  held(gateId: string): HeldSpending | undefined;
  /** A key's counter as the ledger holds it, when it keeps keys' counters (the embedded database's). */
  heldKey?(keyId: string): HeldSpending | undefined;
  settingsChanged(gateId: string): Promise<void>;
  /** Resolves once every charge made so far is in the database (those written behind included). */
  settled(): Promise<void>;
};

/** The gate's spending as its row stores it. */
export function storedSpendingOf(gate: {
  spendingCurrent: { toString(): string } | number;
  spendingPeriodStart: Date;
}): HeldSpending {
  return { current: Number(gate.spendingCurrent), periodStart: gate.spendingPeriodStart };
}
