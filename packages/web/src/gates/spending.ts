/** A gate's spending as the dashboard tells it: the state it is in and when it resets. */
import type { GateDetailData } from './gateDetail.ts';

/** The spending fields the gate list and the gate page both ask for (choices as GraphQL enum values). */
export type GateSpending = Pick<
  GateDetailData,
  | 'spendingLimit'
  | 'spendingLimitPeriod'
  | 'spendingEnforcement'
  | 'spendingCurrent'
  | 'spendingPeriodStart'
  // When the counter starts again from zero: the server's answer, not worked out here.
  | 'spendingResetsAt'
  | 'spendingStatus'
>;

/**
 * suspended: requests are refused (HTTP 402) until the limit is raised or lifted, or the period
 * resets; over-alert: an alert_only gate at or past its limit, whose requests still pass.
 */
export type SpendingState = 'suspended' | 'over-alert' | 'within-limit' | 'no-limit';

export function spendingState(gate: GateSpending): SpendingState {
  if (gate.spendingStatus === 'SUSPENDED') return 'suspended';
  if (gate.spendingLimit === null) return 'no-limit';
  if (gate.spendingEnforcement === 'ALERT_ONLY' && gate.spendingCurrent >= gate.spendingLimit)
    return 'over-alert';
  return 'within-limit';
}

export const periodWords = (period: GateSpending['spendingLimitPeriod']) =>
  period === 'DAILY' ? { adjective: 'daily', noun: 'today' } : { adjective: 'monthly', noun: 'this month' };
