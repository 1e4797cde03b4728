import { Link } from 'wouter';
import { formatUsd, formatUtc } from '../logs/format.ts';
import { type GateSpending, periodWords, spendingState } from './spending.ts';

/** Why a suspended gate refuses requests, in one sentence. */
function suspendedReason(gate: GateSpending & { spendingLimit: number }): string {
  const { adjective, noun } = periodWords(gate.spendingLimitPeriod);
  const limit = formatUsd(gate.spendingLimit);
  const spent = formatUsd(gate.spendingCurrent);
  // A block gate refuses a request whose worst-case cost would pass the limit, so it may be
  // suspended with a little of the limit left.
  const detail =
    gate.spendingCurrent >= gate.spendingLimit
      ? `${spent} spent ${noun}`
      : `${spent} spent ${noun}, too little left for a request's worst-case cost`;
  return `Suspended: this gate reached its ${adjective} limit of ${limit} (${detail}); requests get 402 spending_limit_exceeded.`;
}

function overAlertText(gate: GateSpending & { spendingLimit: number }): string {
  const { adjective, noun } = periodWords(gate.spendingLimitPeriod);
  return `Over its ${adjective} limit: ${formatUsd(gate.spendingCurrent)} spent ${noun} against ${formatUsd(gate.spendingLimit)}. Requests still pass (alert only), with the x-gatehouse-spending-warning header.`;
}

export function SpendingBadge({ gate }: { gate: GateSpending }) {
  switch (spendingState(gate)) {
    case 'suspended':
      return <span className="badge danger">suspended</span>;
    case 'over-alert':
      return <span className="badge warning">over limit</span>;
    default:
      return <span className="badge ok">active</span>;
  }
}

/** The gates list's spending cell: the badge, what was spent, and what to do when it matters. */
export function SpendingCell({ gate }: { gate: GateSpending & { id: string } }) {
  const state = spendingState(gate);
  const { noun } = periodWords(gate.spendingLimitPeriod);
  const limit = gate.spendingLimit;
  return (
    <div className="spending-cell">
      <SpendingBadge gate={gate} />
      <div className="muted small">
        {formatUsd(gate.spendingCurrent)}
        {limit === null ? ' · no limit' : ` of ${formatUsd(limit)} ${noun}`}
      </div>
      {state === 'suspended' && limit !== null && (
        <p className="small spending-why danger-text">
          {suspendedReason({ ...gate, spendingLimit: limit })}{' '}
          <Link href={`/gates/${gate.id}?tab=spending`}>Raise or remove the limit</Link>, or wait until{' '}
          {formatUtc(gate.spendingResetsAt)}.
        </p>
      )}
      {state === 'over-alert' && limit !== null && (
        <p className="small spending-why warning-text">{overAlertText({ ...gate, spendingLimit: limit })}</p>
      )}
    </div>
  );
}

/** The gate page's banner for a suspended gate, or one over its alert-only limit; nothing otherwise. */
export function SpendingAlert({ gate, onEditLimit }: { gate: GateSpending; onEditLimit: () => void }) {
  const state = spendingState(gate);
  const limit = gate.spendingLimit;
  if (limit === null || (state !== 'suspended' && state !== 'over-alert')) return null;
  if (state === 'over-alert') {
    return (
      <div className="banner warning spending-alert" role="status">
        <div>
          <strong>Spending warning.</strong> {overAlertText({ ...gate, spendingLimit: limit })}
        </div>
        <button type="button" className="button" onClick={onEditLimit}>
          Review the limit
        </button>
      </div>
    );
  }
  return (
    <div className="banner error spending-alert" role="alert">
      <div>
        <p>
          <strong>{suspendedReason({ ...gate, spendingLimit: limit })}</strong>
        </p>
        <p>
          To resume it, raise or remove the limit, or wait until the period resets on{' '}
          {formatUtc(gate.spendingResetsAt)}.
        </p>
      </div>
      <button type="button" className="button" onClick={onEditLimit}>
        Raise or remove the limit
      </button>
    </div>
  );
}

/** The spending so far this period, read-only, under the limit on the Spending Limits tab. */
export function SpendingNow({ gate }: { gate: GateSpending }) {
  return (
    <dl className="summary-list" aria-label="Spending this period">
      <div>
        <dt>Spent this period</dt>
        <dd>{formatUsd(gate.spendingCurrent)}</dd>
      </div>
      <div>
        <dt>Period started</dt>
        <dd>{formatUtc(gate.spendingPeriodStart)}</dd>
      </div>
      <div>
        <dt>Resets</dt>
        <dd>{formatUtc(gate.spendingResetsAt)}</dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd>
          <SpendingBadge gate={gate} />
        </dd>
      </div>
    </dl>
  );
}
