/**
 * The overview's spending by API key and by end user over its window: the top spenders, most
 * expensive first, each a link to its requests in the logs, and the rest summed as "other".
 */
import { type FragmentOf, readFragment } from 'gql.tada';
import { Link } from 'wouter';
import { graphql, type ResultOf } from '../graphql.ts';
import { formatCount, formatUsd } from '../logs/format.ts';
import { type LogFilters, logsSearch } from '../logs/logSearch.ts';
import type { OverviewWindow } from './overviewWindow.ts';

export const SpendingBreakdownFragment = graphql(`
  fragment SpendingBreakdown on SpendingBreakdown {
    top {
      id
      name
      requests
      costUsd
    }
    other {
      count
      requests
      costUsd
    }
  }
`);

type Breakdown = ResultOf<typeof SpendingBreakdownFragment>;
type Share = Breakdown['top'][number];

/** The two tables side by side. */
export function SpendingPanels({
  byKey,
  byEndUser,
  timeWindow,
}: {
  byKey: FragmentOf<typeof SpendingBreakdownFragment>;
  byEndUser: FragmentOf<typeof SpendingBreakdownFragment>;
  timeWindow: OverviewWindow;
}) {
  const logsOf = (filters: LogFilters) =>
    `/logs${logsSearch({ filters: { ...filters, range: timeWindow }, back: [] })}`;
  return (
    <div className="spending-panels">
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
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{column}</th>
                <th scope="col" className="numeric">
                  Requests
                </th>
                <th scope="col" className="numeric">
                  Cost
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
                    <td data-label="Cost" className="numeric">
                      {formatUsd(share.costUsd)}
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
                  <td data-label="Cost" className="numeric">
                    {formatUsd(other.costUsd)}
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
