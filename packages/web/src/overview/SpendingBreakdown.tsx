/**
 * The overview's figures by gate, model, API key and end user over its window: the top ones, most
 * expensive first, each a link to its requests in the logs, and the rest summed as "other".
 */
import { type FragmentOf, readFragment } from 'gql.tada';
import { Link } from 'wouter';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatCount, formatMs, formatUsd } from '../logs/format.ts';
import { type LogFilters, logsSearch } from '../logs/logSearch.ts';
import { TableWrap } from '../ui/TableWrap.tsx';
import type { OverviewWindow } from './overviewWindow.ts';

export const SpendingBreakdownFragment = graphql(`
  fragment SpendingBreakdown on SpendingBreakdown {
    top {
      id
      name
      requests
      errors
      costUsd
      p50LatencyMs
      p95LatencyMs
    }
    other {
      count
      requests
      errors
      costUsd
    }
  }
`);

type Breakdown = ResultOf<typeof SpendingBreakdownFragment>;
type Share = Breakdown['top'][number];

type BreakdownRef = FragmentOf<typeof SpendingBreakdownFragment>;

/** The four tables, two by two. */
export function SpendingPanels({
  byGate,
  byModel,
  byKey,
  byEndUser,
  timeWindow,
}: {
  byGate: BreakdownRef;
  byModel: BreakdownRef;
  byKey: BreakdownRef;
  byEndUser: BreakdownRef;
  timeWindow: OverviewWindow;
}) {
  const logsOf = (filters: LogFilters) =>
    `/logs${logsSearch({ filters: { ...filters, range: timeWindow }, back: [] })}`;
  return (
    <div className="spending-panels">
      <SpendingTable
        title="By gate"
        column="Gate"
        breakdown={readFragment(SpendingBreakdownFragment, byGate)}
        label={(s) => s.name ?? (s.id ? s.id.slice(0, 8) : 'No gate')}
        href={(s) => (s.id ? logsOf({ gateId: s.id }) : null)}
      />
      <SpendingTable
        title="By model"
        column="Model"
        breakdown={readFragment(SpendingBreakdownFragment, byModel)}
        label={(s) => s.id ?? 'None'}
        href={(s) => (s.id ? `/logs?${new URLSearchParams({ model: s.id, range: timeWindow })}` : null)}
      />
      <SpendingTable
        title="Spending by API key"
        column="Key"
        breakdown={readFragment(SpendingBreakdownFragment, byKey)}
        label={(s) => s.name ?? (s.id ? s.id.slice(0, 8) : 'No key (the dashboard)')}
        href={(s) => (s.id ? logsOf({ apiKeyId: s.id }) : null)}
      />
      <SpendingTable
        title="Spending by end user"
        column="End user"
        breakdown={readFragment(SpendingBreakdownFragment, byEndUser)}
        label={(s) => s.id ?? 'None named'}
        href={(s) => (s.id ? logsOf({ endUser: s.id }) : null)}
      />
    </div>
  );
}

function SpendingTable({
  title,
  column,
  breakdown,
  label,
  href,
}: {
  title: string;
  column: string;
  breakdown: Breakdown;
  label: (share: Share) => string;
  href: (share: Share) => string | null;
}) {
  const { top, other } = breakdown;
  return (
    <section className="spending-panel" aria-label={title}>
      <h2>{title}</h2>
      {top.length === 0 ? (
        <p className="muted">None in this window.</p>
      ) : (
        <TableWrap label={title}>
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{column}</th>
                <th scope="col" className="numeric">
                  Requests
                </th>
                <th scope="col" className="numeric">
                  Errors
                </th>
                <th scope="col" className="numeric">
                  Cost
                </th>
                <th scope="col" className="numeric">
                  p50 / p95
                </th>
              </tr>
            </thead>
            <tbody>
              {top.map((share) => {
                const to = href(share);
                return (
                  <tr key={share.id ?? ''}>
                    <td data-label={column}>
                      {to ? (
                        <Link href={to}>{label(share)}</Link>
                      ) : (
                        <span className="muted">{label(share)}</span>
                      )}
                    </td>
                    <td data-label="Requests" className="numeric">
                      {formatCount(share.requests)}
                    </td>
                    <td data-label="Errors" className="numeric">
                      {formatCount(share.errors)}
                    </td>
                    <td data-label="Cost" className="numeric">
                      {formatUsd(share.costUsd)}
                    </td>
                    <td data-label="p50 / p95" className="numeric">
                      {share.p50LatencyMs !== null && share.p95LatencyMs !== null
                        ? `${formatMs(share.p50LatencyMs)} / ${formatMs(share.p95LatencyMs)}`
                        : '—'}
                    </td>
                  </tr>
                );
              })}
              {other.count > 0 && (
                <tr>
                  <td data-label={column} className="muted">
                    Other ({formatCount(other.count)} more)
                  </td>
                  <td data-label="Requests" className="numeric">
                    {formatCount(other.requests)}
                  </td>
                  <td data-label="Errors" className="numeric">
                    {formatCount(other.errors)}
                  </td>
                  <td data-label="Cost" className="numeric">
                    {formatUsd(other.costUsd)}
                  </td>
                  <td data-label="p50 / p95" className="numeric muted">
                    —
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
