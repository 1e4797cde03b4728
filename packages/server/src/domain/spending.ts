/** Spending periods and the spendingStatus rule; shared by gate updates and the data plane. */

export type SpendingPeriod = 'daily' | 'monthly';
export type SpendingEnforcement = 'alert_only' | 'block';
export type SpendingStatus = 'active' | 'suspended';

/** Start (UTC) of the period that contains `at`. */
export function periodStart(period: SpendingPeriod, at: Date): Date {
  return period === 'daily'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/**
 * A gate is suspended when it blocks at a limit that this period's spending has reached, or that
 * a refused reservation has suspended it at this period (`suspendedThisPeriod`): the data plane
 * refuses a request whose worst case would pass the limit, so spending itself may stay under it.
 */
export function spendingStatusFor(gate: {
  spendingLimit: number | null;
  spendingEnforcement: SpendingEnforcement;
  spendingCurrent: number;
  suspendedThisPeriod?: boolean;
}): SpendingStatus {
  return gate.spendingEnforcement === 'block' &&
    gate.spendingLimit !== null &&
    (gate.spendingCurrent >= gate.spendingLimit || gate.suspendedThisPeriod === true)
    ? 'suspended'
    : 'active';
}

/**
 * Spending as it stands at `now`: a period that has ended counts as zero. The stored counter is
 * reset lazily by the next write, so reads never need one.
 */
export function effectiveSpending(
  gate: { spendingLimitPeriod: SpendingPeriod; spendingPeriodStart: Date; spendingCurrent: number },
  now: Date,
): { current: number; periodStart: Date } {
  const start = periodStart(gate.spendingLimitPeriod, now);
  return start.getTime() > gate.spendingPeriodStart.getTime()
    ? { current: 0, periodStart: start }
    : { current: gate.spendingCurrent, periodStart: gate.spendingPeriodStart };
}
